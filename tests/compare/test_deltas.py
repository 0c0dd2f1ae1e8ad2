"""The figures behind the regression rules: which pairs each one counts, and when it is not comparable."""

from __future__ import annotations

import re

import pytest

from ragjudge import stats
from ragjudge.compare.deltas import Settings, all_deltas
from ragjudge.metrics.names import COST_USD as COST
from ragjudge.metrics.names import P95_LATENCY_MS as P95_LATENCY
from ragjudge.metrics.names import P95_TTFT_MS as P95_TTFT
from ragjudge.metrics.names import PASS_RATE
from ragjudge.report.case_block import CaseBlock, RunBlock
from ragjudge.report.comparison_block import DeltaBlock
from tests.fakes.reports import C

SETTINGS = Settings(alpha=0.05, judge_comparable=True, judge_reason=None)


def pairs(now: list[C], base: list[C]) -> list[tuple[CaseBlock, CaseBlock]]:
    return [(a.block(), b.block()) for a, b in zip(now, base, strict=True)]


def figure(found: list[DeltaBlock], metric: str) -> DeltaBlock:
    [block] = [d for d in found if d.metric == metric]
    return block


def test_mcnemar_reads_the_broken_and_the_fixed_pairs_once_each() -> None:
    # 3 broken (passed on the baseline, fail now), 1 fixed, 6 that pass in both.
    base = [C(f"c{i}", "pass" if i < 3 or i >= 4 else "fail") for i in range(10)]
    now = [C(f"c{i}", "fail" if i < 3 else "pass") for i in range(10)]
    delta = figure(all_deltas(pairs(now, base), SETTINGS), PASS_RATE)

    assert delta.p_value == stats.mcnemar_exact(3, 1) == 0.625
    assert delta.p_value != stats.mcnemar_exact(3, 2)  # a fixed case counted twice
    assert delta.test == "exact McNemar test on 4 discordant of 10 paired cases; paired bootstrap interval"
    assert (delta.base, delta.now, delta.delta) == (0.9, pytest.approx(0.7), pytest.approx(-0.2))
    assert (delta.significant, delta.cases) == (False, 10)


def test_still_failing_pairs_are_not_discordant() -> None:
    base = [C("a", "fail"), C("b", "fail"), C("c")]
    now = [C("a", "fail"), C("b"), C("c", "fail")]
    delta = figure(all_deltas(pairs(now, base), SETTINGS), PASS_RATE)
    assert delta.test == "exact McNemar test on 2 discordant of 3 paired cases; paired bootstrap interval"
    assert delta.p_value == 1.0 and delta.delta == 0.0


@pytest.mark.parametrize(("now_cost", "base_cost"), [(-0.01, 0.01), (0.01, -0.01)])
def test_a_negative_endpoint_cost_on_either_side_is_not_comparable(now_cost: float, base_cost: float) -> None:
    now = [C("a", cost=0.01), C("b", cost=now_cost)]
    base = [C("a", cost=0.01), C("b", cost=base_cost)]
    cost = figure(all_deltas(pairs(now, base), SETTINGS), COST)
    assert (cost.comparable, cost.delta, cost.significant) == (False, None, None)
    assert cost.reason == "not comparable: a negative endpoint cost"


def test_a_zero_cost_is_a_cost() -> None:
    now = [C("a", cost=0.0), C("b", cost=0.02)]
    base = [C("a", cost=0.0), C("b", cost=0.01)]
    cost = figure(all_deltas(pairs(now, base), SETTINGS), COST)
    assert (cost.comparable, cost.delta, cost.base, cost.now) == (True, 2.0, 0.01, 0.02)


