"""Questions per document by size (largest remainder), the Gini of the result, and the size of a text in words."""

from __future__ import annotations

import pytest

from ragjudge.cases.allocation import MIN_WORDS, allocate, gini, picks, size_of


def test_size_counts_latin_words_and_two_thirds_of_each_han_character() -> None:
    assert size_of("Refunds take 3 days.") == 4
    assert size_of("退款需要三天") == 4  # six Han characters
    assert size_of("iPhone退货") == 1 + 2 * 2 / 3


def test_equal_documents_share_equally() -> None:
    assert allocate([50] * 10, 30) == [3] * 10
    assert gini(allocate([50] * 10, 30)) == 0.0


def test_by_size_with_one_each_first_and_the_short_ones_left_out() -> None:
    # 7 over four documents of 100, 200, 300 and 50 words (and one of 5, too short): one each, then 3 by size
    # (0.46, 0.92, 1.38, 0.23): 300 takes its whole one, the two largest remainders one more each.
    assert allocate([100, 200, 300, MIN_WORDS - 1, 50], 7) == [2, 2, 2, 0, 1]
    # Fewer questions than documents: by size alone, the largest remainders first.
    assert allocate([100, 200, 300, 50], 2) == [0, 1, 1, 0]
    assert allocate([5, 10], 3) == [0, 0]
    assert allocate([50, 50], 0) == [0, 0]


def test_ties_are_broken_by_the_seed_and_the_same_seed_asks_the_same() -> None:
    firsts = {tuple(allocate([50] * 4, 2, seed)) for seed in range(20)}
    assert len(firsts) > 1
    assert all(sum(f) == 2 and max(f) == 1 for f in firsts)
    assert allocate([50] * 4, 2, 7) == allocate([50] * 4, 2, 7)


def test_picks_spread_one_a_document() -> None:
    chosen = picks([50] * 10, 4, seed=3)
    assert len(chosen) == len(set(chosen)) == 4


@pytest.mark.parametrize(
    ("counts", "value"), [([3, 3, 3], 0.0), ([0, 0, 0, 12], 0.75), ([1, 2, 3, 4], 0.25), ([], 0.0), ([0, 0], 0.0)]
)
def test_gini(counts: list[int], value: float) -> None:
    assert gini(counts) == pytest.approx(value)


def test_a_document_of_exactly_the_minimum_words_is_asked_about() -> None:
    # Pinned (issue 40): `>= MIN_WORDS`, counted in words (Latin runs, 2/3 a Han character).
    exactly = " ".join(["word"] * MIN_WORDS)
    one_short = " ".join(["word"] * (MIN_WORDS - 1))
    han = "退" * 21 + " refund"  # 14 + 1 words
    assert size_of(exactly) == size_of(han) == MIN_WORDS and size_of(one_short) == MIN_WORDS - 1
    sizes = [size_of(t) for t in (exactly, one_short, han)]
    assert allocate(sizes, 2) == [1, 0, 1]
    assert allocate([MIN_WORDS - 1e-9], 3) == [0]
