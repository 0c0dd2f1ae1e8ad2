"""The canary decision on given numbers: statistical mode three ways, and point mode against seed 002."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragjudge.canary.decision import decide
from ragjudge.canary.feedback import ArmFeedback
from ragjudge.canary.point import js_number, js_to_fixed
from ragjudge.canary.statistical import min_requests_for_p95_bound
from ragjudge.canary.thresholds import parse_canary_rules
from ragjudge.canary.values import ArmEvidence, Evidence, Settings, verdict_of
from ragjudge.errors import ConfigError

DEFAULT_RULES = parse_canary_rules(
    {
        "dislike_rate_ratio": "<= 1.5",
        "p95_latency_ratio": "<= 1.5",
        "p95_latency_ms": "<= 3000",
        "faithfulness": ">= 0.95",
    }
)
STATISTICAL = Settings(n_boot=1000)
POINT = Settings(mode="point", min_requests=1, min_responses=1)


def latencies(base: float, n: int = 200, spread: float = 0.2) -> tuple[float, ...]:
    """A deterministic, skewed latency sample around `base` ms (same shape for every base)."""
    return tuple(base * (1 + spread * ((i * 37) % 101) / 100) ** 2 for i in range(n))


def arm(
    dislikes: int = 150,
    responses: int = 5000,
    base_ms: float = 400,
    n: int = 200,
    faithfulness: tuple[float, ...] = (1.0,) * 200,
) -> ArmEvidence:
    return ArmEvidence(latencies(base_ms, n), faithfulness, ArmFeedback(dislikes, responses))


def metric(decision: Any, name: str) -> Any:
    return next(m for m in decision.metrics if m.metric == name)


# --------------------------------------------------------------------------- statistical mode


def test_clearly_healthy_canary_is_promoted() -> None:
    result = decide(Evidence(arm(), arm()), DEFAULT_RULES, STATISTICAL)
    assert result.verdict == "promote"
    assert [m.decision for m in result.metrics] == ["pass"] * 4
    assert len(result.reasons) == 4  # a promote explains itself too
    assert metric(result, "dislike_rate_ratio").reason == (
        "dislike rate 3.0% vs 3.0% (ratio 1.00, 95% CI 0.80–1.25) is within 1.5x control"
    )


def test_more_dislikes_rolls_back_with_the_issues_reason() -> None:
    result = decide(Evidence(arm(60, 1000), arm(108, 3600)), DEFAULT_RULES, STATISTICAL)
    assert result.verdict == "rollback"
    m = metric(result, "dislike_rate_ratio")
    assert m.decision == "fail"
    assert m.reason == "dislike rate 6.0% vs 3.0% (ratio 2.00, 95% CI 1.47–2.72) exceeds 1.5x control"
    assert result.reasons == (m.reason,)
    assert (m.treatment, m.control, m.n_treatment, m.n_control) == (0.06, 0.03, 1000, 3600)


def test_slower_canary_rolls_back() -> None:
    result = decide(Evidence(arm(base_ms=900), arm(base_ms=400)), DEFAULT_RULES, STATISTICAL)
    m = metric(result, "p95_latency_ratio")
    assert (result.verdict, m.decision) == ("rollback", "fail")
    assert m.value == pytest.approx(2.25)
    assert m.ci is not None and m.ci[0] > 1.0
    assert re.fullmatch(
        r"p95 latency 1274 ms vs 566 ms \(ratio 2\.25, 95% CI 2\.\d\d–2\.\d\d\) exceeds 1\.5x control", m.reason
    ), m.reason
    assert metric(result, "p95_latency_ms").decision == "pass"


def test_unfaithful_canary_rolls_back() -> None:
    scores = tuple(0.8 if i % 2 else 0.9 for i in range(200))
    result = decide(Evidence(arm(faithfulness=scores), arm()), DEFAULT_RULES, STATISTICAL)
    m = metric(result, "faithfulness")
    assert (result.verdict, m.decision) == ("rollback", "fail")
    assert m.reason.startswith("faithfulness 0.850 (95% CI 0.8")
    assert m.reason.endswith("; control 1.000) is below 0.95")
    assert m.control == 1.0


def test_absolute_p95_limit_fails_on_its_lower_bound() -> None:
    result = decide(Evidence(arm(base_ms=3500), arm(base_ms=3500)), DEFAULT_RULES, STATISTICAL)
    m = metric(result, "p95_latency_ms")
    assert m.decision == "fail"
    assert m.ci is not None and m.ci[0] > 3000
    assert m.reason.endswith(" ms) exceeds 3000 ms")
    assert metric(result, "p95_latency_ratio").decision == "pass"


@pytest.mark.parametrize(
    ("treatment", "control", "expected"),
    [
        # too few responses, though the point estimate is awful
        (arm(40, 150), arm(3, 150), "dislike rate: too few responses (treatment 150, control 150; need 200 per arm)"),
        # over 1.5x on the point estimate, but not significantly worse than control
        (arm(14, 400), arm(8, 400), "is over 1.5x control but not significantly worse than control"),
        # under 1.5x on the point estimate, but the interval reaches above it
        (arm(35, 1000), arm(30, 1000), "may exceed 1.5x control (the interval reaches above it)"),
    ],
)
def test_dislike_rate_inconclusive(treatment: ArmEvidence, control: ArmEvidence, expected: str) -> None:
    rules = parse_canary_rules({"dislike_rate_ratio": "<= 1.5"})
    result = decide(Evidence(treatment, control), rules, STATISTICAL)
    assert result.verdict == "inconclusive"
    assert expected in result.reasons[0]


def test_zero_dislikes_use_the_corrected_katz_interval() -> None:
    rules = parse_canary_rules({"dislike_rate_ratio": "<= 1.5"})
    m = metric(decide(Evidence(arm(0, 4000), arm(0, 4000)), rules, STATISTICAL), "dislike_rate_ratio")
    assert m.value == 1.0
    assert m.reason.endswith("(a count was zero, so 0.5 was added to every cell)")
    assert m.decision == "inconclusive"  # 0 vs 0 says nothing about a 1.5x rise


def test_p95_limit_needs_enough_requests_for_an_upper_bound() -> None:
    assert min_requests_for_p95_bound(0.95) == 72
    rules = parse_canary_rules({"p95_latency_ms": "<= 3000"})
    few = decide(Evidence(arm(n=71), arm(n=71)), rules, Settings(min_requests=50))
    m = metric(few, "p95_latency_ms")
    assert m.decision == "inconclusive"
    assert m.ci is not None and m.ci[1] == math.inf
    assert m.reason.endswith("may exceed 3000 ms (no upper bound from 71 requests: it needs at least 72)")
    enough = decide(Evidence(arm(n=72), arm(n=72)), rules, Settings(min_requests=50))
    assert enough.verdict == "promote"


@pytest.mark.parametrize("mode", ["statistical", "point"])
def test_missing_or_too_little_data_is_never_a_promote(mode: str) -> None:
    s = Settings(mode=mode)  # type: ignore[arg-type]
    empty = Evidence(ArmEvidence(), ArmEvidence(), feedback_missing=("no series for `x`",))
    result = decide(empty, DEFAULT_RULES, s)
    assert result.verdict == "inconclusive"
    assert {m.decision for m in result.metrics} == {"inconclusive"}
    assert metric(result, "dislike_rate_ratio").reason == (
        "dislike rate: no feedback counts for the treatment and control (no series for `x`)"
    )
    assert metric(result, "faithfulness").reason == "faithfulness: too few scored answers (treatment 0; need 50)"
    small = Evidence(arm(3, 100, n=10, faithfulness=(1.0,) * 10), arm(3, 100, n=10, faithfulness=(1.0,) * 10))
    assert decide(small, DEFAULT_RULES, s).verdict == "inconclusive"


def test_intervals_are_reproducible_for_a_seed() -> None:
    evidence = Evidence(arm(base_ms=410), arm(base_ms=400))
    first, again = decide(evidence, DEFAULT_RULES, STATISTICAL), decide(evidence, DEFAULT_RULES, STATISTICAL)
    assert first == again
    other = decide(evidence, DEFAULT_RULES, Settings(n_boot=1000, seed=99))
    assert metric(other, "p95_latency_ratio").value == metric(first, "p95_latency_ratio").value


@given(st.lists(st.sampled_from(["pass", "fail", "inconclusive"]), max_size=4))
def test_verdict_rule(decisions: list[Any]) -> None:
    verdict = verdict_of(decisions)
    if "fail" in decisions:
        assert verdict == "rollback"
    elif decisions and set(decisions) == {"pass"}:
        assert verdict == "promote"
    else:
        assert verdict == "inconclusive"


# --------------------------------------------------------------------------- point mode = seed 002


def _oracle_fixed(x: float, digits: int) -> str:
    """Number.prototype.toFixed for x >= 0, from the exact binary value (ties go up)."""
    scaled = Fraction(x) * 10**digits
    n = math.floor(scaled + Fraction(1, 2))
    whole, frac = divmod(n, 10**digits)
    return f"{whole}.{frac:0{digits}d}"


def _oracle_string(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def seed_judge_canary(t: dict[str, float], c: dict[str, float]) -> dict[str, Any]:
    """Seed 002's judgeCanary, line by line, its reasons translated."""
    reasons = []
    if t["dislikeRate"] > c["dislikeRate"] * 1.5:
        reasons.append(f"dislike rate {_oracle_fixed(t['dislikeRate'], 3)} exceeds 1.5x baseline")
    if t["p95Ms"] > c["p95Ms"] * 1.5 or t["p95Ms"] > 3000:
        reasons.append(f"P95 latency {_oracle_string(t['p95Ms'])}ms over budget")
    if t["faithfulness"] < 0.95:
        reasons.append(f"online faithfulness {_oracle_fixed(t['faithfulness'], 3)} below threshold 0.95")
    return {"promote": len(reasons) == 0, "reasons": reasons}


