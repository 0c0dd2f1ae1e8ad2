"""The headline: why the gate blocked, what this change did, how far from green; and the failure groups."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.fakes.reports import C, report

from ragjudge.compare import compare_with_baseline
from ragjudge.config.loader import parse_config
from ragjudge.report.failure_groups import failure_groups, split_condition
from ragjudge.report.headline import cases_to_pass, with_headline
from ragjudge.report.model import Report
from ragjudge.report.suite_block import RuleBlock

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def pass_rate_rule(statuses: list[str], threshold: float = 0.9, op: str = ">=") -> RuleBlock:
    value = statuses.count("pass") / len(statuses)
    passed = value >= threshold if op == ">=" else value > threshold
    return RuleBlock(
        scope="suite", metric="pass_rate", op=op, threshold=threshold, value=value, passed=passed, reason="r"
    )


def gated(cases: list[C], threshold: float = 0.9, op: str = ">=") -> Report:
    rule = pass_rate_rule([c.status for c in cases], threshold, op)
    return report(cases, suite_rules=[rule], verdict="pass" if rule.passed else "fail")


def compared(now: list[C], base: list[C], threshold: float = 0.9) -> Report:
    config = parse_config({}, "t", Path("."))
    result = compare_with_baseline(gated(now, threshold), gated(base, threshold), config, now=NOW)
    return with_headline(result)


def cases_of(fail: set[int], n: int = 43, conditions: dict[int, list[str]] | None = None) -> list[C]:
    return [C(f"r{i:02d}", "fail" if i in fail else "pass", conditions=(conditions or {}).get(i, [])) for i in range(n)]


def test_main_already_failing_pass_rate_and_two_regressions() -> None:
    # Main fails 5 of 43 (0.884 < 0.9); the PR breaks r03 and r07 besides.
    main = cases_of({10, 11, 12, 13, 14})
    pr = cases_of({3, 7, 10, 11, 12, 13, 14})
    result = compared(pr, main)
    assert result.headline is not None
    assert result.headline.model_dump() == {
        # This run's pass_rate first; main's labelled as main's.
        "sentence": "Blocked by 2 regressions (r03, r07); pass_rate 0.837 < 0.9, failing on main@0123456 too "
        "(0.884 there). 3 more cases must pass.",
        "new_failures": ["r03", "r07"],
        "fixed": [],
        "pre_existing": ["r10", "r11", "r12", "r13", "r14"],
        "rules_failing_on_main": ["pass_rate"],
        "cases_to_pass": 3,  # 36 pass; 0.9 * 43 = 38.7, so 39 must
    }


@pytest.mark.parametrize(
    ("passing", "total", "op", "threshold", "needed"),
    [
        (36, 43, ">=", 0.9, 3),
        (38, 43, ">=", 0.9, 1),
        (9, 10, ">=", 0.9, None),  # holds: nothing to pass
        (9, 10, ">", 0.9, 1),  # 0.9 > 0.9 fails; 10 of 10 holds
        (0, 10, ">=", 1.0, 10),
        (5, 10, ">", 1.0, None),  # cannot hold however many pass
    ],
)
def test_cases_to_pass_is_the_fewest_that_make_the_rule_hold(
    passing: int, total: int, op: str, threshold: float, needed: int | None
) -> None:
    cases = [C(f"c{i}", "pass" if i < passing else "fail") for i in range(total)]
    assert cases_to_pass(gated(cases, threshold, op)) == needed


def test_a_rule_failing_only_now_is_this_changes() -> None:
    main = cases_of(set(), n=10)
    pr = cases_of({4}, n=10)
    headline = compared(pr, main).headline
    assert headline is not None
    # 9 of 10 still meets pass_rate >= 0.9: the regression rule alone blocks, and no count of cases would help.
    assert headline.sentence == "Blocked by 1 regression (r04)."
    assert (headline.rules_failing_on_main, headline.cases_to_pass) == ([], None)


def test_without_a_baseline_the_rule_blocks() -> None:
    result = with_headline(gated(cases_of({1, 2}, n=10)))
    assert result.headline is not None
    assert result.headline.sentence == "Blocked by pass_rate 0.800 < 0.9. 1 more case must pass."
    assert (result.headline.new_failures, result.headline.pre_existing) == ([], [])


def test_a_passing_run_says_what_it_fixed() -> None:
    result = compared(cases_of(set(), n=10), cases_of({5}, n=10))
    assert result.headline is not None
    assert (
        result.headline.sentence == "10 of 10 cases pass and every rule holds; 1 case fixed against main@0123456 (r05)."
    )
    assert result.headline.fixed == ["r05"]
    assert result.headline.cases_to_pass is None


def test_many_failing_cases_on_one_condition_name_it() -> None:
    shared = {i: ["endpoint error: HTTP 502 after 3 attempts"] for i in range(12)}
    result = with_headline(gated(cases_of(set(range(12)), n=20, conditions=shared)))
    assert result.headline is not None
    assert result.headline.sentence == (
        "Blocked by pass_rate 0.400 < 0.9. 10 more cases must pass. All 12 failing cases share one cause: endpoint "
        "error: HTTP 502 after 3 attempts."
    )


def test_four_cases_on_one_condition_are_one_group() -> None:
    conditions = {
        1: ['missing required detail: "warranty card"'],
        2: ['missing required detail: "warranty card"', "faithfulness 0.500 < 0.8 (1 of 2 claims unsupported)"],
        3: ['missing required detail: "warranty card"'],
        4: ['missing required detail: "warranty card"'],
        5: ["faithfulness 0.200 < 0.8 (2 of 2 claims unsupported)"],
        6: ['missing required detail: "30 minutes"'],
    }
    groups = failure_groups(report(cases_of(set(conditions), n=8, conditions=conditions)).cases)
    assert [(g.condition, g.cases) for g in groups] == [
        ("missing required detail", ["r01", "r02", "r03", "r04", "r06"]),
        ("faithfulness < 0.8", ["r02", "r05"]),
    ]


def test_a_group_of_one_text_keeps_it_word_for_word() -> None:
    conditions = {i: ['missing required detail: "warranty card"'] for i in range(4)}
    groups = failure_groups(report(cases_of(set(conditions), n=6, conditions=conditions)).cases)
    assert [(g.condition, len(g.cases)) for g in groups] == [('missing required detail: "warranty card"', 4)]


@pytest.mark.parametrize(
    ("text", "shared", "own"),
    [
        (
            'faithfulness 0.500 < 0.8 (1 of 2 claims unsupported: "x")',
            "faithfulness < 0.8",
            '0.500 (1 of 2 claims unsupported: "x")',
        ),
        ('missing required detail: "30 minutes"', "missing required detail", '"30 minutes"'),
        ("endpoint error: HTTP 500 after 3 attempts", "endpoint error: HTTP 500 after 3 attempts", ""),
        ('turn 2: contains forbidden claim: "free"', "contains forbidden claim", 'turn 2: "free"'),
        ("judge.relevance 2 < 4: off topic", "judge.relevance < 4", "2: off topic"),
        ('contradicts the reference: "7 d" (answer: "15 d")', "contradicts the reference", '"7 d" (answer: "15 d")'),
    ],
)
def test_a_condition_splits_into_what_cases_share_and_what_is_their_own(text: str, shared: str, own: str) -> None:
    split = split_condition(text)
    assert (split.shared, split.own) == (shared, own)


@pytest.mark.parametrize(
    ("why", "sentence"),
    [
        (
            "all 2 cases errored: endpoint error: An error occurred.",
            "All 2 cases errored: endpoint error: An error occurred.",
        ),
        ("all 2 cases errored: endpoint error: HTTP 500", "All 2 cases errored: endpoint error: HTTP 500."),
    ],
)
def test_an_error_verdict_says_why_in_one_sentence(why: str, sentence: str) -> None:
    errored = report([C("a", "error"), C("b", "error")], verdict="error")
    headline = with_headline(errored.model_copy(update={"error_reason": why})).headline
    assert headline is not None and headline.sentence == sentence
