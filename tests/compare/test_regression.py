"""How one regression rule is decided from its figure: over the line, for the worse, and significant."""

from __future__ import annotations

from typing import Literal

import pytest

from ragjudge.compare.regression import decide, verdict_with
from ragjudge.report.comparison_block import DeltaBlock
from ragjudge.report.suite_block import RuleBlock
from ragjudge.rules import Rule


def figure(
    metric: str,
    value: float,
    *,
    kind: Literal["delta", "ratio"] = "delta",
    p: float | None = None,
    ci: tuple[float, float] = (0.0, 0.0),
) -> DeltaBlock:
    return DeltaBlock(
        metric=metric,
        base=None,
        now=None,
        delta=value,
        ci_low=ci[0],
        ci_high=ci[1],
        p_value=p,
        significant=None,
        test="",
        comparable=True,
        reason="",
        kind=kind,
    )


def test_a_delta_exactly_at_its_null_under_a_rule_that_demands_improvement_does_not_block() -> None:
    rule = Rule("regression", "faithfulness_delta", ">=", 0.05)
    found = decide(rule, [], [figure("faithfulness", 0.0, p=0.001, ci=(-0.01, 0.01))], 0.05)
    assert (found.passed, found.value) == (True, 0.0)
    assert found.reason == "faithfulness_delta +0.000 < +0.050 but no worse than the baseline: not blocking"


def test_a_ratio_exactly_at_1_under_a_rule_that_demands_improvement_does_not_block() -> None:
    rule = Rule("regression", "p95_latency_ratio", "<=", 0.9)
    # An interval wholly above 1 around a point of exactly 1.00: the point is no worse, so nothing blocks.
    found = decide(rule, [], [figure("p95_latency_ms", 1.0, kind="ratio", ci=(1.01, 1.2))], 0.05)
    assert (found.passed, found.value) == (True, 1.0)
    assert found.reason == "p95_latency_ratio 1.00 > 0.90 but no worse than the baseline: not blocking"


def test_a_delta_for_the_worse_blocks_only_when_significant() -> None:
    rule = Rule("regression", "pass_rate_delta", ">=", -0.02)
    worse = [figure("pass_rate", -0.2, p=0.01)]
    found = decide(rule, [], worse, 0.05)
    assert (found.passed, found.reason) == (False, "pass_rate_delta -0.200 < -0.020, significant (p 0.010, below 0.05)")
    at_alpha = decide(rule, [], [figure("pass_rate", -0.2, p=0.05)], 0.05)
    assert at_alpha.passed is True
    assert at_alpha.reason == (
        "pass_rate_delta -0.200 < -0.020 but not significant (p 0.050, not below 0.05): not blocking"
    )
    no_p = decide(rule, [], [figure("pass_rate", -0.2, p=None)], 0.05)
    assert no_p.passed is True and "(p 1.000, not below 0.05)" in no_p.reason


def test_a_floor_rule_on_a_ratio_with_interval_0_to_0_blocks() -> None:
    rule = Rule("regression", "cost_ratio", ">=", 0.5)
    found = decide(rule, [], [figure("cost_usd", 0.0, kind="ratio", ci=(0.0, 0.0))], 0.05)
    assert (found.passed, found.value) == (False, 0.0)
    assert found.reason == "cost_ratio 0.00 < 0.50, significant (95% interval 0.00 to 0.00 excludes 1)"


@pytest.mark.parametrize(
    ("ci", "passed", "words"),
    [((1.5, 2.5), False, "excludes"), ((1.0, 2.5), True, "includes"), ((0.0, 2.5), True, "includes")],
)
def test_a_ceiling_rule_on_a_ratio_blocks_when_the_interval_is_wholly_above_1(
    ci: tuple[float, float], passed: bool, words: str
) -> None:
    rule = Rule("regression", "p95_latency_ratio", "<=", 1.2)
    found = decide(rule, [], [figure("p95_latency_ms", 2.0, kind="ratio", ci=ci)], 0.05)
    assert found.passed is passed
    assert f"95% interval {ci[0]:.2f} to {ci[1]:.2f} {words} 1" in found.reason


def test_a_held_rule_and_newly_failing() -> None:
    held = decide(Rule("regression", "pass_rate_delta", ">=", -0.02), [], [figure("pass_rate", 0.0, p=1.0)], 0.05)
    assert (held.passed, held.reason) == (True, "pass_rate_delta +0.000 >= -0.02")
    at_line = decide(Rule("regression", "newly_failing", "<=", 1.0), ["a"], [], 0.05)
    assert (at_line.passed, at_line.value, at_line.reason) == (True, 1.0, "newly_failing 1 <= 1")
    over = decide(Rule("regression", "newly_failing", "<=", 0.0), [f"c{i}" for i in range(7)], [], 0.05)
    assert (over.passed, over.value) == (False, 7.0)
    assert over.reason == "newly_failing 7 > 0: c0, c1, c2, c3, c4 and 2 more"
    five = decide(Rule("regression", "newly_failing", "<=", 0.0), [f"c{i}" for i in range(5)], [], 0.05)
    assert five.reason == "newly_failing 5 > 0: c0, c1, c2, c3, c4"


def test_a_figure_not_measured_is_not_gated() -> None:
    found = decide(Rule("regression", "cost_ratio", "<=", 1.2), [], [], 0.05)
    assert (found.passed, found.value) == (None, None)
    assert found.reason == "cost_ratio not gated: cost_usd was not measured in both reports"


def test_the_verdict_with_regression_rules() -> None:
    def block(scope: Literal["suite", "case", "regression"], passed: bool | None) -> RuleBlock:
        return RuleBlock(scope=scope, metric="m", op="<=", threshold=0, value=0, passed=passed, reason="")

    assert verdict_with([block("suite", True)], [block("regression", None)], "pass") == "pass"
    assert verdict_with([block("suite", True)], [block("regression", False)], "pass") == "fail"
    assert verdict_with([block("suite", False)], [], "pass") == "fail"
    assert verdict_with([block("case", False)], [], "fail") == "pass"  # case rules reach the verdict via cases
    assert verdict_with([block("suite", False)], [block("regression", False)], "error") == "error"


def test_a_floor_rule_on_a_ratio_blocks_only_when_the_interval_is_wholly_below_1() -> None:
    rule = Rule("regression", "cost_ratio", ">=", 0.5)
    noisy = decide(rule, [], [figure("cost_usd", 0.4, kind="ratio", ci=(0.3, 1.2))], 0.05)
    assert noisy.passed is True
    assert (
        noisy.reason
        == "cost_ratio 0.40 < 0.50 but not significant (95% interval 0.30 to 1.20 includes 1): not blocking"
    )
    clear = decide(rule, [], [figure("cost_usd", 0.4, kind="ratio", ci=(0.3, 0.6))], 0.05)
    assert clear.passed is False


def test_a_floor_rule_on_a_ratio_whose_interval_ends_at_exactly_1_does_not_block() -> None:
    rule = Rule("regression", "cost_ratio", ">=", 0.5)
    found = decide(rule, [], [figure("cost_usd", 0.4, kind="ratio", ci=(0.3, 1.0))], 0.05)
    assert found.passed is True and found.reason.endswith("(95% interval 0.30 to 1.00 includes 1): not blocking")
