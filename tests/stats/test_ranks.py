"""`stats.ranks`, the one mid-rank function (Wilcoxon's and Spearman's), against scipy's rankdata."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import rankdata

from ragjudge.stats.ranks import mid_ranks
from tests.stats.common import PROPERTY


def test_mid_ranks_match_scipy_average_ranks() -> None:
    rng = random.Random(21)
    for _ in range(300):
        n = rng.randint(0, 60)
        values = [float(rng.randint(0, 8)) if rng.random() < 0.5 else rng.gauss(0, 1) for _ in range(n)]
        ranks, _ = mid_ranks(values)
        assert ranks == [float(r) for r in rankdata(values, method="average")], values


def test_tie_groups_are_the_sizes_of_equal_values_in_ascending_order() -> None:
    assert mid_ranks([3.0, 1.0, 3.0, 2.0, 3.0]) == ([4.0, 1.0, 4.0, 2.0, 4.0], [1, 1, 3])
    assert mid_ranks([]) == ([], [])
    assert mid_ranks([5.0, 5.0]) == ([1.5, 1.5], [2])


@PROPERTY
@given(st.lists(st.integers(-5, 5).map(float), max_size=80))
def test_ranks_sum_to_the_triangle_and_groups_count_each_value(values: list[float]) -> None:
    ranks, groups = mid_ranks(values)
    n = len(values)
    assert sum(ranks) == n * (n + 1) / 2  # mean ranks are halves: the sum is exact
    assert groups == [count for _, count in sorted(Counter(values).items())]
    assert np.all(np.array(ranks) * 2 == np.round(np.array(ranks) * 2))
