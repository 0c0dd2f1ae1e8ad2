"""Statistical mode: every rule decided on a confidence interval, three ways.

* Ratios (dislike rate, p95 latency, p95 TTFT), rule `<= T`: fail when the ratio is over T *and* the
  interval's lower bound is above 1 (significantly worse than control, and over the line);
  pass when the upper bound is within T; otherwise inconclusive.
* p95 latency or TTFT limit `<= L`: fail when the lower bound is over L; pass when the upper bound is
  within L.
* Faithfulness `>= F`: fail when the upper bound is under F; pass when the lower bound is at least F.

A rule without enough data (see `model.shortfall`) is inconclusive, never a pass.
"""

from __future__ import annotations

import math

from ragjudge import stats
from ragjudge.canary.thresholds import (
    DISLIKE_RATE_RATIO,
    FAITHFULNESS,
    LIMIT_MS_METRICS,
    P95_LATENCY_MS,
    P95_LATENCY_RATIO,
    P95_TTFT_MS,
    P95_TTFT_RATIO,
    TIMING_METRICS,
    TTFT_METRICS,
    CanaryRule,
)
from ragjudge.canary.values import Evidence, MetricDecision, MetricResult, Settings, metric_result, shortfall

# What a held (pass) and a broken (fail) rule reads as, per operator.
_WORDS = {
    "<=": ("is within", "exceeds"),
    "<": ("is below", "is not below"),
    ">=": ("is at least", "is below"),
    ">": ("is above", "is not above"),
}


def percent(rate: float) -> str:
    """`6.0%`; two decimals under 1% so that small rates stay distinguishable."""
    digits = 2 if 0 < rate < 0.01 else 1
    return f"{rate * 100:.{digits}f}%"


def _num(x: float, spec: str) -> str:
    return "unbounded" if math.isinf(x) else format(x, spec)


def _ci_label(settings: Settings) -> str:
    return f"{settings.confidence * 100:g}% CI"


def _three_way(rule: CanaryRule, value: float, ci: stats.Interval, *, ratio: bool) -> tuple[MetricDecision, str]:
    """The decision and how it ends the reason sentence (`exceeds 1.5x control`)."""
    held, broken = _WORDS[rule.op]
    line = f"{rule.threshold:g}x control" if ratio else f"{rule.threshold:g}"
    if rule.metric in LIMIT_MS_METRICS:
        line += " ms"
    upper = rule.op in ("<=", "<")
    near, far = (ci.hi, ci.lo) if upper else (ci.lo, ci.hi)  # near: the end that must hold for a pass
    if rule.holds(near):
        return "pass", f"{held} {line}"
    if ratio:
        if not rule.holds(value) and ci.lo > 1.0:
            return "fail", f"{broken} {line}"
        if not rule.holds(value):
            return "inconclusive", f"is over {line} but not significantly worse than control (the interval includes 1)"
        return "inconclusive", f"may exceed {line} (the interval reaches above it)"
    if not rule.holds(far):
        return "fail", f"{broken} {line}"
    side = "above" if upper else "below"
    if not rule.holds(value):
        return "inconclusive", f"{broken} {line}, but the interval reaches {'below' if upper else 'above'} it"
    return "inconclusive", f"may {'exceed' if upper else 'fall below'} {line} (the interval reaches {side} it)"


def _dislikes(rule: CanaryRule, evidence: Evidence, settings: Settings) -> MetricResult:
    t, c = evidence.treatment.feedback, evidence.control.feedback
    assert t is not None and c is not None and t.rate is not None and c.rate is not None
    rr, ci = stats.risk_ratio_katz(t.dislikes, t.responses, c.dislikes, c.responses, settings.confidence)
    decision, ending = _three_way(rule, rr, ci, ratio=True)
    reason = (
        f"dislike rate {percent(t.rate)} vs {percent(c.rate)} "
        f"(ratio {rr:.2f}, {_ci_label(settings)} {_num(ci.lo, '.2f')}–{_num(ci.hi, '.2f')}) {ending}"
    )
    if 0 in (t.dislikes, t.responses - t.dislikes, c.dislikes, c.responses - c.dislikes):
        reason += " (a count was zero, so 0.5 was added to every cell)"
    return metric_result(rule, evidence, rr, ci, decision, reason, t.rate, c.rate)


def _what(rule: CanaryRule) -> str:
    return "p95 TTFT" if rule.metric in TTFT_METRICS else "p95 latency"