def point_evidence(d_t: int, d_c: int, n: int, p95_t: int, p95_c: int, faith: float) -> Evidence:
    return Evidence(
        ArmEvidence((float(p95_t),) * 20, (faith,) * 20, ArmFeedback(d_t, n)),
        ArmEvidence((float(p95_c),) * 20, (1.0,) * 20, ArmFeedback(d_c, n)),
    )


def assert_matches_seed(d_t: int, d_c: int, n: int, p95_t: int, p95_c: int, faith: float) -> list[str]:
    expected = seed_judge_canary(
        {"dislikeRate": d_t / n, "p95Ms": p95_t, "faithfulness": faith}, {"dislikeRate": d_c / n, "p95Ms": p95_c}
    )
    result = decide(point_evidence(d_t, d_c, n, p95_t, p95_c, faith), DEFAULT_RULES, POINT)
    assert (result.verdict == "promote") == expected["promote"]
    assert result.verdict in ("promote", "rollback")
    assert list(result.reasons) == expected["reasons"]
    return list(result.reasons)


def test_point_mode_all_three_reasons() -> None:
    reasons = assert_matches_seed(46, 30, 1000, 3200, 2000, 0.912)
    assert reasons == [
        "dislike rate 0.046 exceeds 1.5x baseline",
        "P95 latency 3200ms over budget",
        "online faithfulness 0.912 below threshold 0.95",
    ]


