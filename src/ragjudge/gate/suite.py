"""Suite metrics over all cases, the suite rules, and the verdict."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

from ragjudge.gate.retrieval import rejection_correct
from ragjudge.gate.scoring import CaseResult
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


@dataclass(frozen=True)
class CaseFigures:
    """What the suite needs of one case: built from a CaseResult by `run`, from a report's case by `merge`,
    so both compute the suite the same way (percentiles from raw latencies, never averages of averages)."""

    id: str
    status: str
    failed_conditions: tuple[str, ...]
    replied: bool
    """The case's (final) run got a usable reply."""
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
    flaky: bool = False


def first_latency(result: CaseResult) -> float | None:
    """The latency of a case's first run: repeats go only to failing cases and would bias percentiles."""
    if result.runs:
        return result.runs[0].latency_ms
    return result.endpoint.trace.latency_ms if result.endpoint.trace is not None else None


def figures_of(result: CaseResult) -> CaseFigures:
    trace, judgement = result.endpoint.trace, result.judgement
    judged = trace is not None and judgement is not None
    if result.runs:  # usage counts every run
        run_costs = [run.endpoint_cost_usd for run in result.runs if run.endpoint_cost_usd is not None]
        cost = sum(run_costs) if run_costs else None
        judge_cost = sum(run.judge_cost_usd for run in result.runs)
        calls = sum(run.judge_calls for run in result.runs)
        hits = sum(run.judge_cache_hits for run in result.runs)
        tokens = sum(run.judge_tokens for run in result.runs)
    else:
        cost = trace.cost_usd if trace is not None else None
        judge_cost = judgement.cost_usd if judged and judgement is not None else 0.0
        calls = judgement.calls if judged and judgement is not None else 0
        hits = judgement.cache_hits if judged and judgement is not None else 0
        tokens = judgement.tokens if judged and judgement is not None else 0
    return CaseFigures(
        id=result.case.id,
        status=result.status,
        failed_conditions=tuple(result.failed_conditions),
        replied=trace is not None,
        latency_ms=first_latency(result),
        rejection_correct=rejection_correct(result.case, trace) if trace is not None else None,
        judged=judged,
        faithfulness=judgement.faithfulness if judged and judgement is not None else None,
        unscored=bool(judgement.unscored) if judged and judgement is not None else False,
        cost_usd=cost,
        judge_cost_usd=judge_cost,
        judge_calls=calls,
        judge_cache_hits=hits,
        judge_tokens=tokens,
        flaky=result.flaky,
    )


def suite_metrics(results: Sequence[CaseResult]) -> dict[str, float | int | None]:
    return figures_metrics([figures_of(r) for r in results])


def figures_metrics(cases: Sequence[CaseFigures]) -> dict[str, float | int | None]:
    """Aggregates, unrounded (rules compare these); percentiles are nearest-rank over first runs that got a
    reply (repeats would bias them); usage counts every run."""
    n = len(cases)
    passed = sum(c.status == "pass" for c in cases)
    failed = sum(c.status == "fail" for c in cases)
    errored = sum(c.status == "error" for c in cases)
    replied = [c for c in cases if c.replied]
    latencies = [c.latency_ms for c in cases if c.latency_ms is not None]
    judged = [c for c in replied if c.judged]
    faith = [c.faithfulness for c in judged if c.faithfulness is not None]
    costs = [c.cost_usd for c in cases if c.cost_usd is not None]
    judge_costs = [c.judge_cost_usd for c in cases if c.judge_cost_usd]
    correct = [c.rejection_correct for c in replied if c.rejection_correct is not None]
    p50, p95 = percentile_or_none(latencies, 50), percentile_or_none(latencies, 95)
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
        "judge_error_rate": sum(1 for c in judged if c.unscored) / len(judged) if judged else None,
        "endpoint_error_rate": (n - len(replied)) / n if n else None,
        "cost_usd": round(sum(costs) + sum(judge_costs), 6) if costs or judge_costs else None,
        "judge_calls": sum(c.judge_calls for c in cases),
        "judge_cache_hits": sum(c.judge_cache_hits for c in cases),
        "judge_tokens": sum(c.judge_tokens for c in cases),
        "judge_cost_usd": round(sum(judge_costs), 6),
        "flaky_cases": sum(c.flaky for c in cases),
    }


_ROUNDED_FOR_DISPLAY = ("p50_latency_ms", "p95_latency_ms")


def shown(metrics: dict[str, float | int | None]) -> dict[str, float | int | None]:
    """The metrics as the report shows them: latencies to 0.1 ms."""
    return {k: round(v, 1) if k in _ROUNDED_FOR_DISPLAY and v is not None else v for k, v in metrics.items()}


def _case_rule_outcome(rule: Rule, results: Sequence[CaseFigures]) -> RuleOutcome:
    # A broken rule reads `metric VALUE OP threshold` (Rule.failure); `metric unscored: ...` is an error, not a failure.
    failed = re.compile(rf"^{re.escape(rule.metric)} [-\d]")
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
    results: Sequence[CaseResult], case_rules: Sequence[Rule], suite_rules: Sequence[Rule]
) -> SuiteResult:
    return evaluate_figures([figures_of(r) for r in results], case_rules, suite_rules)


def evaluate_figures(
    cases: Sequence[CaseFigures], case_rules: Sequence[Rule], suite_rules: Sequence[Rule]
) -> SuiteResult:
    """The suite metrics, every rule's outcome and the verdict: the one place the rules are applied."""
    exact = figures_metrics(cases)
    outcomes = [_case_rule_outcome(r, cases) for r in case_rules]
    # Rules compare the exact value: a p95 of 3000.04 ms fails "<= 3000" although the report shows 3000.0.
    outcomes += [_suite_rule_outcome(r, exact) for r in suite_rules]
    metrics = shown(exact)
    verdict: Verdict
    if not cases or all(c.status == "error" for c in cases):
        verdict = "error"
    elif any(o.passed is False for o in outcomes if o.rule.scope == "suite"):
        verdict = "fail"
    else:
        verdict = "pass"
    return SuiteResult(metrics, tuple(outcomes), verdict)
