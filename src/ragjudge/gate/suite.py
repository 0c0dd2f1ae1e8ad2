"""Suite metrics over all cases, the suite rules, and the verdict.

`run` and `merge` both come here: each case, a live result or a shard's saved case block, is first read
into a `SuiteCase` (what it holds, nothing worked out), and every figure is made from those.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, Literal

from ragjudge.cases.scope import expects_answer
from ragjudge.gate.error_budget import DEFAULT_MAX_ERROR_RATE, judge_bugs, over_budget
from ragjudge.gate.retrieval import rejection_correct
from ragjudge.gate.scoring import CaseResult, RunRecord, Status
from ragjudge.judge.interface import Judgement
from ragjudge.judge.reference import ReferencePoint, answer_correctness, contradictions
from ragjudge.report.case_block import CaseBlock, TurnBlock
from ragjudge.report.judge_block import JudgeBlock
from ragjudge.rules import Missing, Rule
from ragjudge.stats.percentile import percentile_or_none

Verdict = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class RuleOutcome:
    """One rule's result for the report: `passed` is None when it did not apply."""

    rule: Rule
    value: float | None
    passed: bool | None
    reason: str


@dataclass(frozen=True)
class SuiteResult:
    metrics: dict[str, float | int | None]
    rules: tuple[RuleOutcome, ...]
    verdict: Verdict
    error_reason: str | None = None
    """Why the verdict is `error` (the judge failed inside ragjudge, `gate.max_error_rate` exceeded, every case
    errored); None otherwise."""


@dataclass(frozen=True)
class Reply:
    """What the suite reads of the reply a case's result stands on."""

    refused: bool
    latency_ms: float
    cost_usd: float | None
    """What the endpoint said the call cost; None when it said nothing."""
    ttft_ms: float | None = None
    """A streamed reply's time to the first token; None for one JSON body."""


@dataclass(frozen=True)
class Judged:
    """What the suite reads of a case's judgement."""

    faithfulness: float | None
    unscored: bool
    """Some judgement could not be made: a judge error, counted by `judge_error_rate`."""
    cost_usd: float
    calls: int
    cache_hits: int
    tokens: int
    answer_correctness: float | None = None
    """Judged against the reference: (covered + half of partial) / points; None when not judged."""
    contradictions: int | None = None
    """Reference points the answer contradicts; None when the reference was not judged."""
    criteria: Mapping[str, float] = field(default_factory=dict)
    """The team's criteria, 1 to 5, by name."""

    @classmethod
    def of(cls, judgement: Judgement) -> Judged:
        points = judgement.reference_points
        return cls(
            faithfulness=judgement.faithfulness,
            unscored=bool(judgement.unscored),
            cost_usd=judgement.cost_usd,
            calls=judgement.calls,
            cache_hits=judgement.cache_hits,
            tokens=judgement.tokens,
            answer_correctness=answer_correctness(points) if points is not None else None,
            contradictions=contradictions(points) if points is not None else None,
            criteria=dict(judgement.criteria),
        )

    @classmethod
    def of_saved(cls, judge: JudgeBlock) -> Judged:
        """Read back from a report's `judge` block; a criterion whose score is not a number is left out."""
        points = None
        if judge.reference_points is not None:
            points = tuple(ReferencePoint(p.point, p.verdict, "", "") for p in judge.reference_points)
        return cls(
            faithfulness=judge.faithfulness,
            unscored=bool(judge.unscored),
            cost_usd=judge.cost_usd,
            calls=judge.calls,
            cache_hits=judge.cache_hits,
            tokens=judge.tokens,
            answer_correctness=answer_correctness(points) if points is not None else None,
            contradictions=contradictions(points) if points is not None else None,
            criteria={name: float(c.score) for name, c in judge.criteria.items() if c.score is not None},
        )


