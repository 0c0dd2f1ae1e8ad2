"""`stats.order_statistics` against exact binomial sums and scipy (a test-only dependency)."""

from __future__ import annotations

import itertools
import math
import random
import time
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from ragjudge.stats import (
    Interval,
    percentile_nearest_rank,
    quantile_order_statistic_bounds,
    quantile_order_statistic_ranks,
)
from tests.stats.common import CONFIDENCES, PROPERTY

# --------------------------------------------------------------------------- order-statistic interval


def exact_ranks(n: int, q: float, confidence: float) -> tuple[int, int, bool]:
    """Brute force with exact rational binomial probabilities (math.comb, q as its decimal value).

    Also reports whether any tail probability lies within 1e-12 of alpha/2, where float rounding
    in the implementation could legitimately decide the other way.
    """
    p = Fraction(repr(q))  # differs from the binary q by < 1e-16: irrelevant outside near-ties
    h = Fraction((1.0 - confidence) / 2.0)
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    lower_tails = [sum(pmf[:r], Fraction(0)) for r in range(n + 1)]  # P(B <= r - 1), r = 0..n
    upper_tails = [sum(pmf[r:], Fraction(0)) for r in range(1, n + 2)]  # P(B >= r), r = 1..n+1
    lo = max(r for r in range(n + 1) if lower_tails[r] <= h)
    hi = min(r for r in range(1, n + 2) if upper_tails[r - 1] <= h)
    near_tie = any(abs(t - h) < Fraction(1, 10**12) for t in lower_tails + upper_tails)
    return lo, hi, near_tie


def test_ranks_match_exact_bruteforce() -> None:
    qs = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
    compared = 0
    for n in range(1, 41):
        for q, conf in itertools.product(qs, (0.8, 0.9, 0.95, 0.99)):
            lo, hi, near_tie = exact_ranks(n, q, conf)
            got = quantile_order_statistic_ranks(n, q, conf)
            if near_tie:
                assert abs(got[0] - lo) <= 1 and abs(got[1] - hi) <= 1
            else:
                assert got == (lo, hi), (n, q, conf)
                compared += 1
    assert compared > 1400


def check_ranks_with_scipy(n: int, q: float, conf: float) -> None:
    lo, hi = quantile_order_statistic_ranks(n, q, conf)
    assert 0 <= lo < hi <= n + 1
    h = (1 - conf) / 2
    tol = 1e-10
    lower_tail = float(sps.binom.cdf(lo - 1, n, q)) if lo >= 1 else 0.0
    upper_tail = float(sps.binom.sf(hi - 1, n, q)) if hi <= n else 0.0  # P(B >= hi)
    assert lower_tail <= h + tol and upper_tail <= h + tol, (n, q, conf, lo, hi)
    # Coverage: P(lo <= B < hi) >= confidence.
    assert 1 - lower_tail - upper_tail >= conf - tol
    # Equal-tailed and tight: moving either rank inwards would exceed alpha/2 in that tail.
    if lo < n:
        assert float(sps.binom.cdf(lo, n, q)) > h - tol, (n, q, conf, lo)
    if hi > 1:
        assert float(sps.binom.sf(hi - 2, n, q)) > h - tol, (n, q, conf, hi)
    # Unbounded sides appear exactly when n is too small: no rank has a small enough tail.
    if not math.isclose((1 - q) ** n, h, rel_tol=1e-9):
        assert (lo == 0) == ((1 - q) ** n > h)
    if not math.isclose(q**n, h, rel_tol=1e-9):
        assert (hi == n + 1) == (q**n > h)


def test_ranks_coverage_against_scipy_small_n() -> None:
    qs = (0.001, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.999)
    for n in range(1, 121):
        for q, conf in itertools.product(qs, (0.5, 0.9, 0.95, 0.99)):
            check_ranks_with_scipy(n, q, conf)


