"""Point mode when the control arm returned no data, and the figures an inconclusive rule reports."""

from __future__ import annotations

import pytest

from ragjudge.canary.decision import decide
from ragjudge.canary.feedback import ArmFeedback
from ragjudge.canary.thresholds import parse_canary_rules
from ragjudge.canary.values import ArmEvidence, Evidence, Settings

RULES = parse_canary_rules(
    {
        "dislike_rate_ratio": "<= 1.5",
        "p95_latency_ratio": "<= 1.5",
        "p95_latency_ms": "<= 3000",
        "faithfulness": ">= 0.95",
    }
)
POINT = Settings(mode="point", min_requests=1, min_responses=1)
STATISTICAL = Settings(n_boot=200, min_requests=5, min_responses=5)
LATENCIES = tuple(float(100 + i) for i in range(100))  # p95 (nearest rank) = 194 ms
UNFAITHFUL = (0.5,) * 100
NO_DATA = ArmEvidence()


def _by_metric(decision):
    return {m.metric: m for m in decision.metrics}


def test_point_mode_with_an_empty_control_still_rolls_back_a_clearly_unfaithful_canary() -> None:
    treatment = ArmEvidence(LATENCIES, UNFAITHFUL, ArmFeedback(30, 1000))
    result = decide(Evidence(treatment, NO_DATA), RULES, POINT)
    m = _by_metric(result)
    assert m["dislike_rate_ratio"].decision == "inconclusive"
    assert m["p95_latency_ratio"].decision == "inconclusive"
    # Absolute rules need no control: they are decided.
    assert (m["p95_latency_ms"].decision, m["p95_latency_ms"].value) == ("pass", 194)
    assert (m["faithfulness"].decision, m["faithfulness"].value) == ("fail", 0.5)
    assert m["faithfulness"].reason == "online faithfulness 0.500 below threshold 0.95"
    assert result.verdict == "rollback"
    assert result.reasons == ("online faithfulness 0.500 below threshold 0.95",)


def test_point_mode_with_an_empty_control_and_a_healthy_canary_is_inconclusive_not_promote() -> None:
    treatment = ArmEvidence(LATENCIES, (1.0,) * 100, ArmFeedback(30, 1000))
    result = decide(Evidence(treatment, NO_DATA), RULES, POINT)
    m = _by_metric(result)
    assert (m["p95_latency_ms"].decision, m["faithfulness"].decision) == ("pass", "pass")
    assert result.verdict == "inconclusive"


@pytest.mark.parametrize("settings", [POINT, STATISTICAL], ids=["point", "statistical"])
def test_an_inconclusive_rule_reports_its_own_figures(settings: Settings) -> None:
    # Treatment has everything; control has latencies only (no feedback), so only the dislike rule is undecided.
    control_latencies = tuple(float(300 + 2 * i) for i in range(40))
    treatment = ArmEvidence(LATENCIES, (1.0,) * 100, ArmFeedback(30, 1000))
    control = ArmEvidence(control_latencies, (1.0,) * 40, None)
    m = _by_metric(decide(Evidence(treatment, control), RULES, settings))
    dislike = m["dislike_rate_ratio"]
    assert dislike.decision == "inconclusive"
    # Its own metric's figures: the treatment's dislike rate and the feedback sizes, not a latency's.
    assert (dislike.treatment, dislike.control) == (0.03, None)
    assert (dislike.n_treatment, dislike.n_control) == (1000, 0)
    assert dislike.value is None
    assert dislike.reason.startswith("dislike rate: no feedback counts for the control")
    latency = m["p95_latency_ratio"]
    assert (latency.n_treatment, latency.n_control) == (100, 40)
    assert latency.treatment == 194
    assert latency.control == 374  # nearest rank: the 38th of 40 (300, 302, ..., 378)


@pytest.mark.parametrize("settings", [POINT, STATISTICAL], ids=["point", "statistical"])
def test_an_inconclusive_faithfulness_rule_reports_its_own_n(settings: Settings) -> None:
    treatment = ArmEvidence(LATENCIES, (), ArmFeedback(30, 1000))
    control = ArmEvidence(LATENCIES, (0.9,) * 7, ArmFeedback(30, 1000))
    faith = _by_metric(decide(Evidence(treatment, control), RULES, settings))["faithfulness"]
    assert faith.decision == "inconclusive"
    assert (faith.treatment, faith.n_treatment) == (None, 0)
    assert faith.value is None


@pytest.mark.parametrize("n", [100, 143])
def test_canary_p50_and_p95_over_many_latencies_equal_an_independent_reference(n: int) -> None:
    numpy = pytest.importorskip("numpy")
    from ragjudge.canary.report import _arm_block
    from ragjudge.canary.sample import ArmRun, Observation

    latencies = [round(80 + ((i * 6007) % 997) * 3.11, 2) for i in range(n)]
    observations = tuple(Observation(f"c{i}", x, None) for i, x in enumerate(latencies))
    block = _arm_block(ArmRun("treatment", "http://127.0.0.1:1/ask", observations), ArmFeedback(1, 100))
    assert block.p50_latency_ms == round(float(numpy.percentile(latencies, 50, method="inverted_cdf")), 1)
    assert block.p95_latency_ms == round(float(numpy.percentile(latencies, 95, method="inverted_cdf")), 1)
    treatment = ArmEvidence(tuple(latencies), (1.0,) * n, ArmFeedback(30, 1000))
    m = _by_metric(decide(Evidence(treatment, treatment), RULES, STATISTICAL))["p95_latency_ms"]
    assert m.treatment == float(numpy.percentile(latencies, 95, method="inverted_cdf"))


def test_rounding_never_flips_a_statistical_canary_latency_rule_at_its_threshold() -> None:
    # 100 latencies whose nearest-rank p95 is 3000.4 ms: over a 3000 ms budget although it shows as 3000.
    latencies = (100.0,) * 94 + (3000.4,) + (5000.0,) * 5
    arm = ArmEvidence(latencies, (1.0,) * 100, ArmFeedback(30, 1000))
    m = _by_metric(decide(Evidence(arm, arm), RULES, STATISTICAL))["p95_latency_ms"]
    assert m.treatment == 3000.4
    assert m.decision != "pass"