@dataclass(frozen=True)
class SuiteCase:
    """One case as the suite reads it, from a live result (`run`) or a saved case block (`merge`).

    Both give only what they hold, unworked: every figure made of these values (whether the decline was
    right, which latency the percentiles use, what the runs cost) is made below, once, for both.
    """

    id: str
    status: Status
    failed_conditions: tuple[str, ...]
    should_answer: bool
    reply: Reply | None
    """None when the case got no usable reply."""
    judged: Judged | None
    runs: tuple[RunRecord, ...] = ()
    """Every run when the case was repeated; empty otherwise."""
    flaky: bool = False
    turns: tuple[SuiteCase, ...] = ()
    """A conversation's asked turns, each read as a case: the suite's figures count turns."""

    @classmethod
    def of_result(cls, result: CaseResult) -> SuiteCase:
        trace = result.endpoint.trace
        if result.turns:
            return cls(
                id=result.case.id,
                status=result.status,
                failed_conditions=tuple(result.failed_conditions),
                should_answer=result.case.should_answer,
                reply=None,
                judged=None,
                runs=result.runs,
                flaky=result.flaky,
                turns=tuple(cls.of_result(t) for t in result.turns),
            )
        return cls(
            id=result.case.id,
            status=result.status,
            failed_conditions=tuple(result.failed_conditions),
            should_answer=result.case.should_answer,
            reply=Reply(trace.refused, trace.latency_ms, trace.cost_usd, trace.ttft_ms) if trace is not None else None,
            judged=Judged.of(result.judgement) if result.judgement is not None else None,
            runs=result.runs,
            flaky=result.flaky,
        )

    @classmethod
    def of_block(cls, block: CaseBlock | TurnBlock) -> SuiteCase:
        """A saved case (or turn): its reply's latency and cost as the report keeps them (latency to 0.1 ms)."""
        trace = block.trace
        reply = None
        if trace.latency_ms is not None and trace.refused is not None:
            reply = Reply(trace.refused, trace.latency_ms, trace.cost_usd, trace.ttft_ms)
        if isinstance(block, TurnBlock):
            status: Status = "error" if block.status == "not evaluated" else block.status
            runs: tuple[RunRecord, ...] = ()
            turns: tuple[SuiteCase, ...] = ()
            flaky, ident = False, f"{block.turn}"
        else:
            status, ident, flaky = block.status, block.id, block.flaky
            runs = tuple(RunRecord.of_saved(run) for run in block.runs)
            turns = tuple(cls.of_block(t) for t in block.turns if t.status != "not evaluated")
        return cls(
            id=ident,
            status=status,
            failed_conditions=tuple(block.failed_conditions),
            # Reports written before should_answer was recorded leave it to the category, as case files do.
            should_answer=expects_answer(block.should_answer, block.category),
            reply=None if turns else reply,
            # `judged: false` marks a case the judge never saw (reports before it: an empty block).
            judged=Judged.of_saved(block.judge) if block.judge.was_judged() and not turns else None,
            runs=runs,
            flaky=flaky,
            turns=turns,
        )


@dataclass(frozen=True)
class CaseFigures:
    """One case's share of the suite figures, worked out from its `SuiteCase` by `figures_of`."""

    replied: bool
    latency_ms: float | None
    """The first run's latency: repeats go only to failing cases and would bias percentiles."""
    rejection_correct: bool | None
    judged: bool
    faithfulness: float | None
    unscored: bool
    cost_usd: float | None
    """The endpoint's reported cost over every run; None when it reported none."""
    judge_cost_usd: float
    judge_calls: int
    judge_cache_hits: int
    judge_tokens: int
    answer_correctness: float | None = None
    contradictions: int | None = None
    criteria: Mapping[str, float] = field(default_factory=dict)
    ttft_ms: float | None = None
    """The reply's time to the first token, when it was streamed."""


Usage = tuple[float | None, float, int, int, int]
"""(endpoint cost, judge cost, judge calls, cache hits, judge tokens): None when the endpoint reported no cost."""


def _runs_usage(runs: Sequence[RunRecord]) -> Usage:
    """What every run of a repeated case (or conversation) used."""
    costs = [run.endpoint_cost_usd for run in runs if run.endpoint_cost_usd is not None]
    return (
        sum(costs) if costs else None,
        sum(run.judge_cost_usd for run in runs),
        sum(run.judge_calls for run in runs),
        sum(run.judge_cache_hits for run in runs),
        sum(run.judge_tokens for run in runs),
    )


def _usage(case: SuiteCase, parts: Sequence[CaseFigures]) -> Usage:
    """A case's usage from its figures (`parts`: its own, or a conversation's turns'); a repeated conversation's
    from its runs (its turns are the kept run's only)."""
    if case.turns and case.runs:
        return _runs_usage(case.runs)
    costs = [f.cost_usd for f in parts if f.cost_usd is not None]
    return (
        sum(costs) if costs else None,
        sum(f.judge_cost_usd for f in parts),
        sum(f.judge_calls for f in parts),
        sum(f.judge_cache_hits for f in parts),
        sum(f.judge_tokens for f in parts),
    )