def test_a_ratio_is_significant_only_when_its_interval_excludes_1() -> None:
    base = [C(f"c{i}", latency=100.0 + i) for i in range(20)]
    same = figure(all_deltas(pairs(base, base), SETTINGS), P95_LATENCY)
    assert (same.delta, same.ci_low, same.ci_high, same.significant) == (1.0, 1.0, 1.0, False)
    faster = [C(f"c{i}", latency=(100.0 + i) / 2) for i in range(20)]
    half = figure(all_deltas(pairs(faster, base), SETTINGS), P95_LATENCY)
    assert (half.delta, half.ci_high, half.significant) == (0.5, 0.5, True)
    slower = [C(f"c{i}", latency=(100.0 + i) * 2) for i in range(20)]
    double = figure(all_deltas(pairs(slower, base), SETTINGS), P95_LATENCY)
    assert (double.delta, double.ci_low, double.significant) == (2.0, 2.0, True)


def test_a_scored_metric_is_shown_without_a_rule_and_cost_when_either_side_has_one() -> None:
    now = [C("a", faithfulness=0.5, cost=0.02), C("b", faithfulness=1.0)]
    base = [C("a", faithfulness=1.0), C("b", faithfulness=1.0)]
    found = all_deltas(pairs(now, base), SETTINGS)
    assert [d.metric for d in found] == [PASS_RATE, "faithfulness", P95_LATENCY, COST]
    faith = figure(found, "faithfulness")
    assert faith.reason.startswith("faithfulness 1.000 -> 0.750: -0.250 (95% interval ")
    cost = figure(found, COST)
    assert (cost.comparable, cost.reason) == (False, "not comparable: no case has its endpoint cost in both reports")
    on_base = all_deltas(pairs([C("a")], [C("a", cost=0.01)]), SETTINGS)
    assert [d.metric for d in on_base] == [PASS_RATE, P95_LATENCY, COST]
    assert [d.metric for d in all_deltas(pairs([C("a")], [C("a")]), SETTINGS)] == [PASS_RATE, P95_LATENCY]


def test_the_interval_is_named_by_its_confidence() -> None:
    ninety = Settings(alpha=0.1, judge_comparable=True, judge_reason=None)
    base = [C(f"c{i}", latency=100.0 + i) for i in range(20)]
    lat = figure(all_deltas(pairs(base, base), ninety), P95_LATENCY)
    assert lat.reason == "p95 latency 118 ms -> 118 ms: ratio 1.00 (90% interval 1.00 to 1.00; not significant)"


def test_ttft_is_compared_when_either_side_streamed() -> None:
    found = all_deltas(pairs([C("a", ttft=50.0)], [C("a")]), SETTINGS)
    assert [d.metric for d in found] == [PASS_RATE, P95_LATENCY, P95_TTFT]
    assert figure(found, P95_TTFT).reason == "not comparable: no case has its p95 time to first token in both reports"
    assert P95_TTFT in [d.metric for d in all_deltas(pairs([C("a")], [C("a", ttft=50.0)]), SETTINGS)]


def test_a_ratio_names_its_bootstrap() -> None:
    base = [C(f"c{i}", latency=100.0 + i) for i in range(20)]
    lat = figure(all_deltas(pairs(base, base), SETTINGS), P95_LATENCY)
    assert lat.test == "paired bootstrap of the ratio over 20 cases (2000 resamples)"


def test_a_judge_dimension_delta_reads_in_two_digits() -> None:
    now = [C(f"c{i}", grounding=0.5) for i in range(3)]
    base = [C(f"c{i}", grounding=1.0) for i in range(3)]
    grounding = figure(all_deltas(pairs(now, base), SETTINGS), "judge.grounding")
    assert grounding.reason.startswith("judge.grounding 1.00 -> 0.50: -0.50 (95% interval -0.50 to -0.50;")


def test_a_repeated_cases_cost_is_its_first_runs() -> None:
    first = (
        C("a").block().model_copy(update={"runs": [RunBlock(status="fail", cost_usd=0.02), RunBlock(status="pass")]})
    )
    base = C("a", cost=0.01).block()
    cost = figure(all_deltas([(first, base)], SETTINGS), COST)
    assert (cost.comparable, cost.now, cost.base, cost.delta) == (True, 0.02, 0.01, 2.0)


# --- the reason's word and the flag are one decision ---------------------------------------------------

