"""The values the canary decision works on and produces, shared by both decision modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragjudge import stats
from ragjudge.canary.feedback import ArmFeedback
from ragjudge.canary.thresholds import (
    DISLIKE_RATE_RATIO,
    FAITHFULNESS,
    P95_LATENCY_MS,
    P95_LATENCY_RATIO,
    P95_TTFT_MS,
    P95_TTFT_RATIO,
    TTFT_METRICS,
    CanaryRule,
)
from ragjudge.config.canary_config import CanaryConfig

Verdict = Literal["promote", "rollback", "inconclusive"]
MetricDecision = Literal["pass", "fail", "inconclusive"]
Mode = Literal["statistical", "point"]


@dataclass(frozen=True)
class ArmEvidence:
    """What was measured on one arm."""

    latencies: tuple[float, ...] = ()
    """ragjudge's per-request latencies (ms) of the successful calls, in case order."""
    faithfulness: tuple[float, ...] = ()
    """Per-answer faithfulness of the answers the judge could score, in case order."""
    feedback: ArmFeedback | None = None
    """Production counts; None when the source had none for this arm."""
    ttfts: tuple[float, ...] = ()
    """Times to the first token (ms) of the successful streamed replies, in case order."""
    passages_unknown: int = 0
    """Replies that exposed no passages (`endpoint.response.retrieved` not mapped): their faithfulness is
    unknown, so they cannot count for the faithfulness rule."""

    def timings(self, metric: str) -> tuple[float, ...]:
        """What a p95 rule is computed on: `ttfts` for the TTFT rules, else `latencies`."""
        return self.ttfts if metric in TTFT_METRICS else self.latencies


@dataclass(frozen=True)
class Evidence:
    """Both arms, and why feedback is absent when it is."""

    treatment: ArmEvidence
    control: ArmEvidence
    feedback_missing: tuple[str, ...] = ()
    """E.g. a Prometheus query that returned no series: makes the dislike rule inconclusive."""


@dataclass(frozen=True)
class Settings:
    """How to decide (the `canary:` keys other than the rules)."""

    mode: Mode = "statistical"
    confidence: float = 0.95
    min_responses: int = 200
    """Per arm, for the dislike rate."""
    min_requests: int = 50
    """Per arm, for latency; for faithfulness, scored treatment answers."""
    n_boot: int = 2000
    seed: int = 12345

    @classmethod
    def from_config(cls, config: CanaryConfig) -> Settings:
        return cls(
            mode=config.decision,
            confidence=config.confidence,
            min_responses=config.min_responses,
            min_requests=config.min_requests,
            n_boot=config.bootstrap,
            seed=config.seed,
        )


@dataclass(frozen=True)
class MetricResult:
    """One rule's outcome: the report's per-metric block."""

    metric: str
    value: float | None
    """The compared quantity: a ratio, the treatment's p95 (ms) or its mean faithfulness."""
    ci: tuple[float, float] | None
    """Two-sided interval at `confidence` (ends may be infinite); None in point mode or without data."""
    op: str
    threshold: float
    decision: MetricDecision
    reason: str
    treatment: float | None
    """The treatment's own figure: dislike rate, p95 (ms) or mean faithfulness."""
    control: float | None
    n_treatment: int
    """Responses (dislike rate), successful requests (latency), streamed replies (TTFT) or scored answers
    (faithfulness)."""
    n_control: int


@dataclass(frozen=True)
class Decision:
    """The verdict, the reasons for it, and every metric."""

    verdict: Verdict
    reasons: tuple[str, ...]
    metrics: tuple[MetricResult, ...]
    mode: Mode
    confidence: float


def sizes(rule: CanaryRule, evidence: Evidence) -> tuple[int, int]:
    """The per-arm sample sizes a rule is computed from."""
    t, c = evidence.treatment, evidence.control
    if rule.metric == DISLIKE_RATE_RATIO:
        return (t.feedback.responses if t.feedback else 0, c.feedback.responses if c.feedback else 0)
    if rule.metric in (P95_LATENCY_RATIO, P95_LATENCY_MS, P95_TTFT_RATIO, P95_TTFT_MS):
        return len(t.timings(rule.metric)), len(c.timings(rule.metric))
    return len(t.faithfulness), len(c.faithfulness)


def _too_few(what: str, n_t: int, n_c: int, need: int, both: bool) -> str | None:
    if both and (n_t < need or n_c < need):
        return f"{what} (treatment {n_t}, control {n_c}; need {need} per arm)"
    if not both and n_t < need:
        return f"{what} (treatment {n_t}; need {need})"
    return None


def shortfall(rule: CanaryRule, evidence: Evidence, settings: Settings) -> str | None:
    """Why a rule cannot be decided on this evidence (missing or too little data), or None."""
    n_t, n_c = sizes(rule, evidence)
    if rule.metric == DISLIKE_RATE_RATIO:
        arms = (("treatment", evidence.treatment), ("control", evidence.control))
        absent = [arm for arm, e in arms if e.feedback is None]
        if absent:
            why = "; ".join(evidence.feedback_missing) or "the feedback source has none"
            return f"dislike rate: no feedback counts for the {' and '.join(absent)} ({why})"
        return _too_few("dislike rate: too few responses", n_t, n_c, settings.min_responses, both=True)
    if rule.metric == P95_LATENCY_RATIO:
        return _too_few("p95 latency ratio: too few successful requests", n_t, n_c, settings.min_requests, both=True)
    if rule.metric == P95_LATENCY_MS:
        return _too_few("p95 latency: too few successful requests", n_t, n_c, settings.min_requests, both=False)
    if rule.metric == P95_TTFT_RATIO:
        return _too_few("p95 TTFT ratio: too few streamed replies", n_t, n_c, settings.min_requests, both=True)
    if rule.metric == P95_TTFT_MS:
        return _too_few("p95 TTFT: too few streamed replies", n_t, n_c, settings.min_requests, both=False)
    if rule.metric == FAITHFULNESS:
        short = _too_few("faithfulness: too few scored answers", n_t, n_c, settings.min_requests, both=False)
        unknown = evidence.treatment.passages_unknown
        if short and unknown:
            # Said, or the rule would wait for scores a service without passages can never give.
            short += (
                f"; {unknown} treatment replies exposed no passages (endpoint.response.retrieved is not mapped), "
                "so their faithfulness is unknown"
            )
        return short
    raise AssertionError(rule.metric)


def verdict_of(decisions: list[MetricDecision] | tuple[MetricDecision, ...]) -> Verdict:
    """rollback if any metric fails, promote if all pass (and there is at least one), else inconclusive."""
    if "fail" in decisions:
        return "rollback"
    if decisions and all(d == "pass" for d in decisions):
        return "promote"
    return "inconclusive"


def metric_result(
    rule: CanaryRule,
    evidence: Evidence,
    value: float | None,
    ci: stats.Interval | None,
    decision: MetricDecision,
    reason: str,
    treatment: float | None,
    control: float | None,
) -> MetricResult:
    """One rule's result, with the sample sizes it was decided on."""
    n_t, n_c = sizes(rule, evidence)
    return MetricResult(
        metric=rule.metric,
        value=value,
        ci=(ci.lo, ci.hi) if ci is not None else None,
        op=rule.op,
        threshold=rule.threshold,
        decision=decision,
        reason=reason,
        treatment=treatment,
        control=control,
        n_treatment=n_t,
        n_control=n_c,
    )
