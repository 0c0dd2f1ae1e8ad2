"""`stats.percentile`, the one nearest-rank percentile, against numpy and its exact definition."""

from __future__ import annotations

import bisect
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragjudge.stats.percentile import nearest_rank, percentile_nearest_rank
from ragjudge.stats.percentile import percentile_or_none as percentile  # the name these tests had in the gate
from tests.stats.common import PROPERTY

# --------------------------------------------------------------------------- nearest-rank percentile


def exact_nearest_rank(values: list[float], q: float) -> float:
    """Definition: the smallest x in values with #{v <= x} >= q/100 * n, in exact arithmetic."""
    srt = sorted(values)
    target = Fraction(repr(q)) * len(srt) / 100
    return next(x for x in srt if bisect.bisect_right(srt, x) >= target)


def test_percentile_matches_numpy_inverted_cdf_and_definition() -> None:
    rng = random.Random(99)
    mismatches_explained = 0
    for trial in range(200):
        n = rng.randint(1, 60)
        values = [float(rng.randint(0, 20)) if trial % 2 else rng.gauss(0, 1) for _ in range(n)]
        qs = [float(q) for q in range(1, 101)] + [rng.uniform(0.001, 100) for _ in range(20)] + [0.1, 99.9]
        for q in qs:
            got = percentile_nearest_rank(values, q)
            assert got == exact_nearest_rank(values, q), (values, q)
            ref = float(np.percentile(values, q, method="inverted_cdf"))
            if got != ref:
                # numpy computes n * (q / 100) in binary floating point; only exact-integer ranks can
                # come out 1 ulp high there (e.g. 0.28 * 25 == 7.000000000000001).
                assert (Fraction(repr(q)) * n / 100).denominator == 1, (values, q)
                mismatches_explained += 1
    assert mismatches_explained > 0  # the float-boundary case really occurs in this grid


def test_percentile_exact_rank_at_float_boundary() -> None:
    values = [float(i) for i in range(1, 26)]
    assert percentile_nearest_rank(values, 28) == 7.0  # ceil(28 * 25 / 100) = 7, not 8
    assert percentile_nearest_rank(values, 100) == 25.0
    assert percentile_nearest_rank(values, 1e-9) == 1.0
    assert percentile_nearest_rank([5.0], 50) == 5.0
    data = [float(i) for i in range(1, 101)]
    assert percentile_nearest_rank(data, 95) == 95.0
    assert percentile_nearest_rank(data, 95.0001) == 96.0


@pytest.mark.parametrize("q", [0.0, -1.0, 100.0001, math.nan])
def test_percentile_rejects_bad_q(q: float) -> None:
    with pytest.raises(ValueError):
        percentile_nearest_rank([1.0, 2.0], q)


@pytest.mark.parametrize("values", [[], [1.0, math.nan], [math.inf]])
def test_percentile_rejects_bad_values(values: list[float]) -> None:
    with pytest.raises(ValueError):
        percentile_nearest_rank(values, 50)


@PROPERTY
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=50),
    st.floats(0.01, 100),
    st.floats(0.01, 100),
)
def test_percentile_is_element_and_monotone_in_q(values: list[float], q1: float, q2: float) -> None:
    lo_q, hi_q = sorted((q1, q2))
    a, b = percentile_nearest_rank(values, lo_q), percentile_nearest_rank(values, hi_q)
    assert a in values and b in values
    assert a <= b


# --------------------------------------------------------------------------- the gate's form: None for no values


def test_percentile_of_nothing_is_none() -> None:
    assert percentile([], 95) is None


def test_percentile_of_one_value_is_that_value() -> None:
    assert percentile([42.0], 50) == 42.0
    assert percentile([42.0], 95) == 42.0


@pytest.mark.parametrize(
    ("q", "expected"),
    # The classic nearest-rank example: 15, 20, 35, 40, 50.
    [(5, 15), (30, 20), (40, 20), (50, 35), (75, 40), (95, 50), (100, 50)],
)
def test_nearest_rank_textbook_example(q: float, expected: float) -> None:
    assert percentile([50, 40, 35, 20, 15], q) == expected


def test_nearest_rank_is_a_value_of_the_sample_never_an_interpolation() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 95) == 19.0  # ceil(0.95 * 20) = 19th
    assert percentile(values, 50) == 10.0  # ceil(0.5 * 20) = 10th
    ten = [float(v) for v in range(1, 11)]
    assert percentile(ten, 95) == 10.0  # ceil(9.5) = 10th
    assert percentile(ten, 50) == 5.0
    assert percentile([100.0, 200.0], 50) == 100.0  # linear would give 150


def test_percentile_zero_is_the_minimum() -> None:
    assert percentile([3.0, 1.0, 2.0], 0) == 1.0


def test_percentile_does_not_mutate_its_input() -> None:
    values = [3.0, 1.0, 2.0]
    percentile(values, 50)
    assert values == [3.0, 1.0, 2.0]


# --------------------------------------------------------------------------- the gate's former float rank
# The gate's suite figures used to compute the rank as `ceil(q / 100 * n)` in binary floating point. They
# now read `nearest_rank`. For the p50 and p95 the reports show, the float rank was right at every size,
# so the figures are the same; at other percentiles it could pick the next rank, and the exact one does not.


def float_rank_percentile(values: list[float], q: float) -> float | None:
    """The gate's former percentile, kept here as the reference the exact one must agree with."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def definition_rank(n: int, q: int) -> int:
    """``max(1, ceil(q * n / 100))`` for a whole ``q``, in integers: the nearest rank by definition."""
    return max(1, -(-q * n // 100))


def test_the_float_rank_was_right_for_p50_and_p95_at_every_size_up_to_50_000() -> None:
    for n in range(1, 50_001):
        for q in (50, 95):
            assert max(1, math.ceil(q / 100 * n)) == definition_rank(n, q) == nearest_rank(n, q), (n, q)


@PROPERTY
@given(st.integers(1, 2**40), st.sampled_from([50, 95]))
def test_the_float_rank_was_right_for_p50_and_p95_at_large_sizes(n: int, q: int) -> None:
    assert max(1, math.ceil(q / 100 * n)) == definition_rank(n, q) == nearest_rank(n, q)


@PROPERTY
@given(st.lists(st.floats(-1e9, 1e9, allow_nan=False), max_size=300), st.sampled_from([50, 95]))
def test_the_exact_rank_gives_the_gates_p50_and_p95_unchanged(values: list[float], q: int) -> None:
    assert percentile(values, q) == float_rank_percentile(values, q)


def test_where_the_float_rank_was_right_the_exact_one_agrees_and_where_it_was_wrong_it_is_right() -> None:
    wrong = 0
    for n in range(1, 301):
        values = [float(v) for v in range(1, n + 1)]  # the k-th smallest is k: a value is its rank
        for q in range(0, 101):
            exact = definition_rank(n, q)
            old = float_rank_percentile(values, q)
            assert percentile(values, q) == exact
            if old == exact:
                continue
            wrong += 1
            assert old == exact + 1, (n, q)  # the float product landed just above a whole rank
    assert wrong > 0


def test_the_28th_percentile_of_25_values_is_the_7th_not_the_8th() -> None:
    values = [float(i) for i in range(1, 26)]
    assert 0.28 * 25 == 7.000000000000001  # why the float rank was 8
    assert float_rank_percentile(values, 28) == 8.0
    assert percentile(values, 28) == 7.0
    assert percentile_nearest_rank(values, 28) == 7.0