_WORD = re.compile(r"; (significant|not significant)(?: \((?:p < 0\.001|p \d\.\d{3})\))?\)$")


def _word(delta: DeltaBlock) -> str:
    found = _WORD.search(delta.reason)
    assert found is not None, delta.reason
    return found.group(1)


@pytest.mark.parametrize(("broke", "alpha"), [(5, 0.0625), (6, 0.0625), (5, 0.07), (40, 0.05), (0, 0.05)])
def test_a_delta_says_significant_exactly_when_its_flag_is_true(broke: int, alpha: float) -> None:
    # `broke` cases pass on the baseline and fail now: McNemar's p is 2 * 0.5**broke (0.0625 for 5, at an alpha of
    # 0.0625 not below it); their faithfulness falls and their latency doubles with them.
    settings = Settings(alpha=alpha, judge_comparable=True, judge_reason=None)
    base = [C(f"c{i}", faithfulness=1.0, grounding=1.0, latency=100.0 + i, cost=0.01) for i in range(40)]
    now = [
        C(f"c{i}", "fail" if i < broke else "pass", faithfulness=0.0 if i < broke else 1.0, grounding=1.0,
          latency=(100.0 + i) * (2 if i < broke else 1), cost=0.01)
        for i in range(40)
    ]  # fmt: skip
    found = all_deltas(pairs(now, base), settings)
    assert [d.metric for d in found] == [PASS_RATE, "faithfulness", "judge.grounding", P95_LATENCY, COST]
    for delta in found:
        assert delta.comparable and delta.significant is not None
        assert (_word(delta) == "significant") is delta.significant, delta.reason
    flags = {d.metric: d.significant for d in found}
    expected_pass_rate = broke > 0 and 0.5 ** (broke - 1) < alpha
    assert (flags[PASS_RATE], flags["judge.grounding"], flags[COST]) == (expected_pass_rate, False, False)
    assert flags[P95_LATENCY] is (broke >= 3)  # the p95 (38th of 40) is a slowed reply once 3 or more are


@pytest.mark.parametrize(("factor", "significant"), [(0.5, True), (1.0, False), (2.0, True)])
def test_a_ratio_says_significant_exactly_when_its_flag_is_true_faster_or_slower(
    factor: float, significant: bool
) -> None:
    base = [C(f"c{i}", latency=100.0 + i, cost=0.01 + i / 1000) for i in range(20)]
    now = [C(f"c{i}", latency=(100.0 + i) * factor, cost=(0.01 + i / 1000) * factor) for i in range(20)]
    found = all_deltas(pairs(now, base), SETTINGS)
    for metric in (P95_LATENCY, COST):
        delta = figure(found, metric)
        assert (delta.significant, _word(delta)) == (significant, "significant" if significant else "not significant")


def test_tool_condition_accuracy_is_compared_over_the_cases_known_in_both() -> None:
    # Issue 38: the metric is in the registry for rules and regressions. 6 cases with tool conditions known in both
    # runs (2 broke, none fixed), one unknown now (the service exposed no tool calls): left out, not a failure.
    held = ["held"] * 7
    now_held = ["failed", "failed", "held", "held", "held", "held", "unknown"]
    base = [C(f"c{i}").block().model_copy(update={"tools_held": h}) for i, h in enumerate(held)]
    now = [C(f"c{i}").block().model_copy(update={"tools_held": h}) for i, h in enumerate(now_held)]
    delta = figure(all_deltas(list(zip(now, base, strict=True)), SETTINGS), "tool_condition_accuracy")
    assert delta.test == "exact McNemar test on 2 discordant of 6 paired cases; paired bootstrap interval"
    assert (delta.base, delta.now, delta.cases) == (1.0, pytest.approx(4 / 6), 6)
    assert delta.p_value == stats.mcnemar_exact(2, 0)
    # No case with tool conditions: no such figure.
    plain = all_deltas(pairs([C("a")], [C("a")]), SETTINGS)
    assert "tool_condition_accuracy" not in [d.metric for d in plain]
