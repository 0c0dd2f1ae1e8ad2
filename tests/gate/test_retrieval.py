"""Deterministic metrics: context recall, rank-weighted context precision, rejection (percentiles: tests/stats)."""

from __future__ import annotations

import pytest

from ragjudge.gate.retrieval import context_precision, context_recall, rejection_correct
from tests.fakes.rag import make_case, make_trace

# --- context recall -----------------------------------------------------------------------------


def test_recall_is_one_without_golden_ids() -> None:
    assert context_recall(make_case(golden=[]), make_trace(ids=[])) == 1.0
    assert context_recall(make_case(golden=[]), make_trace(ids=["x", "y"])) == 1.0


@pytest.mark.parametrize(
    ("golden", "retrieved", "expected"),
    [
        (["a", "b"], ["a", "b"], 1.0),
        (["a", "b"], ["b", "x", "a"], 1.0),
        (["a", "b"], ["a"], 0.5),
        (["a", "b"], ["x", "a", "y"], 0.5),
        (["a", "b", "c", "d"], ["d"], 0.25),
        (["a"], ["x", "y"], 0.0),
        (["a"], [], 0.0),
    ],
)
def test_recall_is_the_share_of_golden_ids_retrieved(golden: list[str], retrieved: list[str], expected: float) -> None:
    assert context_recall(make_case(golden=golden), make_trace(ids=retrieved)) == expected


def test_a_refusal_counts_as_a_hit_for_every_golden_id() -> None:
    case = make_case(golden=["a", "b"])
    assert context_recall(case, make_trace("", ids=[], refused=True)) == 1.0
    assert context_recall(case, make_trace("", ids=["x"], refused=True)) == 1.0


# --- context precision --------------------------------------------------------------------------


def test_precision_is_none_without_golden_ids() -> None:
    assert context_precision(make_case(golden=[]), make_trace(ids=["a", "b"])) is None


@pytest.mark.parametrize(
    ("golden", "retrieved", "expected"),
    [
        # sum of 1/(rank+1) over golden ids found / max(#golden, #retrieved)
        (["a"], ["a"], 1.0),
        (["a"], ["x", "a"], (1 / 2) / 2),
        (["a", "b"], ["a", "b"], (1 + 1 / 2) / 2),
        (["a", "b"], ["a", "x", "b"], (1 + 1 / 3) / 3),
        (["a", "b"], ["b", "a"], (1 + 1 / 2) / 2),
        (["a", "b", "c"], ["b"], 1 / 3),
        (["a"], ["x", "y", "z", "a"], (1 / 4) / 4),
        (["a", "b"], ["x", "y"], 0.0),
        (["a"], [], 0.0),
    ],
)
def test_precision_is_rank_weighted(golden: list[str], retrieved: list[str], expected: float) -> None:
    assert context_precision(make_case(golden=golden), make_trace(ids=retrieved)) == pytest.approx(expected, abs=1e-12)


def test_precision_uses_the_first_rank_of_a_repeated_id() -> None:
    # indexOf in the seed: the first occurrence.
    value = context_precision(make_case(golden=["a"]), make_trace(ids=["x", "a", "a"]))
    assert value == pytest.approx((1 / 2) / 3)


def test_precision_does_not_count_a_refusal_as_a_hit() -> None:
    assert context_precision(make_case(golden=["a"]), make_trace("", ids=[], refused=True)) == 0.0


# --- rejection ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("should_answer", "refused", "correct"),
    [(True, False, True), (True, True, False), (False, True, True), (False, False, False)],
)
def test_rejection_correct(should_answer: bool, refused: bool, correct: bool) -> None:
    case = make_case(should_answer=should_answer)
    assert rejection_correct(case, make_trace("x y", refused=refused)) is correct