@pytest.mark.parametrize(
    ("p95_t", "p95_c", "broken"),
    [
        (3000, 2500, False),  # exactly the absolute limit: not over
        (3001, 2500, True),  # over the absolute limit, within 1.5x
        (1500, 1000, False),  # exactly 1.5x control: not over
        (1501, 1000, True),  # over 1.5x control, far under 3000
        (4000, 3000, True),  # both broken: one reason
    ],
)
def test_point_mode_latency_boundaries(p95_t: int, p95_c: int, broken: bool) -> None:
    reasons = assert_matches_seed(30, 30, 1000, p95_t, p95_c, 0.99)
    assert reasons == ([f"P95 latency {p95_t}ms over budget"] if broken else [])


@pytest.mark.parametrize(
    ("d_t", "d_c", "faith", "expected"),
    [
        (45, 30, 0.95, []),  # exactly 1.5x control and exactly 0.95: the seed passes both
        (46, 30, 0.95, ["dislike rate 0.046 exceeds 1.5x baseline"]),
        (30, 30, 0.9499, ["online faithfulness 0.950 below threshold 0.95"]),  # toFixed rounds the text, not the test
        (1, 0, 1.0, ["dislike rate 0.001 exceeds 1.5x baseline"]),  # any dislike over a clean control
        (0, 0, 1.0, []),
    ],
)
def test_point_mode_dislike_and_faithfulness_boundaries(d_t: int, d_c: int, faith: float, expected: list[str]) -> None:
    assert assert_matches_seed(d_t, d_c, 1000, 500, 500, faith) == expected


