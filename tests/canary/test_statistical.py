"""Statistical mode, rule by rule: what an undecidable rule still reports, and where each decision turns."""

from __future__ import annotations

import pytest

from ragjudge import stats
from ragjudge.canary.feedback import ArmFeedback
from ragjudge.canary.statistical import decide_metric, percent
from ragjudge.canary.thresholds import parse_canary_rules
from ragjudge.canary.values import ArmEvidence, Evidence, MetricResult, Settings

SETTINGS = Settings(n_boot=200, min_requests=20, min_responses=100)
RULES = {
    r.metric: r
    for r in parse_canary_rules(
        {
            "dislike_rate_ratio": "<= 1.5",
            "p95_latency_ratio": "<= 1.5",
            "p95_latency_ms": "<= 3000",
            "faithfulness": ">= 0.9",
        }
    )
}
FEW = tuple(float(100 + 10 * i) for i in range(10))
"""Ten latencies, 100-190 ms: under `min_requests`."""
MANY = tuple(float(100 + i) for i in range(100))
"""A hundred, 100-199 ms: p95 194 ms, enough for an upper bound at 95%."""


def one(metric: str, treatment: ArmEvidence, control: ArmEvidence, missing: tuple[str, ...] = ()) -> MetricResult:
    return decide_metric(RULES[metric], Evidence(treatment, control, missing), SETTINGS)


def test_an_inconclusive_dislike_rule_reports_the_rates_it_has() -> None:
    no_control = one("dislike_rate_ratio", ArmEvidence(feedback=ArmFeedback(6, 50)), ArmEvidence(), ("no series",))
    assert (no_control.decision, no_control.value, no_control.ci) == ("inconclusive", None, None)
    assert (no_control.treatment, no_control.control) == (0.12, None)
    assert (no_control.n_treatment, no_control.n_control) == (50, 0)
    assert no_control.reason == "dislike rate: no feedback counts for the control (no series)"

    no_treatment = one("dislike_rate_ratio", ArmEvidence(), ArmEvidence(feedback=ArmFeedback(3, 60)))
    assert (no_treatment.treatment, no_treatment.control) == (None, 0.05)
    assert no_treatment.reason == "dislike rate: no feedback counts for the treatment (the feedback source has none)"

    few = one("dislike_rate_ratio", ArmEvidence(feedback=ArmFeedback(6, 50)), ArmEvidence(feedback=ArmFeedback(3, 60)))
    assert (few.decision, few.treatment, few.control) == ("inconclusive", 0.12, 0.05)
    assert few.reason == "dislike rate: too few responses (treatment 50, control 60; need 100 per arm)"


def test_an_inconclusive_latency_rule_reports_both_p95s() -> None:
    ratio = one("p95_latency_ratio", ArmEvidence(latencies=MANY), ArmEvidence(latencies=FEW))
    assert (ratio.decision, ratio.value, ratio.ci) == ("inconclusive", None, None)
    assert (ratio.treatment, ratio.control) == (194.0, 190.0)
    assert ratio.reason == "p95 latency ratio: too few successful requests (treatment 100, control 10; need 20 per arm)"

    limit = one("p95_latency_ms", ArmEvidence(latencies=FEW), ArmEvidence(latencies=MANY))
    assert (limit.decision, limit.treatment, limit.control) == ("inconclusive", 190.0, 194.0)
    assert limit.reason == "p95 latency: too few successful requests (treatment 10; need 20)"

    nothing = one("p95_latency_ms", ArmEvidence(), ArmEvidence())
    assert (nothing.treatment, nothing.control) == (None, None)


def test_an_inconclusive_faithfulness_rule_reports_both_means() -> None:
    result = one("faithfulness", ArmEvidence(faithfulness=(1.0, 0.5)), ArmEvidence(faithfulness=(1.0, 1.0, 0.7)))
    assert (result.decision, result.value) == ("inconclusive", None)
    assert (result.treatment, result.control) == (0.75, 0.9)
    assert result.reason == "faithfulness: too few scored answers (treatment 2; need 20)"
    unscored = one("faithfulness", ArmEvidence(), ArmEvidence())
    assert (unscored.treatment, unscored.control) == (None, None)


def test_a_decided_p95_limit_reports_both_p95s() -> None:
    result = one("p95_latency_ms", ArmEvidence(latencies=MANY), ArmEvidence(latencies=FEW + FEW))
    assert (result.decision, result.value, result.treatment, result.control) == ("pass", 194.0, 194.0, 190.0)
    assert result.ci == stats.quantile_order_statistic_bounds(MANY, 0.95, 0.95)


@pytest.mark.parametrize(("rate", "shown"), [(0.0, "0.0%"), (0.005, "0.50%"), (0.01, "1.0%"), (0.123, "12.3%")])
def test_percent(rate: float, shown: str) -> None:
    assert percent(rate) == shown