def test_ranks_coverage_against_scipy_large_n() -> None:
    rng = random.Random(5)
    ns = [200, 999, 1000, 5000, 10_000, 10_001, 20_000, 100_000]
    for n in ns:
        for q in (0.001, 0.01, 0.5, 0.95, 0.99, 0.999, rng.random()):
            check_ranks_with_scipy(n, q, 0.95)
    for _ in range(100):
        check_ranks_with_scipy(rng.randint(1, 50_000), rng.uniform(0.0005, 0.9995), rng.choice(CONFIDENCES))


def test_ranks_large_n_fast() -> None:
    start = time.perf_counter()
    for q in (0.5, 0.95, 0.99, 0.001):
        quantile_order_statistic_ranks(100_000, q, 0.99)
    assert time.perf_counter() - start < 1.0


def test_bounds_map_ranks_to_sorted_values() -> None:
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(1, 300)
        values = [rng.lognormvariate(0, 1) for _ in range(n)]
        q = rng.choice([0.5, 0.9, 0.95, 0.99, rng.random()])
        conf = rng.choice(CONFIDENCES)
        lo, hi = quantile_order_statistic_ranks(n, q, conf)
        srt = sorted(values)
        iv = quantile_order_statistic_bounds(values, q, conf)
        assert iv.lo == (srt[lo - 1] if lo >= 1 else -math.inf)
        assert iv.hi == (srt[hi - 1] if hi <= n else math.inf)


def test_bounds_infinite_sides_for_small_samples() -> None:
    # p95 at 95%: an upper bound needs 0.95**n <= 0.025, i.e. n >= 72; a lower one exists from n = 2.
    assert quantile_order_statistic_bounds([1.0], 0.95, 0.95) == Interval(-math.inf, math.inf)
    assert quantile_order_statistic_bounds([1.0, 2.0], 0.95, 0.95) == Interval(1.0, math.inf)
    assert quantile_order_statistic_bounds([float(i) for i in range(71)], 0.95, 0.95).hi == math.inf
    assert quantile_order_statistic_bounds([float(i) for i in range(72)], 0.95, 0.95).hi < math.inf
    # Median with 5 points at 95%: 0.5**5 = 0.03125 > 0.025, so both sides are unbounded.
    assert quantile_order_statistic_bounds([1.0, 2, 3, 4, 5], 0.5, 0.95) == Interval(-math.inf, math.inf)
    assert quantile_order_statistic_bounds([1.0, 2, 3, 4, 5, 6], 0.5, 0.95) == Interval(1.0, 6.0)


@pytest.mark.parametrize(
    ("values", "q", "conf"),
    [([], 0.5, 0.95), ([1.0], 0.0, 0.95), ([1.0], 1.0, 0.95), ([1.0], 0.5, 1.0), ([math.nan], 0.5, 0.9)],
)
def test_bounds_rejects_invalid(values: list[float], q: float, conf: float) -> None:
    with pytest.raises(ValueError):
        quantile_order_statistic_bounds(values, q, conf)


def test_bounds_coverage_simulation_with_ties() -> None:
    # Discrete data with heavy ties: the closed interval must still cover at least nominally.
    rng = random.Random(3)
    support, weights = [1.0, 2.0, 3.0, 4.0, 5.0], [0.5, 0.2, 0.15, 0.1, 0.05]
    cum = list(itertools.accumulate(weights))
    for q in (0.5, 0.9):
        true_q = support[next(i for i, c in enumerate(cum) if c >= q - 1e-12)]
        hits = 0
        reps = 1000
        for _ in range(reps):
            values = rng.choices(support, weights, k=40)
            hits += quantile_order_statistic_bounds(values, q, 0.9).contains(true_q)
        assert hits / reps >= 0.9 - 3 * math.sqrt(0.09 / reps)


@PROPERTY
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=200),
    st.floats(0.01, 0.99),
    st.floats(0.5, 0.98),
    st.floats(0.001, 0.019),
)
def test_bounds_contain_sample_quantile_and_nest(values: list[float], q: float, conf: float, extra: float) -> None:
    iv = quantile_order_statistic_bounds(values, q, conf)
    assert iv.lo <= percentile_nearest_rank(values, q * 100) <= iv.hi
    wide = quantile_order_statistic_bounds(values, q, conf + extra)
    assert wide.lo <= iv.lo and wide.hi >= iv.hi
