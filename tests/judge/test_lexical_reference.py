"""The offline judge's reference check (`judge/lexical_reference.py`): the decisions at its edges."""

from __future__ import annotations

import pytest

from ragjudge.judge.lexical_reference import judge_point, judge_points
from ragjudge.judge.reference import ReferencePoint


@pytest.mark.parametrize("point", ["the", "---", "not"])
def test_a_point_with_no_words_to_look_for_is_missing_with_the_reason(point: str) -> None:
    # Decided: missing, not skipped. A person wrote the point; nothing in the answer can be shown to state it,
    # and skipping it would raise answer_correctness over a reference nobody can check.
    assert judge_points(f"{point}；需提供订单号", "需提供订单号。") == (
        ReferencePoint(point, "missing", "", "the point has no words to look for"),
        ReferencePoint("需提供订单号", "covered", "需提供订单号", "100% of its words appear in the answer"),
    )


def test_a_point_with_exactly_half_its_words_in_the_answer_is_missing_and_just_over_half_covered() -> None:
    # The threshold is "more than half": 1 of 2 words is missing, 6 of 11 covered.
    assert judge_point("alpha bravo", "alpha only here.") == ReferencePoint(
        "alpha bravo", "missing", "", "only 50% of its words appear in the answer (needs over 50%)"
    )
    eleven = "apple banana cherry date elder fig grape honeydew iris jasmine kiwi"
    assert judge_point(eleven, "apple banana cherry date elder fig.") == ReferencePoint(
        eleven, "covered", "apple banana cherry date elder fig", "55% of its words appear in the answer"
    )