@settings(max_examples=300, deadline=None)
@given(
    d_t=st.integers(0, 200),
    d_c=st.integers(0, 200),
    n=st.sampled_from([200, 1000, 1600, 3000]),
    p95_t=st.integers(1, 6000),
    p95_c=st.integers(1, 6000),
    faith=st.one_of(st.sampled_from([0.0, 0.9, 0.949, 0.9495, 0.95, 0.9505, 1.0]), st.floats(0, 1)),
)
def test_point_mode_matches_the_seed(d_t: int, d_c: int, n: int, p95_t: int, p95_c: int, faith: float) -> None:
    assert_matches_seed(d_t, d_c, n, p95_t, p95_c, faith)


def test_point_mode_latency_is_whole_milliseconds() -> None:
    evidence = Evidence(
        ArmEvidence((3000.4,) * 20, (1.0,) * 20, ArmFeedback(1, 100)),
        ArmEvidence((2500.0,) * 20, (1.0,) * 20, ArmFeedback(1, 100)),
    )
    assert decide(evidence, DEFAULT_RULES, POINT).verdict == "promote"  # 3000 ms, as Date.now() would say
    late = Evidence(ArmEvidence((3000.5,) * 20, (1.0,) * 20, ArmFeedback(1, 100)), evidence.control)
    assert decide(late, DEFAULT_RULES, POINT).reasons == ("P95 latency 3001ms over budget",)


def test_point_mode_guards_only_block_a_promote() -> None:
    few = Settings(mode="point")  # min_requests 50, min_responses 200
    bad = point_evidence(46, 30, 100, 3500, 1000, 0.5)
    result = decide(bad, DEFAULT_RULES, few)
    assert result.verdict == "rollback"
    assert len(result.reasons) == 3  # the seed's reasons, even on little data
    good = point_evidence(30, 30, 100, 500, 500, 1.0)
    result = decide(good, DEFAULT_RULES, few)
    assert result.verdict == "inconclusive"
    assert "dislike rate: too few responses (treatment 100, control 100; need 200 per arm)" in result.reasons


def test_point_mode_uses_configured_thresholds() -> None:
    rules = parse_canary_rules({"dislike_rate_ratio": "<= 2", "p95_latency_ms": "<= 800", "faithfulness": ">= 0.9"})
    result = decide(point_evidence(61, 30, 1000, 900, 900, 0.85), rules, POINT)
    assert result.reasons == (
        "dislike rate 0.061 exceeds 2x baseline",
        "P95 latency 900ms over budget",
        "online faithfulness 0.850 below threshold 0.9",
    )


@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [
        (0.0625, 3, "0.063"),
        (0.046, 3, "0.046"),
        (1.0005, 3, "1.000"),
        (0.9995, 3, "1.000"),
        (1.005, 2, "1.00"),
        (2.5, 0, "3"),
        (0, 3, "0.000"),
    ],
)
def test_to_fixed_is_javascripts(x: float, digits: int, text: str) -> None:
    # 1.0005 and 1.005 are just below their halves in binary, 0.9995 just above; 0.0625 and 2.5 are exact ties,
    # which JavaScript rounds up (Python's format would give 0.062 and 2).
    assert js_to_fixed(x, digits) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (3000.0, "3000"),
        (0.95, "0.95"),
        (1.5, "1.5"),
        (3123.25, "3123.25"),
        (1e-7, "1e-7"),
        (0.00001, "0.00001"),
        (1e21, "1e+21"),
    ],
)
def test_number_to_string_is_javascripts(x: float, text: str) -> None:
    assert js_number(x) == text


