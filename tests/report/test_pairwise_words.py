"""A pairwise verdict in words (`comment_view.pairwise_words`): which answer was better, main's or this PR's, and
the judge's reason with its A and B named; both orders' outcomes when they disagree."""

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


def test_a_reason_in_no_known_shape_is_shown_as_written() -> None:
    assert _words("worse", True, "the judge said so") == "the judge said so"