def _p95_ratio(rule: CanaryRule, evidence: Evidence, settings: Settings) -> MetricResult:
    t, c = evidence.treatment.timings(rule.metric), evidence.control.timings(rule.metric)
    ratio, ci = stats.bootstrap_ratio_of_p95(t, c, settings.confidence, settings.n_boot, settings.seed)
    p95_t, p95_c = stats.percentile_nearest_rank(t, 95), stats.percentile_nearest_rank(c, 95)
    decision, ending = _three_way(rule, ratio, ci, ratio=True)
    reason = (
        f"{_what(rule)} {p95_t:.0f} ms vs {p95_c:.0f} ms "
        f"(ratio {_num(ratio, '.2f')}, {_ci_label(settings)} {_num(ci.lo, '.2f')}–{_num(ci.hi, '.2f')}) {ending}"
    )
    return metric_result(rule, evidence, ratio, ci, decision, reason, p95_t, p95_c)


def min_requests_for_p95_bound(confidence: float) -> int:
    """The fewest requests whose p95 has a distribution-free upper bound: 0.95**n <= (1 - confidence) / 2."""
    return math.ceil(math.log((1 - confidence) / 2) / math.log(0.95))


def _p95_limit(rule: CanaryRule, evidence: Evidence, settings: Settings) -> MetricResult:
    t, c = evidence.treatment.timings(rule.metric), evidence.control.timings(rule.metric)
    p95_t = stats.percentile_nearest_rank(t, 95)
    p95_c = stats.percentile_nearest_rank(c, 95) if c else None
    ci = stats.quantile_order_statistic_bounds(t, 0.95, settings.confidence)
    decision, ending = _three_way(rule, p95_t, ci, ratio=False)
    if decision == "inconclusive" and math.isinf(ci.hi):
        counted = "streamed replies" if rule.metric in TTFT_METRICS else "requests"
        ending = (
            f"may exceed {rule.threshold:g} ms (no upper bound from {len(t)} {counted}: "
            f"it needs at least {min_requests_for_p95_bound(settings.confidence)})"
        )
    reason = (
        f"{_what(rule)} {p95_t:.0f} ms ({_ci_label(settings)} {_num(ci.lo, '.0f')}–{_num(ci.hi, '.0f')} ms) {ending}"
    )
    return metric_result(rule, evidence, p95_t, ci, decision, reason, p95_t, p95_c)


def _faithfulness(rule: CanaryRule, evidence: Evidence, settings: Settings) -> MetricResult:
    t, c = evidence.treatment.faithfulness, evidence.control.faithfulness
    mean, ci = stats.bootstrap_mean(t, settings.confidence, settings.n_boot, settings.seed)
    control = math.fsum(c) / len(c) if c else None
    decision, ending = _three_way(rule, mean, ci, ratio=False)
    versus = f"control {control:.3f}" if control is not None else "control not scored"
    reason = f"faithfulness {mean:.3f} ({_ci_label(settings)} {ci.lo:.3f}–{ci.hi:.3f}; {versus}) {ending}"
    return metric_result(rule, evidence, mean, ci, decision, reason, mean, control)


_DECIDERS = {
    DISLIKE_RATE_RATIO: _dislikes,
    P95_LATENCY_RATIO: _p95_ratio,
    P95_LATENCY_MS: _p95_limit,
    P95_TTFT_RATIO: _p95_ratio,
    P95_TTFT_MS: _p95_limit,
    FAITHFULNESS: _faithfulness,
}


def unavailable(rule: CanaryRule, evidence: Evidence, reason: str) -> MetricResult:
    """An inconclusive result for a rule the evidence cannot decide, with what figures there are."""
    t, c = evidence.treatment, evidence.control
    treatment: float | None = None
    control: float | None = None
    if rule.metric == DISLIKE_RATE_RATIO:
        treatment = t.feedback.rate if t.feedback else None
        control = c.feedback.rate if c.feedback else None
    elif rule.metric in TIMING_METRICS:
        t_ms, c_ms = t.timings(rule.metric), c.timings(rule.metric)
        treatment = stats.percentile_nearest_rank(t_ms, 95) if t_ms else None
        control = stats.percentile_nearest_rank(c_ms, 95) if c_ms else None
    else:
        treatment = math.fsum(t.faithfulness) / len(t.faithfulness) if t.faithfulness else None
        control = math.fsum(c.faithfulness) / len(c.faithfulness) if c.faithfulness else None
    return metric_result(rule, evidence, None, None, "inconclusive", reason, treatment, control)


def decide_metric(rule: CanaryRule, evidence: Evidence, settings: Settings) -> MetricResult:
    """One rule in statistical mode."""
    missing = shortfall(rule, evidence, settings)
    if missing is not None:
        return unavailable(rule, evidence, missing)
    return _DECIDERS[rule.metric](rule, evidence, settings)