# --------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"error_rate": "<= 0.1"}, "canary.rules.error_rate: unknown canary metric 'error_rate'"),
        ({"faithfulness": "<= 0.95"}, "canary.rules.faithfulness: must be a lower limit (>= or >)"),
        ({"p95_latency_ratio": ">= 1.5"}, "canary.rules.p95_latency_ratio: must be an upper limit (<= or <)"),
        ({"p95_latency_ms": "== 3000"}, "canary.rules.p95_latency_ms: cannot parse rule '== 3000'"),
        ({"dislike_rate_ratio": "<= 0"}, "canary.rules.dislike_rate_ratio: the threshold must be above 0"),
        ({"faithfulness": ">= 2"}, "canary.rules.faithfulness: faithfulness is between 0 and 1"),
        ({}, "canary.rules: no rules"),
    ],
)
def test_bad_rules(rules: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_canary_rules(rules)
    assert info.value.message.startswith(message)


def test_rules_come_out_in_report_order() -> None:
    rules = parse_canary_rules({"faithfulness": "> 0.9", "dislike_rate_ratio": "< 2"})
    assert [(r.metric, r.op, r.threshold) for r in rules] == [
        ("dislike_rate_ratio", "<", 2.0),
        ("faithfulness", ">", 0.9),
    ]


def test_point_mode_holds_a_ratio_rule_against_control_times_the_threshold() -> None:
    rules = parse_canary_rules({"dislike_rate_ratio": "<= 1.5", "p95_latency_ratio": "<= 1.5"})
    result = decide(Evidence(arm(dislikes=160, base_ms=480), arm(base_ms=400)), rules, POINT)
    assert result.verdict == "promote"
    assert [m.reason for m in result.metrics] == [
        "dislike rate 0.032 within 1.5x baseline 0.030",
        "P95 latency 680ms within 1.5x baseline 566ms",
    ]


def test_javascript_number_forms_at_their_edges() -> None:
    assert (js_number(1e21), js_to_fixed(1e21, 2)) == ("1e+21", "1e+21")
    assert (js_number(1e20), js_to_fixed(0.0, 3), js_to_fixed(-0.5, 1)) == ("100000000000000000000", "0.000", "-0.5")


@pytest.mark.parametrize(("threshold", "ok"), [("1", True), ("0", True), ("1.01", False)])
def test_a_faithfulness_threshold_may_be_0_to_1_inclusive(threshold: str, ok: bool) -> None:
    if ok:
        [rule] = parse_canary_rules({"faithfulness": f">= {threshold}"})
        assert rule.threshold == float(threshold)
    else:
        with pytest.raises(ConfigError):
            parse_canary_rules({"faithfulness": f">= {threshold}"})


def test_point_mode_faithfulness_is_the_mean_of_the_scored_answers() -> None:
    rules = parse_canary_rules({"faithfulness": ">= 0.9"})
    evidence = Evidence(ArmEvidence(latencies(400), (1.0, 0.5)), ArmEvidence(latencies(400), (1.0, 0.6)))
    [result] = decide(evidence, rules, POINT).metrics
    assert (result.decision, result.treatment, result.control) == ("fail", 0.75, 0.8)
    assert result.reason == "online faithfulness 0.750 below threshold 0.9"


def test_small_numbers_in_javascript_form() -> None:
    assert (js_number(1e-6), js_number(1e-7), js_number(-2.5e-7)) == ("0.000001", "1e-7", "-2.5e-7")


@pytest.mark.parametrize("metric", ["dislike_rate_ratio", "p95_latency_ratio", "p95_latency_ms"])
def test_an_upper_limit_must_be_above_0(metric: str) -> None:
    assert parse_canary_rules({metric: "<= 0.5"})[0].threshold == 0.5
    with pytest.raises(ConfigError, match="the threshold must be above 0"):
        parse_canary_rules({metric: "<= 0"})


def test_point_mode_with_no_dislikes_on_either_arm_holds_at_a_zero_baseline() -> None:
    rules = parse_canary_rules({"dislike_rate_ratio": "<= 1.5"})
    [result] = decide(Evidence(arm(dislikes=0), arm(dislikes=0)), rules, POINT).metrics
    assert (result.decision, result.treatment, result.control) == ("pass", 0.0, 0.0)
    assert result.reason == "dislike rate 0.000 within 1.5x baseline 0.000"


def test_whole_numbers_in_javascript_form() -> None:
    assert (js_number(0.0), js_number(1.0), js_number(-3.0), js_number(3000.0)) == ("0", "1", "-3", "3000")


def test_point_mode_reports_a_ratio_rules_ratio() -> None:
    rules = parse_canary_rules({"p95_latency_ratio": "<= 1.5"})
    [result] = decide(Evidence(arm(base_ms=480), arm(base_ms=400)), rules, POINT).metrics
    assert (result.treatment, result.control, result.value) == (680, 566, 680 / 566)
