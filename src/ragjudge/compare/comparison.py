"""`compare_with_baseline`: one report against the baseline's, for `ragjudge run` and `ragjudge merge`.

Comparability is checked, never assumed: a different judge fingerprint makes judge-based deltas
not comparable (shown with the reason, never gated); a changed case set is compared on the
intersection, with the new and removed cases listed; different case or suite rules and an old
baseline are notices naming what differs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragjudge.compare.baseline import created_at, from_the_future, identity
from ragjudge.compare.deltas import Pair, Settings, all_deltas
from ragjudge.compare.outcome import CHANGES, baseline_view, change_of
from ragjudge.compare.pairwise_summary import summary as pairwise_summary
from ragjudge.compare.regression import decide, figure_of, regression_rules, verdict_with
from ragjudge.config.model import Config
from ragjudge.report.comparison_block import ComparisonBlock, RegressionBlock
from ragjudge.report.figures import age_words, label
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import JudgeFingerprintBlock

_FINGERPRINT_WORDS = {"prompt_hash": "the judge prompts changed", "base_url_host": "base_url host"}


def judge_difference(now_block: JudgeFingerprintBlock | None, base_block: JudgeFingerprintBlock | None) -> str | None:
    """Why judge-based figures cannot be compared, or None when the judges are the same."""
    # Compared as written: the offline and the model judge record different keys.
    base = base_block.model_dump() if base_block is not None else {}
    now = now_block.model_dump() if now_block is not None else {}
    if not base:
        return "the baseline records no judge fingerprint (written by a ragjudge without provenance)"
    if not now:
        return "this report records no judge fingerprint"
    changes = []
    for key in sorted(set(now) | set(base)):
        if now.get(key) == base.get(key):
            continue
        if key == "prompt_hash":
            changes.append(_FINGERPRINT_WORDS[key])
        else:
            changes.append(f"{_FINGERPRINT_WORDS.get(key, key)} {base.get(key)} -> {now.get(key)}")
    return "the judge differs from the baseline's: " + ", ".join(changes) if changes else None


def _listed(ids: list[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def compare_with_baseline(
    report: Report,
    baseline: Report,
    config: Config,
    *,
    baseline_path: Path | None = None,
    now: datetime | None = None,
) -> Report:
    """The report with `comparison`, each case's `change` and `baseline`, and the verdict after the
    regression rules (`gate.regression`, default `newly_failing <= 0`). Pure: reads nothing but its
    arguments, so any two reports (e.g. merged shards) compare the same way.
    """
    moment = now or created_at(report) or datetime.now(UTC)
    block = identity(baseline, baseline_path, moment)
    name = label(block)
    base_by_id = {c.id: c for c in baseline.cases}
    now_ids = {c.id for c in report.cases}
    cases = []
    pairs: list[Pair] = []
    for case in report.cases:
        base = base_by_id.get(case.id)
        change = change_of(case, base)
        update: dict[str, Any] = {"change": change, "baseline": None}
        if base is not None:
            update["baseline"] = baseline_view(base, case, change)
            pairs.append((case, base))
        cases.append(case.model_copy(update=update))
    new_cases = [c.id for c in report.cases if c.id not in base_by_id]
    removed = [c.id for c in baseline.cases if c.id not in now_ids]
    counts = dict.fromkeys(CHANGES, 0)
    for case in cases:
        counts[str(case.change)] += 1
    counts["removed"] = len(removed)

    notices: list[str] = []
    age = block.age_days
    max_age = config.baseline.max_age_days
    dated = created_at(baseline)
    if from_the_future(dated, moment):
        assert dated is not None
        notices.append(
            f"the baseline ({name}) is dated {dated.isoformat(timespec='seconds')}, after this report "
            f"({moment.isoformat(timespec='seconds')}): its age is unknown (a runner's clock is wrong, or the file "
            "was edited)"
        )
    elif age is not None and age > max_age:
        notices.append(
            f"the baseline ({name}) is {age_words(age)}, older than baseline.max_age_days ({max_age:g}): "
            "changes merged since then count as this change's"
        )
    elif age is None:
        notices.append(f"the baseline ({name}) records no creation time: its age is unknown")
    if new_cases or removed:
        notices.append(
            f"the case set changed: compared on the {len(pairs)} case(s) in both reports"
            + (f"; new: {_listed(new_cases)}" if new_cases else "")
            + (f"; removed: {_listed(removed)}" if removed else "")
        )
    base_set, now_set = baseline.provenance.case_set_hash, report.provenance.case_set_hash
    if base_set and now_set and base_set != now_set and not (new_cases or removed):
        notices.append(
            f"the case set differs from the baseline's (case_set_hash {str(base_set)[:12]} -> {str(now_set)[:12]}) "
            "under the same ids: a question, an expected answer or a check changed, so a case may pass or fail "
            "because of its case, not the endpoint"
        )
    base_rules, now_rules = baseline.provenance.rules_hash, report.provenance.rules_hash
    if base_rules and now_rules and base_rules != now_rules:
        notices.append(
            "the case or suite rules differ from the baseline's: a case may pass or fail because of the rules, "
            "not the endpoint"
        )
    judge_reason = judge_difference(report.provenance.judge_fingerprint, baseline.provenance.judge_fingerprint)
    if judge_reason is not None:
        notices.append(f"judge-based deltas are not comparable and not gated: {judge_reason}")

    rules = regression_rules(config)
    settings = Settings(config.gate.significance, judge_reason is None, judge_reason)
    wanted = [f for f in (figure_of(r.metric) for r in rules) if f is not None]
    deltas = all_deltas(pairs, settings, wanted)
    regressions = [c.id for c in cases if c.change == "regression"]
    pairwise = pairwise_summary(cases)
    worse = [c.id for c in cases if c.pairwise is not None and c.pairwise.verdict == "worse"]
    outcomes = [decide(rule, regressions, deltas, config.gate.significance, pairwise, worse) for rule in rules]
    comparison = ComparisonBlock(
        baseline=block,
        judge_comparable=judge_reason is None,
        judge_not_comparable_reason=judge_reason,
        regressions=[
            RegressionBlock(
                id=c.id,
                category=c.category,
                failed_conditions=list(c.failed_conditions),
                k_of_n=c.k_of_n,
                baseline=c.baseline,
            )
            for c in cases
            if c.change == "regression"
        ],
        new_cases=new_cases,
        removed_cases=removed,
        counts=counts,
        deltas=deltas,
        rules=outcomes,
        pairwise=pairwise,
        baseline_rules=[r for r in baseline.rules if r.scope == "suite"],
        notices=notices,
        confidence=settings.confidence,
    )
    trust = report.judge_trust
    if trust is not None and pairwise is not None:
        # The judge's credentials carry what this comparison measured of it: how often the order swayed it.
        trust = trust.model_copy(update={"position_consistency": pairwise.position_consistency})
    return report.model_copy(
        update={
            "cases": cases,
            "comparison": comparison,
            "verdict": verdict_with(report.rules, outcomes, report.verdict),
            "judge_trust": trust,
        }
    )
