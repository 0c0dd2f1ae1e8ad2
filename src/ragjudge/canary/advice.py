"""What would decide an undecided canary rule, said as something to do: "43 questions < 72 needed for an upper
bound on p95 latency at 95% confidence: add at least 29 questions to canary.sample, or decide on point estimates
(canary.decision: point)".

The sizes are the ones the decision itself uses: the fewest requests whose p95 has an upper bound, the
`canary.min_*` floors, and for an interval that crosses the threshold, the sample that would shrink it clear of
the threshold if the figures held (an interval's half-width falls as one over the square root of the sample;
ratios on the log scale).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ragjudge.canary.statistical import min_requests_for_p95_bound
from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO, FAITHFULNESS, LIMIT_MS_METRICS, RATIO_METRICS, TTFT_METRICS
from ragjudge.canary.values import MetricResult, Settings

_TO_POINT = "or decide on point estimates (canary.decision: point)"
PLAUSIBLE_GROWTH = 10
"""A sample more than this many times the larger arm's is not one a team waits for: the advice says the rule
cannot decide at this size instead of naming it."""


def advice(result: MetricResult, settings: Settings) -> str | None:
    """For an inconclusive rule, what to do; None for a decided one."""
    if result.decision != "inconclusive":
        return None
    n = result.n_treatment
    what, more = _units(result.metric)
    if result.metric == DISLIKE_RATE_RATIO:
        floor = settings.min_responses
        fewest = min(result.n_treatment, result.n_control)
        if fewest < floor:
            return (
                f"{fewest} rated responses on an arm < {floor} needed (canary.min_responses): wait for at least "
                f"{floor - fewest} more, or lower canary.min_responses"
            )
    elif n < settings.min_requests:
        return f"{n} {what} < {settings.min_requests} needed (canary.min_requests): {more(settings.min_requests - n)}"
    if result.metric in LIMIT_MS_METRICS and (result.ci is None or math.isinf(result.ci[1])):
        need = min_requests_for_p95_bound(settings.confidence)
        if n < need:
            level = f"{settings.confidence * 100:g}%"
            return f"{n} {what} < {need} needed for an upper bound on the p95 at {level} confidence: {more(need - n)}"
    if result.value is None or result.ci is None:
        return None
    needed = _needed(result)
    if needed is None:
        return f"the canary sits on the threshold ({result.threshold:g}): no sample tells it apart; {_TO_POINT}"
    if needed <= n:
        return None
    need = needed
    if result.metric == DISLIKE_RATE_RATIO:
        return _ratings_advice(result, need)
    return f"{n} {what} < about {need} needed to tell it from {result.threshold:g}: {more(need - n)}"


def _ratings_advice(result: MetricResult, need: int) -> str:
    """Each arm's shortfall (the arms rarely have as many ratings), or, when no team would wait for the sample
    it takes, that this rule cannot decide at this size."""
    assert result.value is not None
    arms = (result.n_treatment, result.n_control)
    said = f"{arms[0]} and {arms[1]} rated responses (canary, stable)"
    tell = f"tell a {result.value:.2f}× dislike ratio from {result.threshold:g}×"
    if need > PLAUSIBLE_GROWTH * max(arms):
        return (
            f"{said}: to {tell} would take about {need} on each arm; this rule cannot decide at this sample size: "
            f"decide on point estimates (canary.decision: point)"
        )
    short = [f"{need - k} more on the {arm} arm" for k, arm in zip(arms, ("canary", "stable"), strict=True) if k < need]
    return f"{said} < about {need} needed on each arm to {tell}: wait for about " + " and ".join(short)


def _needed(result: MetricResult) -> int | None:
    """The sample at which the interval would clear the threshold if the figure held; None when it sits on it."""
    assert result.value is not None and result.ci is not None
    log = result.metric in RATIO_METRICS
    value, threshold = result.value, result.threshold

    def at(x: float) -> float:
        return math.log(x) if log else x

    if log and (value <= 0 or threshold <= 0):
        return None
    gap = abs(at(value) - at(threshold))
    if gap == 0:
        return None
    side = result.ci[1] if threshold > value else result.ci[0]
    if side is None or not math.isfinite(side) or (log and side <= 0):
        return None
    half = abs(at(side) - at(value))
    return math.ceil(result.n_treatment * (half / gap) ** 2) + 1


def _units(metric: str) -> tuple[str, Callable[[int], str]]:
    """How the sample is counted, and what asking for more of it is."""
    if metric == FAITHFULNESS:
        return "scored answers", lambda k: f"add at least {k} questions the judge can score to canary.sample"
    if metric in TTFT_METRICS:
        return "streamed replies", lambda k: f"add at least {k} questions to canary.sample, {_TO_POINT}"
    return "questions", lambda k: f"add at least {k} questions to canary.sample, {_TO_POINT}"
