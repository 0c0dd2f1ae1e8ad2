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
    assert (no_treatment.n_treatment, no_treatment.n_control) == (0, 60)
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


def test_a_faithfulness_rule_short_of_scores_says_when_the_replies_exposed_no_passages() -> None:
    result = one("faithfulness", ArmEvidence(passages_unknown=30), ArmEvidence(passages_unknown=30))
    assert result.decision == "inconclusive"
    assert result.reason == (
        "faithfulness: too few scored answers (treatment 0; need 20); 30 treatment replies exposed no passages "
        "(endpoint.response.retrieved is not mapped), so their faithfulness is unknown"
    )


def test_a_decided_p95_limit_reports_both_p95s() -> None:
    result = one("p95_latency_ms", ArmEvidence(latencies=MANY), ArmEvidence(latencies=FEW + FEW))
    assert (result.decision, result.value, result.treatment, result.control) == ("pass", 194.0, 194.0, 190.0)
    assert result.ci == stats.quantile_order_statistic_bounds(MANY, 0.95, 0.95)


@pytest.mark.parametrize(("rate", "shown"), [(0.0, "0.0%"), (0.005, "0.50%"), (0.01, "1.0%"), (0.123, "12.3%")])
def test_percent(rate: float, shown: str) -> None:
    assert percent(rate) == shown


def test_a_ratio_whose_interval_reaches_exactly_1_is_not_significantly_worse() -> None:
    # The treatment's p95 is 300 ms in most resamples and 100 ms (the control's) in the rest: ratio 3.00, interval
    # from exactly 1.00. Over the line, but not significantly worse than control: inconclusive, never a rollback.
    treatment = ArmEvidence(latencies=(100.0,) * 94 + (300.0,) * 6)
    result = one("p95_latency_ratio", treatment, ArmEvidence(latencies=(100.0,) * 100))
    assert (result.decision, result.value, result.ci) == ("inconclusive", 3.0, (1.0, 3.0))
    assert result.reason == (
        "p95 latency 300 ms vs 100 ms (ratio 3.00, 95% CI 1.00–3.00) is over 1.5x control but not significantly "
        "worse than control (the interval includes 1)"
    )


def test_an_inconclusive_p95_limit_with_an_upper_bound_says_where_the_interval_reaches() -> None:
    result = one("p95_latency_ms", ArmEvidence(latencies=tuple(2906.0 + i for i in range(100))), ArmEvidence())
    assert (result.decision, result.value) == ("inconclusive", 3000.0)
    assert result.reason.endswith("may exceed 3000 ms (the interval reaches above it)")


def test_a_zero_cell_is_named_whichever_count_it_is() -> None:
    every = one(
        "dislike_rate_ratio", ArmEvidence(feedback=ArmFeedback(100, 100)), ArmEvidence(feedback=ArmFeedback(10, 100))
    )
    assert every.decision == "fail"
    assert every.reason.endswith("exceeds 1.5x control (a count was zero, so 0.5 was added to every cell)")
    none_zero = one(
        "dislike_rate_ratio", ArmEvidence(feedback=ArmFeedback(3, 100)), ArmEvidence(feedback=ArmFeedback(3, 100))
    )
    assert none_zero.reason.endswith("may exceed 1.5x control (the interval reaches above it)")


def test_exactly_the_minimum_data_is_enough() -> None:
    twenty = ArmEvidence(latencies=MANY[:20], faithfulness=(1.0,) * 20, feedback=ArmFeedback(3, 100))
    decided = {m: one(m, twenty, twenty).decision for m in RULES}
    assert decided == {
        "dislike_rate_ratio": "inconclusive",  # decided on its interval, not for want of responses
        "p95_latency_ratio": "pass",
        "p95_latency_ms": "inconclusive",  # 20 requests give no upper bound on a p95
        "faithfulness": "pass",
    }
    assert "too few" not in one("dislike_rate_ratio", twenty, twenty).reason
    assert "no upper bound from 20 requests" in one("p95_latency_ms", twenty, twenty).reason


def test_a_p95_limit_needs_no_control() -> None:
    result = one("p95_latency_ms", ArmEvidence(latencies=MANY), ArmEvidence(latencies=FEW[:5]))
    assert (result.decision, result.treatment, result.control) == ("pass", 194.0, 140.0)
    assert result.reason == "p95 latency 194 ms (95% CI 189–199 ms) is within 3000 ms"


def test_a_p95_limit_reports_the_controls_own_p95() -> None:
    result = one("p95_latency_ms", ArmEvidence(latencies=MANY), ArmEvidence(latencies=MANY))
    assert (result.treatment, result.control) == (194.0, 194.0)


def test_a_control_of_only_dislikes_is_a_zero_cell() -> None:
    result = one(
        "dislike_rate_ratio", ArmEvidence(feedback=ArmFeedback(3, 100)), ArmEvidence(feedback=ArmFeedback(100, 100))
    )
    assert result.reason.endswith("(a count was zero, so 0.5 was added to every cell)")
