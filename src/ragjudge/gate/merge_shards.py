"""`ragjudge merge`: one report from the reports of a sharded run.

The suite is rebuilt from the union of the shards' saved cases by the code `run` builds it with: each
case block is read into a `suite.SuiteCase`, as `run` reads each live result, and `suite.evaluate_cases`
makes every figure, applies the rules once, to the whole set, and gives the verdict. Percentiles come from
the raw latencies of every case, never from averages of the shards' percentiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragjudge.errors import CaseFileError
from ragjudge.gate.error_budget import DEFAULT_MAX_ERROR_RATE
from ragjudge.gate.judge_runs import flip_figures, trust_flips, vote_rows
from ragjudge.gate.reporting import rule_blocks
from ragjudge.gate.suite import evaluate_cases
from ragjudge.gate.suite_case import SuiteCase
from ragjudge.gate.suite_figures import RunUsage, with_run_usage
from ragjudge.metrics.names import COST_USD
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import JudgeFingerprintBlock, ProvenanceBlock
from ragjudge.report.suite_block import RuleBlock, SuiteBlock
from ragjudge.rules import Rule


@dataclass(frozen=True)
class ShardReport:
    """A report to merge and the file it came from (for messages)."""

    path: Path
    report: Report


def merge_reports(parts: Sequence[ShardReport], max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> Report:
    """The whole run's report; raises CaseFileError (exit 2) naming the file when the parts do not fit."""
    if not parts:
        raise CaseFileError("no reports to merge", tip="pass every shard's report: ragjudge merge shard-*.json")
    _check_shards(parts)
    rules = _common_rules(parts)
    cases = _union(parts)
    case_rules = [r for r in rules if r.scope == "case"]
    suite_rules = [r for r in rules if r.scope == "suite"]
    gating = [SuiteCase.of_block(c) for c in cases if c.review != "pending"]  # pending review: reported, not counted
    result = evaluate_cases(gating, case_rules, suite_rules, max_error_rate, len(cases) - len(gating))
    metrics = with_run_usage(result.metrics, sum((_run_usage(p.report) for p in parts), RunUsage()))
    warnings = _warnings(parts)
    first = parts[0].report
    # The judge's noise over the whole run: each shard rejudged its own cases, and kept how they went.
    flips = flip_figures((c.judge_runs.consistency, vote_rows(c.judge_runs.votes)) for c in cases if c.judge_runs)
    trust = first.judge_trust
    if trust is not None:
        figures = trust_flips(flips)
        trust = trust.model_copy(
            update={k: figures.get(k) for k in ("judge_flip_rate", "judge_flip_rate_interval", "judge_flip_sample")}
        )
    return Report(
        verdict=result.verdict,
        suite=SuiteBlock.model_validate({**metrics, **(flips or {})}),
        rules=rule_blocks(result.rules),
        cases=cases,
        judge_info=first.judge_info,
        judge_trust=trust,
        warnings=[*([result.error_reason] if result.error_reason else []), *warnings],
        error_reason=result.error_reason,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        # The shards agree on case set, rules, judge and commit (`_check_agreement`): the first one's stands for all.
        provenance=first.provenance,
    )


def shard_name(part: ShardReport) -> str:
    shard = part.report.shard
    return f"shard {shard.index}/{shard.count}" if shard is not None else str(part.path)


def _check_shards(parts: Sequence[ShardReport]) -> None:
    for part in parts:
        if part.report.interrupted is not None:
            raise CaseFileError(
                f"{part.path}: this run was interrupted ({part.report.interrupted.reason})",
                tip="rerun that shard to the end before merging: a merge of part of the cases would gate on them",
            )
    _check_agreement(parts)
    sharded = [p for p in parts if p.report.shard is not None]
    if not sharded:
        return
    if len(sharded) != len(parts):
        plain = next(p for p in parts if p.report.shard is None)
        raise CaseFileError(
            f"{plain.path}: not a shard's report, but the other reports are shards",
            tip="merge the reports of one `run --shard i/n` matrix",
        )
    count = sharded[0].report.shard.count if sharded[0].report.shard else 0
    seen: dict[int, Path] = {}
    for part in parts:
        shard = part.report.shard
        assert shard is not None
        if shard.count != count:
            raise CaseFileError(
                f"{part.path}: shard {shard.index}/{shard.count}, but {sharded[0].path} is one of {count}",
                tip="merge the reports of one matrix, all run with the same n",
            )
        if shard.index in seen:
            raise CaseFileError(f"{part.path}: shard {shard.index}/{count} is also {seen[shard.index]}")
        seen[shard.index] = part.path
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise CaseFileError(
            f"shard(s) {', '.join(missing)} of {count} missing: got {len(parts)} report(s)",
            tip="pass every shard's report; a shard whose job failed must be rerun before merging",
        )
    totals = {p.report.shard.total_cases for p in parts if p.report.shard is not None}
    got = sum(len(p.report.cases) for p in parts)
    if len(totals) != 1 or got != next(iter(totals)):
        raise CaseFileError(
            f"the shards ran different case sets: {got} cases in the reports, totals {sorted(totals)}",
            tip="run every shard on the same commit and case files",
        )