def figures_of(case: SuiteCase) -> CaseFigures:
    reply = case.reply
    # A judgement counts only beside the reply it judged.
    judged = case.judged if reply is not None else None
    if case.runs:  # usage counts every run
        cost, judge_cost, calls, hits, tokens = _runs_usage(case.runs)
        first_latency = case.runs[0].latency_ms
    else:
        cost = reply.cost_usd if reply is not None else None
        judge_cost = judged.cost_usd if judged is not None else 0.0
        calls = judged.calls if judged is not None else 0
        hits = judged.cache_hits if judged is not None else 0
        tokens = judged.tokens if judged is not None else 0
        first_latency = reply.latency_ms if reply is not None else None
    return CaseFigures(
        replied=reply is not None,
        latency_ms=first_latency,
        rejection_correct=rejection_correct(case, reply) if reply is not None else None,
        judged=judged is not None,
        faithfulness=judged.faithfulness if judged is not None else None,
        unscored=judged.unscored if judged is not None else False,
        cost_usd=cost,
        judge_cost_usd=judge_cost,
        judge_calls=calls,
        judge_cache_hits=hits,
        judge_tokens=tokens,
        answer_correctness=judged.answer_correctness if judged is not None else None,
        contradictions=judged.contradictions if judged is not None else None,
        criteria=judged.criteria if judged is not None else {},
        ttft_ms=reply.ttft_ms if reply is not None else None,
    )


def suite_metrics(results: Sequence[CaseResult]) -> dict[str, float | int | None]:
    return case_metrics([SuiteCase.of_result(r) for r in results])


def case_metrics(cases: Sequence[SuiteCase]) -> dict[str, float | int | None]:
    """Aggregates, unrounded (rules compare these); percentiles are nearest-rank over first runs that got a
    reply (repeats would bias them); usage counts every run."""
    n = len(cases)
    passed = sum(c.status == "pass" for c in cases)
    failed = sum(c.status == "fail" for c in cases)
    errored = sum(c.status == "error" for c in cases)
    # Reply figures count every single case and every asked turn of a conversation; pass counts count cases,
    # and usage is summed per case.
    by_case = [[figures_of(u) for u in (c.turns or (c,))] for c in cases]
    figures = [f for parts in by_case for f in parts]
    usage = [_usage(c, parts) for c, parts in zip(cases, by_case, strict=True)]
    asked = len(figures)
    replied = [f for f in figures if f.replied]
    latencies = [f.latency_ms for f in figures if f.latency_ms is not None]
    judged = [f for f in replied if f.judged]
    faith = [f.faithfulness for f in judged if f.faithfulness is not None]
    costs = [u[0] for u in usage if u[0] is not None]
    judge_costs = [u[1] for u in usage if u[1]]
    correct = [f.rejection_correct for f in replied if f.rejection_correct is not None]
    p50, p95 = percentile_or_none(latencies, 50), percentile_or_none(latencies, 95)
    ttfts = [f.ttft_ms for f in figures if f.ttft_ms is not None]
    correctness = [f.answer_correctness for f in judged if f.answer_correctness is not None]
    contradicted = [f.contradictions for f in judged if f.contradictions is not None]
    criteria: dict[str, list[float]] = {}
    for f in judged:
        for name, score in f.criteria.items():
            criteria.setdefault(name, []).append(score)
    return {
        "cases": n,
        "passed": passed,
        "failed": failed,
        "errored": errored,
        "pass_rate": passed / n if n else None,
        "faithfulness": fmean(faith) if faith else None,
        "rejection_accuracy": sum(correct) / len(correct) if correct else None,
        "p50_latency_ms": p50,
        "p95_latency_ms": p95,
        "p50_ttft_ms": percentile_or_none(ttfts, 50),
        "p95_ttft_ms": percentile_or_none(ttfts, 95),
        "judge_error_rate": sum(1 for f in judged if f.unscored) / len(judged) if judged else None,
        "endpoint_error_rate": (asked - len(replied)) / asked if asked else None,
        "cost_usd": round(sum(costs) + sum(judge_costs), 6) if costs or judge_costs else None,
        "judge_calls": sum(u[2] for u in usage),
        "judge_cache_hits": sum(u[3] for u in usage),
        "judge_tokens": sum(u[4] for u in usage),
        "judge_cost_usd": round(sum(judge_costs), 6),
        "flaky_cases": sum(c.flaky for c in cases),
        "answer_correctness": fmean(correctness) if correctness else None,
        "reference_contradictions": sum(contradicted) if contradicted else None,
        **{f"criteria.{name}_mean": fmean(scores) for name, scores in sorted(criteria.items())},
    }


