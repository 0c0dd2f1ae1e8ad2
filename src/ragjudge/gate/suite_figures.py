"""The suite's figures: each case's share (`figures_of`), and every suite metric made of them as its spec says."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from ragjudge.gate.retrieval import rejection_correct
from ragjudge.gate.scoring import CaseResult, RunRecord
from ragjudge.gate.suite_case import SuiteCase
from ragjudge.metrics.names import (
    ANSWER_CORRECTNESS,
    COST_USD,
    CRITERIA_PREFIX,
    ENDPOINT_ERROR_RATE,
    FAITHFULNESS,
    JUDGE_COST_USD,
    JUDGE_ERROR_RATE,
    LATENCY_MS,
    PASS_RATE,
    REFERENCE_CONTRADICTIONS,
    REJECTION_ACCURACY,
    TOOL_CONDITION_ACCURACY,
    TTFT_MS,
)
from ragjudge.metrics.registry import lookup, mean_of, of_scope
from ragjudge.metrics.spec import Mean, MetricSpec, Percentile, Total
from ragjudge.stats.percentile import percentile_or_none


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
    tools_held: str | None = None
    """Whether the case's tool conditions held (`held`, `failed`, `unknown`); None when it has none."""


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
        tools_held=case.tools_held,
    )


def suite_metrics(results: Sequence[CaseResult]) -> dict[str, float | int | None]:
    return case_metrics([SuiteCase.of_result(r) for r in results])


_PER_REPLY: dict[str, Callable[[CaseFigures], float | None]] = {
    LATENCY_MS: lambda f: f.latency_ms,
    TTFT_MS: lambda f: f.ttft_ms,
    FAITHFULNESS: lambda f: f.faithfulness,
    ANSWER_CORRECTNESS: lambda f: f.answer_correctness,
    REFERENCE_CONTRADICTIONS: lambda f: f.contradictions,
}
"""The case metrics a suite metric's `over_cases` may be made of, as one reply's figures hold them."""


@dataclass(frozen=True)
class _Suite:
    """What the suite's own computations read."""

    cases: Sequence[SuiteCase]
    figures: Sequence[CaseFigures]
    """Every single case and every asked turn of a conversation."""
    usage: Sequence[Usage]
    """Per case."""
    replied: Sequence[CaseFigures] = field(init=False)
    """The figures of the turns that got a reply."""
    judged: Sequence[CaseFigures] = field(init=False)
    """Of those, the ones the judge saw."""

    def __post_init__(self) -> None:
        # Worked out once: every rate and judged mean reads them.
        replied = [f for f in self.figures if f.replied]
        object.__setattr__(self, "replied", replied)
        object.__setattr__(self, "judged", [f for f in replied if f.judged])


def _pass_rate(s: _Suite) -> float | None:
    return sum(c.status == "pass" for c in s.cases) / len(s.cases) if s.cases else None


def _rejection_accuracy(s: _Suite) -> float | None:
    correct = [f.rejection_correct for f in s.replied if f.rejection_correct is not None]
    return sum(correct) / len(correct) if correct else None


def _tool_condition_accuracy(s: _Suite) -> float | None:
    known = [f.tools_held == "held" for f in s.figures if f.tools_held in ("held", "failed")]
    return sum(known) / len(known) if known else None


def _judge_error_rate(s: _Suite) -> float | None:
    judged = s.judged
    return sum(1 for f in judged if f.unscored) / len(judged) if judged else None


def _endpoint_error_rate(s: _Suite) -> float | None:
    return (len(s.figures) - len(s.replied)) / len(s.figures) if s.figures else None


def _judge_cost(s: _Suite) -> float | None:
    return round(sum(u[1] for u in s.usage if u[1]), 6)


def _cost(s: _Suite) -> float | None:
    costs = [u[0] for u in s.usage if u[0] is not None]
    judge_costs = [u[1] for u in s.usage if u[1]]
    return round(sum(costs) + sum(judge_costs), 6) if costs or judge_costs else None


_COMPUTED: dict[str, Callable[[_Suite], float | None]] = {
    PASS_RATE: _pass_rate,
    REJECTION_ACCURACY: _rejection_accuracy,
    TOOL_CONDITION_ACCURACY: _tool_condition_accuracy,
    JUDGE_ERROR_RATE: _judge_error_rate,
    ENDPOINT_ERROR_RATE: _endpoint_error_rate,
    COST_USD: _cost,
    JUDGE_COST_USD: _judge_cost,
}
"""The suite metrics whose spec says `Computed`: the suite works each out by its own function."""


def _aggregate(spec: MetricSpec, s: _Suite) -> float | None:
    how = spec.over_cases
    if isinstance(how, Percentile):
        get = _PER_REPLY[how.of]
        return percentile_or_none([v for f in s.figures if (v := get(f)) is not None], how.q)
    if isinstance(how, Mean | Total):
        get = _PER_REPLY[how.of]
        values = [v for f in s.judged if (v := get(f)) is not None]
        if not values:
            return None
        return fmean(values) if isinstance(how, Mean) else sum(values)
    return _COMPUTED[spec.name](s)


def case_metrics(cases: Sequence[SuiteCase]) -> dict[str, float | int | None]:
    """Aggregates, unrounded (rules compare these), each as its spec says (`metrics.registry`); percentiles are
    nearest-rank over first runs that got a reply (repeats would bias them); usage counts every run."""
    # Reply figures count every single case and every asked turn of a conversation; pass counts count cases,
    # and usage is summed per case.
    by_case = [[figures_of(u) for u in (c.turns or (c,))] for c in cases]
    suite = _Suite(
        cases, [f for parts in by_case for f in parts], [_usage(c, p) for c, p in zip(cases, by_case, strict=True)]
    )
    criteria: dict[str, list[float]] = {}
    for f in suite.judged:
        for name, score in f.criteria.items():
            criteria.setdefault(name, []).append(score)
    usage = suite.usage
    counts: dict[str, float | int | None] = {
        "cases": len(cases),
        "passed": sum(c.status == "pass" for c in cases),
        "failed": sum(c.status == "fail" for c in cases),
        "errored": sum(c.status == "error" for c in cases),
        "judge_calls": sum(u[2] for u in usage),
        "judge_cache_hits": sum(u[3] for u in usage),
        "judge_tokens": sum(u[4] for u in usage),
        # What the replies reported, apart from the judge's: null (unknown, never 0) when none reported a cost.
        "service_cost_usd": round(sum(service), 6) if (service := [u[0] for u in usage if u[0] is not None]) else None,
        "flaky_cases": sum(c.flaky for c in cases),
    }
    figures = {spec.name: _aggregate(spec, suite) for spec in of_scope("suite") if not spec.is_family()}
    means = {mean_of(CRITERIA_PREFIX + name): fmean(scores) for name, scores in sorted(criteria.items())}
    return {**counts, **figures, **means}


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
    totals[JUDGE_COST_USD] = round((totals.get(JUDGE_COST_USD) or 0.0) + usage.cost_usd, 6)
    if usage.cost_usd:
        totals[COST_USD] = round((totals.get(COST_USD) or 0.0) + usage.cost_usd, 6)
    return totals


def _in_ms(name: str) -> bool:
    found = lookup(name, "suite")
    return found is not None and found.unit == "ms"


def shown(metrics: dict[str, float | int | None]) -> dict[str, float | int | None]:
    """The metrics as the report shows them: timings to 0.1 ms."""
    return {k: round(v, 1) if v is not None and _in_ms(k) else v for k, v in metrics.items()}
