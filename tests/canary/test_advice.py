"""The advice under an inconclusive dislike-ratio rule: each arm's own shortfall, and no sample no team would
wait for (issue 39: "wait for about 19060 more on each arm" with 300 and 310 ratings)."""

from __future__ import annotations

from ragjudge.canary.advice import advice
from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO
from ragjudge.canary.values import MetricResult, Settings


def _ratio(value: float, ci: tuple[float, float], n_t: int = 300, n_c: int = 310) -> MetricResult:
    return MetricResult(
        DISLIKE_RATE_RATIO, value, ci, "<=", 1.5, "inconclusive", "crosses the threshold", 0.1, 0.08, n_t, n_c
    )


def test_each_arm_is_told_its_own_shortfall() -> None:
    said = advice(_ratio(1.2, (0.9, 1.6)), Settings())
    assert said == (
        "300 and 310 rated responses (canary, stable) < about 500 needed on each arm to tell a 1.20× dislike ratio "
        "from 1.5×: wait for about 200 more on the canary arm and 190 more on the stable arm"
    )


def test_a_sample_no_team_would_wait_for_is_not_advised() -> None:
    said = advice(_ratio(1.45, (1.0, 2.1)), Settings())
    assert said is not None
    assert said.startswith("300 and 310 rated responses (canary, stable): to tell a 1.45× dislike ratio from 1.5× ")
    assert said.endswith(
        "on each arm; this rule cannot decide at this sample size: decide on point estimates (canary.decision: point)"
    )
    assert "wait for" not in said