AGREED = ("case_set_hash", "rules_hash", "judge_fingerprint", "git_commit")
"""What every part must record alike: the merged report claims one case set, rule set, judge and commit."""


def _check_agreement(parts: Sequence[ShardReport]) -> None:
    first = parts[0]
    for part in parts[1:]:
        for key in AGREED:
            mine, theirs = _agreed(part.report.provenance, key), _agreed(first.report.provenance, key)
            if mine != theirs:
                raise CaseFileError(
                    f"{part.path}: provenance.{key} differs from {first.path}'s ({_difference(theirs, mine)})",
                    tip="merge the reports of one run: every shard on the same commit, case files, rules and judge",
                )


def _agreed(provenance: ProvenanceBlock, key: str) -> Any:
    """What a shard records for `key`: the fingerprint as written (its keys differ by judge), else the text."""
    value = getattr(provenance, key)
    return value.model_dump() if isinstance(value, JudgeFingerprintBlock) else value


def _difference(first: Any, other: Any) -> str:
    if isinstance(first, dict) and isinstance(other, dict):
        keys = sorted(k for k in set(first) | set(other) if first.get(k) != other.get(k))
        return ", ".join(f"{k} {_short(first.get(k))} -> {_short(other.get(k))}" for k in keys[:5])
    return f"{_short(first)} -> {_short(other)}"


def _short(value: Any) -> str:
    text = "none" if value is None else str(value)
    return text[:12] + "…" if len(text) > 13 else text


def _warnings(parts: Sequence[ShardReport]) -> list[str]:
    """Every part's warnings once, in order, without the per-shard "this shard only" notes and error budgets (the
    merged set has its own)."""
    seen: dict[str, None] = {}
    for part in parts:
        for warning in part.report.warnings:
            if not warning.startswith("shard ") and warning != part.report.error_reason:
                seen.setdefault(warning, None)
    return list(seen)


def _rule_key(rule: RuleBlock) -> tuple[str, str, str, float]:
    return (rule.scope, rule.metric, rule.op, rule.threshold)


def _common_rules(parts: Sequence[ShardReport]) -> list[Rule]:
    first = parts[0].report.rules
    for part in parts[1:]:
        if [_rule_key(r) for r in part.report.rules] != [_rule_key(r) for r in first]:
            raise CaseFileError(
                f"{part.path}: run with other rules than {parts[0].path}",
                tip="run every shard with the same ragjudge.yml",
            )
    return [Rule(scope=r.scope, metric=r.metric, op=r.op, threshold=r.threshold) for r in first]


def _union(parts: Sequence[ShardReport]) -> list[CaseBlock]:
    owner: dict[str, Path] = {}
    placed: list[tuple[int, int, CaseBlock]] = []
    for n, part in enumerate(parts):
        shard = part.report.shard
        positions = shard.positions if shard is not None else []
        for k, case in enumerate(part.report.cases):
            if case.id in owner:
                raise CaseFileError(
                    f"{part.path}: case {case.id!r} is also in {owner[case.id]}",
                    tip="merge the reports of disjoint case sets (one per shard)",
                )
            owner[case.id] = part.path
            # The whole set's order when the shards recorded it; else the order the reports were given in.
            where = positions[k] if len(positions) == len(part.report.cases) else -1
            placed.append((where, n * 1_000_000 + k, case))
    placed.sort(key=lambda item: (item[0], item[1]))
    return [case for _, _, case in placed]


def _run_usage(report: Report) -> RunUsage:
    """The calls a shard made for its run as a whole: its bias check's, which `run` adds to the suite's usage."""
    bias = (report.suite.model_extra or {}).get("position_bias")
    if not isinstance(bias, dict):
        return RunUsage()
    return RunUsage(int(bias.get("calls") or 0), int(bias.get("tokens") or 0), float(bias.get(COST_USD) or 0.0))
