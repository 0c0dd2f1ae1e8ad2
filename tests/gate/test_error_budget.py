"""The error budget (`gate.max_error_rate`): past it the verdict is `error`, naming the error that dominated."""

from __future__ import annotations

import pytest

from ragjudge.gate.error_budget import judge_bugs, over_budget

DOWN = "endpoint error: connection refused by 127.0.0.1:9 after 1 attempt"
MAPPING = 'endpoint error: endpoint.response.answer "result.answer" found nothing'


def _cases(errors: list[str], passed: int = 0, failed: int = 0) -> list[tuple[str, list[str]]]:
    return [("error", [e, "later reason"]) for e in errors] + [("pass", [])] * passed + [("fail", ["x"])] * failed


def test_13_of_15_errored_is_over_the_default_budget_naming_the_most_common_error() -> None:
    cases = _cases([MAPPING] * 12 + [DOWN], passed=1, failed=1)
    assert over_budget(cases, 0.5) == (
        "13 of 15 cases errored (87%), over gate.max_error_rate 0.5: the verdict is error; the error that "
        f"dominated (12 of 13): {MAPPING}"
    )


@pytest.mark.parametrize(("errored", "rate", "over"), [(2, 0.5, False), (3, 0.5, True), (3, 0.75, False), (1, 0, True)])
def test_the_budget_is_a_share_not_to_be_exceeded(errored: int, rate: float, over: bool) -> None:
    cases = _cases([DOWN] * errored, passed=4 - errored)
    assert (over_budget(cases, rate) is not None) is over


def test_every_case_errored_is_an_error_whatever_the_budget() -> None:
    assert over_budget(_cases([DOWN, MAPPING, MAPPING]), 1.0) == (
        f"all 3 cases errored: the verdict is error; the error that dominated (2 of 3): {MAPPING}"
    )


def test_a_tie_goes_to_the_error_met_first_and_a_case_without_reason_says_so() -> None:
    cases = [("error", []), ("error", [DOWN]), ("pass", [])]
    assert over_budget(cases, 0.5) == (
        "2 of 3 cases errored (67%), over gate.max_error_rate 0.5: the verdict is error; the error that dominated "
        "(1 of 2): no reason recorded"
    )


def test_no_error_or_no_case_is_within_the_budget() -> None:
    assert over_budget(_cases([], passed=3), 0.0) is None
    assert over_budget([], 0.5) is None


# --- a judge that failed inside ragjudge: the verdict is error whatever the budget ----------------------

BUG = "judge failed inside ragjudge: NameError: Fields must not use names with leading underscores"


def test_one_judge_bug_in_a_conversation_turn_or_an_earlier_run_makes_the_verdict_error() -> None:
    cases = [
        ("single", [DOWN]),
        ("chat", ["turn 1: must_mention", f"turn 2: {BUG}"]),
        ("repeated", ["x", BUG]),
        ("fine", []),
    ]
    assert judge_bugs(cases) == (
        f"the judge failed inside ragjudge on 2 of 4 cases: the verdict is error; the first, case 'chat': turn 2: "
        f"{BUG} (a bug in ragjudge, not in the service: rerun with RAGJUDGE_DEBUG=1 for a traceback, and report it)"
    )


@pytest.mark.parametrize(
    "condition",
    [
        "judge failed inside ragjudge",  # the words alone, no reason after them
        f"endpoint error: the answer quotes '{BUG}'",  # a service's text that says it is not the judge's failure
        "judge failed: CallFailed: HTTP 500",
        f"turn x: {BUG}",
    ],
)
def test_only_a_condition_opening_with_the_judge_bug_counts(condition: str) -> None:
    assert judge_bugs([("c1", [condition]), ("c2", [])]) is None
