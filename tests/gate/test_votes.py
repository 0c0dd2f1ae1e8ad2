"""The vote rule (`gate.votes`) and the pairwise judge's rounds (`judge.pairwise.settle`), at their edges."""

from __future__ import annotations

import math

import pytest

from ragjudge.gate.judge_runs import flip_figures
from ragjudge.gate.votes import (
    FAIL_MARGIN,
    PASS_MARGIN,
    REJUDGE_ROUND,
    Vote,
    decision,
    described,
    flip_estimate,
    next_sample,
    sampled_for_consistency,
)
from ragjudge.judge.pairwise import settle


def _votes(good: int, bad: int, *, pairwise_bad: int = 0, pairwise_good: int = 0) -> list[Vote]:
    rubric = [Vote("rubric", k, True) for k in range(good)] + [Vote("rubric", 100 + k, False) for k in range(bad)]
    pairs = [Vote("pairwise", k, False) for k in range(pairwise_bad)]
    return [*rubric, *pairs, *(Vote("pairwise", 50 + k, True) for k in range(pairwise_good))]


def test_the_margins() -> None:
    assert (PASS_MARGIN, FAIL_MARGIN) == (1, 5)
    assert decision(_votes(1, 0)) == "pass"
    assert decision(_votes(0, 1)) is None  # one failing judgement decides nothing
    assert decision(_votes(0, 4)) is None
    assert decision(_votes(0, 5)) == "fail"
    assert decision(_votes(1, 6)) == "fail"
    assert decision(_votes(2, 2)) is None  # a tie is undecided
    # Pairwise orders count as votes: a first pass with four worse orders is undecided, not a pass.
    assert decision(_votes(1, 0, pairwise_bad=4)) is None
    assert decision(_votes(1, 2, pairwise_bad=4)) == "fail"
    assert decision(_votes(0, 1, pairwise_good=2)) == "pass"


def test_described_names_each_kind_of_evidence() -> None:
    votes = [Vote("rubric", 0, False, "main"), Vote("rubric", 1001, True), *_votes(0, 0, pairwise_bad=2)]
    assert described(votes) == "rubric 1 pass, 1 fail (1 main's); pairwise worse in 2 of 2 orders"
    assert described(_votes(3, 0)) == "rubric 3 pass, 0 fail"


def test_the_next_sample_skips_those_main_judged_and_stops_at_the_cap() -> None:
    assert next_sample([0], 2) == REJUDGE_ROUND + 1
    assert next_sample([0, REJUDGE_ROUND + 1], 2) == REJUDGE_ROUND + 2
    assert next_sample([0, REJUDGE_ROUND + 1, REJUDGE_ROUND + 2], 2) is None
    assert next_sample([0], 0) is None


def test_the_consistency_sample_is_fixed_by_ids_and_seed() -> None:
    ids = [f"c{i:03d}" for i in range(100)]
    picked = sampled_for_consistency(ids, 10, 7)
    assert len(picked) == 10 and picked <= set(ids)
    assert sampled_for_consistency(list(reversed(ids)), 10, 7) == picked  # not by position
    assert sampled_for_consistency(ids, 10, 8) != picked
    assert sampled_for_consistency(ids, 0, 7) == frozenset()
    assert sampled_for_consistency(ids[:3], 10, 7) == frozenset(ids[:3])


@pytest.mark.parametrize("p", [0.05, 0.1, 0.2, 0.4])
def test_the_flip_estimate_inverts_two_judgements_disagreeing(p: float) -> None:
    d = 2 * p * (1 - p)
    n = 10_000
    got = flip_estimate(round(d * n), n)
    assert got is not None and math.isclose(got["judge_flip_rate"], p, abs_tol=0.002)
    lo, hi = got["judge_flip_rate_interval"]
    assert lo < p < hi and got["judge_flip_sample"] == n


def test_the_flip_estimate_edges() -> None:
    assert flip_estimate(0, 0) is None
    assert flip_estimate(0, 4) == {
        "judge_flip_rate": 0.0,
        "judge_flip_rate_interval": [0.0, 0.4289],
        "judge_flip_sample": 4,
    }
    # More than half disagreeing: no p gives that, so it is the most a judge can flip, 1/2.
    assert flip_estimate(4, 4)["judge_flip_rate"] == 0.5  # type: ignore[index]


def test_flip_figures_keep_the_picked_cases_apart() -> None:
    second = REJUDGE_ROUND + 1
    rows = [
        (True, [("rubric", 0, True), ("rubric", second, False)]),  # sampled: disagrees
        (True, [("rubric", 0, True), ("rubric", second, True)]),  # sampled: agrees
        (False, [("rubric", 0, False), ("rubric", second, True), ("rubric", second + 1, True)]),  # picked, split
        (False, [("rubric", 0, False), ("pairwise", 0, False)]),  # judged once: neither
    ]
    figures = flip_figures(rows)
    assert figures is not None
    assert (figures["judge_flip_sample"], figures["judge_flip_rate"]) == (2, 0.5)
    assert (figures["rejudged_cases"], figures["rejudged_split_rate"]) == (1, 1.0)
    assert flip_figures([(False, [("rubric", 0, True)])]) is None


def test_a_pairwise_verdict_settles_on_two_agreeing_rounds() -> None:
    # One round allowed: the round is the verdict, a change with the order a tie (as before rounds).
    assert settle(["worse", "worse"], 1) == ("worse", True)
    assert settle(["worse", "better"], 1) == ("tie", True)
    # More allowed: one agreeing worse round is not yet a worse verdict; two are.
    assert settle(["worse", "worse"], 4) == ("tie", False)
    assert settle(["worse", "worse", "worse", "worse"], 4) == ("worse", True)
    assert settle(["worse", "worse", "worse", "tie"], 4) == ("tie", False)
    # Not worse settles at once when both orders say so.
    assert settle(["tie", "tie"], 4) == ("tie", True)
    assert settle(["better", "better"], 4) == ("better", True)
    assert settle(["better", "tie"], 4) == ("tie", True)
    assert settle(["worse", "tie"], 4) == ("tie", False)
