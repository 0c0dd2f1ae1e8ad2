"""Point mode: a canary rule on point estimates alone, reproduced exactly, down to its reasons' wording.

The rule, as written in JavaScript (a `judgeCanary` function), gives one reason per broken condition::

    if (t.dislikeRate > c.dislikeRate * 1.5)           "dislike rate {toFixed(3)} exceeds 1.5x baseline"
    if (t.p95Ms > c.p95Ms * 1.5 || t.p95Ms > 3000)     "P95 latency {p95}ms over budget"
    if (t.faithfulness < 0.95)                         "online faithfulness {toFixed(3)} below threshold 0.95"

The TTFT rules (`p95_ttft_ratio`, `p95_ttft_ms`) are the latency ones on the time to the first token of the
streamed replies: "P95 TTFT {p95}ms over budget".

Thresholds and operators come from `canary.rules` (the defaults are the numbers above). Numbers are
formatted as JavaScript does (`toFixed` rounds the exact binary value half up; a number prints
in its shortest form). Latencies are whole milliseconds, as JavaScript's `Date.now()` timings are.

Where the rule's inputs cannot be computed (no feedback counts, no successful request, no
scored answer) the rule is inconclusive. The `min_*` guards apply only against a promote: a rule
the comparison above would pass on fewer values than the minimum is inconclusive, one it fails still fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from ragjudge import stats
from ragjudge.canary.thresholds import (
    DISLIKE_RATE_RATIO,
    FAITHFULNESS,
    LIMIT_MS_METRICS,
    P95_TTFT_MS,
    P95_TTFT_RATIO,
    RATIO_METRICS,
    TIMING_METRICS,
    CanaryRule,
)
from ragjudge.canary.values import Evidence, MetricDecision, MetricResult, Settings, metric_result, shortfall


def js_number(x: float) -> str:
    """`String(x)` in JavaScript: `3000`, `0.95`, `1.5`, `3123.25` (shortest round-trip form)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if 1e-6 <= abs(x) < 1e21:
        return format(Decimal(repr(float(x))).normalize(), "f")
    mantissa, _, exponent = repr(float(x)).partition("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent):+d}"


def js_to_fixed(x: float, digits: int) -> str:
    """`x.toFixed(digits)` in JavaScript: the exact binary value rounded half up (0.0625 -> "0.063")."""
    if math.isnan(x) or abs(x) >= 1e21:
        return js_number(x)
    sign = "-" if x < 0 else ""
    exact = Decimal(abs(float(x))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{sign}{exact:f}"


def whole_ms(latency_ms: float) -> int:
    """A latency in whole milliseconds (half up), as JavaScript's `Date.now()` timings are."""
    return math.floor(latency_ms + 0.5)


@dataclass(frozen=True)
class PointArm:
    """The rule's inputs for one arm (`faithfulness` is only used for the treatment)."""

    dislike_rate: float
    p95_ms: float
    faithfulness: float = math.nan


def dislike_reason(rate: float, rule: CanaryRule) -> str:
    return f"dislike rate {js_to_fixed(rate, 3)} exceeds {js_number(rule.threshold)}x baseline"


def latency_reason(p95_ms: float, what: str = "latency") -> str:
    return f"P95 {what} {js_number(p95_ms)}ms over budget"


def _what(rule: CanaryRule) -> str:
    return "TTFT" if rule.metric in (P95_TTFT_RATIO, P95_TTFT_MS) else "latency"


def faithfulness_reason(value: float, rule: CanaryRule) -> str:
    return f"online faithfulness {js_to_fixed(value, 3)} below threshold {js_number(rule.threshold)}"


def broken(rule: CanaryRule, treatment: PointArm, control: PointArm) -> str | None:
    """The point rule's reason when `rule` is broken by these point estimates, else None."""
    if rule.metric == DISLIKE_RATE_RATIO:
        ok = rule.holds_against(treatment.dislike_rate, control.dislike_rate * rule.threshold)
        return None if ok else dislike_reason(treatment.dislike_rate, rule)
    if rule.metric in TIMING_METRICS and rule.metric in RATIO_METRICS:
        ok = rule.holds_against(treatment.p95_ms, control.p95_ms * rule.threshold)
        return None if ok else latency_reason(treatment.p95_ms, _what(rule))
    if rule.metric in LIMIT_MS_METRICS:
        return None if rule.holds(treatment.p95_ms) else latency_reason(treatment.p95_ms, _what(rule))
    if rule.metric == FAITHFULNESS:
        return None if rule.holds(treatment.faithfulness) else faithfulness_reason(treatment.faithfulness, rule)
    raise AssertionError(rule.metric)


def _figures(rule: CanaryRule, evidence: Evidence) -> tuple[float | None, float | None]:
    """The treatment's and control's point estimates for a rule; None where there is no data."""
    t, c = evidence.treatment, evidence.control
    if rule.metric == DISLIKE_RATE_RATIO:
        return (t.feedback.rate if t.feedback else None), (c.feedback.rate if c.feedback else None)
    if rule.metric in TIMING_METRICS:
        t_ms, c_ms = t.timings(rule.metric), c.timings(rule.metric)
        p95_t = whole_ms(stats.percentile_nearest_rank(t_ms, 95)) if t_ms else None
        p95_c = whole_ms(stats.percentile_nearest_rank(c_ms, 95)) if c_ms else None
        return p95_t, p95_c
    mean_t = math.fsum(t.faithfulness) / len(t.faithfulness) if t.faithfulness else None
    mean_c = math.fsum(c.faithfulness) / len(c.faithfulness) if c.faithfulness else None
    return mean_t, mean_c


def _held(rule: CanaryRule, t: float, c: float | None) -> str:
    """A reason for a rule the point comparison passes (the JavaScript rule itself says nothing then)."""
    if rule.metric == DISLIKE_RATE_RATIO:
        return f"dislike rate {js_to_fixed(t, 3)} within {js_number(rule.threshold)}x baseline {js_to_fixed(c or 0, 3)}"
    if rule.metric in TIMING_METRICS and rule.metric in RATIO_METRICS:
        what = _what(rule)
        return f"P95 {what} {js_number(t)}ms within {js_number(rule.threshold)}x baseline {js_number(c or 0)}ms"
    if rule.metric in LIMIT_MS_METRICS:
        return f"P95 {_what(rule)} {js_number(t)}ms within {js_number(rule.threshold)}ms"
    return f"online faithfulness {js_to_fixed(t, 3)} meets threshold {js_number(rule.threshold)}"


def _arm(rule: CanaryRule, figure: float | None) -> PointArm:
    """The rule's input for one arm, with this rule's figure in its place."""
    x = math.nan if figure is None else figure
    if rule.metric == DISLIKE_RATE_RATIO:
        return PointArm(dislike_rate=x, p95_ms=math.nan)
    if rule.metric == FAITHFULNESS:
        return PointArm(dislike_rate=math.nan, p95_ms=math.nan, faithfulness=x)
    return PointArm(dislike_rate=math.nan, p95_ms=x)


def decide_metric(rule: CanaryRule, evidence: Evidence, settings: Settings) -> MetricResult:
    """One rule in point mode."""
    t, c = _figures(rule, evidence)
    needs_control = rule.metric in RATIO_METRICS
    computable = t is not None and (c is not None or not needs_control)
    decision: MetricDecision
    value: float | None = None
    if not computable:
        decision, reason = "inconclusive", shortfall(rule, evidence, settings) or "no data"
    else:
        assert t is not None
        failed = broken(rule, _arm(rule, t), _arm(rule, c))
        too_few = shortfall(rule, evidence, settings)
        if failed is not None:
            decision, reason = "fail", failed
        elif too_few is not None:
            decision, reason = "inconclusive", too_few
        else:
            decision, reason = "pass", _held(rule, t, c)
        value = (t / c if c else None) if needs_control else t
    return metric_result(rule, evidence, value, None, decision, reason, t, c)
