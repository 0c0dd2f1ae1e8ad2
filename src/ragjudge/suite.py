"""Suite metrics over all cases, the suite rules, and the verdict."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

from ragjudge.metrics import percentile, rejection_correct
from ragjudge.rules import Missing, Rule
from ragjudge.scoring import CaseResult

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


def first_latency(result: CaseResult) -> float | None:
    """The latency of a case's first run: repeats go only to failing cases and would bias percentiles."""
    if result.runs:
        return result.runs[0].latency_ms
    return result.endpoint.trace.latency_ms if result.endpoint.trace is not None else None


def _usage(results: Sequence[CaseResult]) -> tuple[list[float], list[float], int, int, int]:
    """Endpoint costs, judge costs, judge calls, cache hits and tokens, over every run of every case."""
    costs: list[float] = []
    judge_costs: list[float] = []
    calls = hits = tokens = 0
    for r in results:
        if r.runs:
            costs += [run.endpoint_cost_usd for run in r.runs if run.endpoint_cost_usd is not None]
            judge_costs += [run.judge_cost_usd for run in r.runs if run.judge_cost_usd]
            calls += sum(run.judge_calls for run in r.runs)
            hits += sum(run.judge_cache_hits for run in r.runs)
            tokens += sum(run.judge_tokens for run in r.runs)
            continue
        trace, judgement = r.endpoint.trace, r.judgement
        if trace is not None and trace.cost_usd is not None:
            costs.append(trace.cost_usd)
        if trace is not None and judgement is not None:
            if judgement.cost_usd:
                judge_costs.append(judgement.cost_usd)
            calls += judgement.calls
            hits += judgement.cache_hits
            tokens += judgement.tokens
    return costs, judge_costs, calls, hits, tokens


def suite_metrics(results: Sequence[CaseResult]) -> dict[str, float | int | None]:
    """Aggregates, unrounded (rules compare these); percentiles are nearest-rank over first runs that got a
    reply (repeats would bias them); usage counts every run."""
    n = len(results)
    passed = sum(r.status == "pass" for r in results)
    failed = sum(r.status == "fail" for r in results)
    errored = sum(r.status == "error" for r in results)
    traces = [(r, r.endpoint.trace) for r in results if r.endpoint.trace is not None]
    latencies = [lat for lat in (first_latency(r) for r in results) if lat is not None]
    judged = [r.judgement for r, _ in traces if r.judgement is not None]
    faith = [j.faithfulness for j in judged if j.faithfulness is not None]
    costs, judge_costs, calls, hits, tokens = _usage(results)
    correct = [rejection_correct(r.case, t) for r, t in traces]
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
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
        "judge_error_rate": sum(1 for j in judged if j.unscored) / len(judged) if judged else None,
        "endpoint_error_rate": (n - len(traces)) / n if n else None,
        "cost_usd": round(sum(costs) + sum(judge_costs), 6) if costs or judge_costs else None,
        "judge_calls": calls,
        "judge_cache_hits": hits,
        "judge_tokens": tokens,
        "judge_cost_usd": round(sum(judge_costs), 6),
        "flaky_cases": sum(r.flaky for r in results),
    }


_ROUNDED_FOR_DISPLAY = ("p50_latency_ms", "p95_latency_ms")


def shown(metrics: dict[str, float | int | None]) -> dict[str, float | int | None]:
    """The metrics as the report shows them: latencies to 0.1 ms."""
    return {k: round(v, 1) if k in _ROUNDED_FOR_DISPLAY and v is not None else v for k, v in metrics.items()}


def _case_rule_outcome(rule: Rule, results: Sequence[CaseResult]) -> RuleOutcome:
    # A broken rule reads `metric VALUE OP threshold` (Rule.failure); `metric unscored: ...` is an error, not a failure.
    failed = re.compile(rf"^{re.escape(rule.metric)} [-\d]")
    failing = [r.case.id for r in results if any(failed.match(c) for c in r.failed_conditions)]
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
    exact = suite_metrics(results)
    outcomes = [_case_rule_outcome(r, results) for r in case_rules]
    # Rules compare the exact value: a p95 of 3000.04 ms fails "<= 3000" although the report shows 3000.0.
    outcomes += [_suite_rule_outcome(r, exact) for r in suite_rules]
    metrics = shown(exact)
    verdict: Verdict
    if not results or all(r.status == "error" for r in results):
        verdict = "error"
    elif any(o.passed is False for o in outcomes if o.rule.scope == "suite"):
        verdict = "fail"
    else:
        verdict = "pass"
    return SuiteResult(metrics, tuple(outcomes), verdict)
