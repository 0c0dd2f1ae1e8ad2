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

from ragjudge.stats import percentile_nearest_rank
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