@dataclass(frozen=True)
class RunUsage:
    """Judge calls made for the run as a whole rather than for one case (`--bias-check`)."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: RunUsage) -> RunUsage:
        return RunUsage(self.calls + other.calls, self.tokens + other.tokens, self.cost_usd + other.cost_usd)


def with_run_usage(metrics: Mapping[str, Any], usage: RunUsage) -> dict[str, Any]:
    """The suite's usage with the run's own calls added: they are judge calls like any other, in the run's
    usage and cost (`run` adds its bias check's, `merge` every shard's)."""
    totals = dict(metrics)
    totals["judge_calls"] = totals.get("judge_calls", 0) + usage.calls
    totals["judge_tokens"] = totals.get("judge_tokens", 0) + usage.tokens
    totals["judge_cost_usd"] = round(totals.get("judge_cost_usd", 0.0) + usage.cost_usd, 6)
    if usage.cost_usd:
        totals["cost_usd"] = round((totals.get("cost_usd") or 0.0) + usage.cost_usd, 6)
    return totals


_ROUNDED_FOR_DISPLAY = ("p50_latency_ms", "p95_latency_ms", "p50_ttft_ms", "p95_ttft_ms")


def shown(metrics: dict[str, float | int | None]) -> dict[str, float | int | None]:
    """The metrics as the report shows them: latencies to 0.1 ms."""
    return {k: round(v, 1) if k in _ROUNDED_FOR_DISPLAY and v is not None else v for k, v in metrics.items()}


def _case_rule_outcome(rule: Rule, results: Sequence[SuiteCase]) -> RuleOutcome:
    # A broken rule reads `metric VALUE OP threshold` (Rule.failure); `metric unscored: ...` is an error, not a failure.
    failed = re.compile(rf"^(?:turn \d+: )?{re.escape(rule.metric)} [-\d]")
    failing = [r.id for r in results if any(failed.match(c) for c in r.failed_conditions)]
    if failing:
        shown = ", ".join(failing[:5]) + (f" and {len(failing) - 5} more" if len(failing) > 5 else "")
        reason = f"{len(failing)} case(s) failed {rule.metric} {rule.op} {rule.threshold:g}: {shown}"
    else:
        reason = f"every evaluated case met {rule.metric} {rule.op} {rule.threshold:g}"
    return RuleOutcome(rule, float(len(failing)), not failing, reason)


def _suite_rule_outcome(rule: Rule, metrics: dict[str, float | int | None]) -> RuleOutcome:
    value = metrics.get(rule.metric)
    if value is None:
        missing = Missing(f"{rule.metric} has no value: no case it applies to got a reply")
        if rule.metric == "faithfulness":
            missing = Missing("faithfulness not applicable: no answer made a claim")
        # A rule that cannot be checked never passes silently: it fails, with the reason.
        return RuleOutcome(rule, None, False, missing.reason)
    ok = rule.holds(float(value))
    reason = f"{rule.metric} {value:.4g} {rule.op} {rule.threshold:g}" if ok else rule.failure(float(value))
    display = shown({rule.metric: value})[rule.metric]
    return RuleOutcome(rule, float(display if display is not None else value), ok, reason)


def evaluate_suite(
    results: Sequence[CaseResult],
    case_rules: Sequence[Rule],
    suite_rules: Sequence[Rule],
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> SuiteResult:
    return evaluate_cases([SuiteCase.of_result(r) for r in results], case_rules, suite_rules, max_error_rate)


def evaluate_cases(
    cases: Sequence[SuiteCase],
    case_rules: Sequence[Rule],
    suite_rules: Sequence[Rule],
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> SuiteResult:
    """The suite metrics, every rule's outcome and the verdict: the one place the rules are applied, for `run`
    (its live results) and `merge` (the shards' saved cases) alike."""
    exact = case_metrics(cases)
    outcomes = [_case_rule_outcome(r, cases) for r in case_rules]
    # Rules compare the exact value: a p95 of 3000.04 ms fails "<= 3000" although the report shows 3000.0.
    outcomes += [_suite_rule_outcome(r, exact) for r in suite_rules]
    metrics = shown(exact)
    every_run = [(c.id, (*c.failed_conditions, *(x for run in c.runs for x in run.failed_conditions))) for c in cases]
    error_reason = judge_bugs(every_run) or over_budget(
        [(c.status, c.failed_conditions) for c in cases], max_error_rate
    )
    verdict: Verdict
    if not cases or error_reason is not None:
        verdict = "error"
    elif any(o.passed is False for o in outcomes if o.rule.scope == "suite"):
        verdict = "fail"
    else:
        verdict = "pass"
    return SuiteResult(metrics, tuple(outcomes), verdict, error_reason)
