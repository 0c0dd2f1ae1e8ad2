"""Rows in words (`comment_view`): a pairwise verdict says which answer was better, main's or this PR's, with the
judge's reason's A and B named, both orders' outcomes when they disagree; a judge's score says its scale."""

from __future__ import annotations

from tests.fakes.reports import C

from ragjudge.report.case_block import PairwiseCaseBlock
from ragjudge.report.comment_view import pairwise_words


def _words(verdict: str | None, consistent: bool, *reasons: str) -> str:
    block = C("c1", "fail").block()
    pair = PairwiseCaseBlock(verdict=verdict, consistent=consistent, reasons=list(reasons))  # type: ignore[arg-type]
    return pairwise_words(block.model_copy(update={"pairwise": pair}))


def test_main_shown_first_and_winning_is_mains_answer_better() -> None:
    said = _words("worse", True, "main first: A: answer A keeps the 30-day window", "this run first: B: same")
    assert said == "main's answer was better: main's answer keeps the 30-day window"


def test_this_pr_shown_first_and_winning_is_this_prs_answer_better() -> None:
    said = _words("better", True, "this run first: A: answer A names the fee, answer B does not")
    assert said == "this PR's answer was better: this PR's answer names the fee, main's answer does not"


def test_orders_that_disagree_are_both_told() -> None:
    said = _words("tie", False, "main first: A: answer A is first", "this run first: A: answer A is first")
    assert said == (
        "the two orders disagree: with main's answer shown first, main's answer was better (main's answer is "
        "first); with this PR's shown first, this PR's answer was better (this PR's answer is first)"
    )


def test_a_second_round_that_agrees_is_the_same_verdict_not_a_disagreement() -> None:
    said = _words(
        "worse",
        True,
        "main first: A: answer A says 6 days",
        "this run first: B: answer B says 6 days",
        "round 2, main first: A: answer A says 6 days",
        "round 2, this run first: B: answer B says 6 days",
    )
    assert said == "main's answer was better: main's answer says 6 days"


def test_a_reason_in_no_known_shape_is_shown_as_written() -> None:
    assert _words("worse", True, "the judge said so") == "the judge said so"


def test_a_judges_score_in_a_row_says_its_scale_and_what_the_rule_needs() -> None:
    from ragjudge.report.comment_view import cells

    block = C("c1", "fail").block()
    conditions = [
        "judge.grounding 2 < 3: the 24-hour figure is in no passage",
        "turn 2: criteria.asks_for_order 2.5 <= 3: never asks",
        "faithfulness 0.500 < 0.8 (1 of 2 claims unsupported)",
    ]
    case = block.model_copy(update={"failed_conditions": conditions})
    assert [c.own for c in cells(case)] == [
        "grounding 2/5 (needs at least 3): the 24-hour figure is in no passage",
        "turn 2: criterion asks_for_order 2.5/5 (needs more than 3): never asks",
        "faithfulness 0.500 < 0.8 (1 of 2 claims unsupported)",
    ]
    assert all(c.group == 0 for c in cells(case))  # never a group's number
