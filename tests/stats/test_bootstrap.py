"""Tests for ragjudge.stats against scipy / statsmodels / numpy references (test-only deps)."""

from __future__ import annotations

import bisect
import itertools
import math
import random
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import Table2x2
from statsmodels.stats.proportion import proportion_confint

from ragjudge import stats
from ragjudge.stats import (
    Interval,
    bootstrap_mean,
    bootstrap_ratio_of_p95,
    normal_quantile,
    percentile_nearest_rank,
    quantile_order_statistic_bounds,
    quantile_order_statistic_ranks,
    risk_ratio_katz,
    wilson_interval,
)

CONFIDENCES = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
PROPERTY = settings(max_examples=150, deadline=None)


def close(x: float, y: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    return math.isclose(x, y, rel_tol=rel, abs_tol=abs_)


# --------------------------------------------------------------------------- Interval


def test_interval_basics() -> None:
    iv = Interval(1.0, 3.0)
    assert iv.width == 2.0
    assert iv.contains(1.0) and iv.contains(3.0) and iv.contains(2.0)
    assert not iv.contains(0.999) and not iv.contains(3.001)
    assert Interval(-math.inf, math.inf).contains(1e300)
    assert Interval(2.0, 2.0).width == 0.0
    with pytest.raises(AttributeError):
        iv.lo = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(("lo", "hi"), [(2.0, 1.0), (math.nan, 1.0), (0.0, math.nan), (math.inf, -math.inf)])
def test_interval_rejects_invalid(lo: float, hi: float) -> None:
    with pytest.raises(ValueError):
        Interval(lo, hi)


# --------------------------------------------------------------------------- normal quantile


def test_normal_quantile_matches_scipy() -> None:
    ps = list(np.linspace(1e-6, 1 - 1e-6, 2001))
    ps += [1e-300, 1e-100, 1e-15, 1e-10, 1e-8, 0.5, 1 - 1e-10, 1 - 1e-15, 0.025, 0.975, 0.005, 0.995]
    for p in ps:
        assert close(normal_quantile(float(p)), float(sps.norm.ppf(p)), rel=1e-12, abs_=1e-13), p


def test_normal_quantile_symmetry_and_known_values() -> None:
    assert normal_quantile(0.5) == 0.0
    assert close(normal_quantile(0.975), 1.959963984540054, rel=1e-14)
    assert close(normal_quantile(0.995), 2.5758293035489004, rel=1e-14)
    for p in np.linspace(0.001, 0.499, 200):
        assert close(normal_quantile(float(p)), -normal_quantile(float(1 - p)), rel=1e-12)


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.1, math.nan, math.inf])
def test_normal_quantile_rejects_out_of_range(p: float) -> None:
    with pytest.raises(ValueError):
        normal_quantile(p)


# --------------------------------------------------------------------------- Katz risk ratio


def katz_reference(a: int, n_t: int, c: int, n_c: int, confidence: float) -> tuple[float, float, float]:
    """Independent textbook formula on the explicit 2x2 cells, z from scipy."""
    cells = [float(a), float(n_t - a), float(c), float(n_c - c)]
    if min(cells) == 0:
        cells = [x + 0.5 for x in cells]
    a_, b_, c_, d_ = cells
    p_t, p_c = a_ / (a_ + b_), c_ / (c_ + d_)
    rr = p_t / p_c
    se = math.sqrt(b_ / (a_ * (a_ + b_)) + d_ / (c_ * (c_ + d_)))  # == sqrt(1/a - 1/n_t + 1/c - 1/n_c)
    z = float(sps.norm.ppf(1 - (1 - confidence) / 2))
    return rr, rr * math.exp(-z * se), rr * math.exp(z * se)


def statsmodels_katz(a: int, n_t: int, c: int, n_c: int, confidence: float) -> tuple[float, float, float]:
    """statsmodels with rows = (treatment, control) and column 0 = event.

    Table2x2's own ``shift_zeros`` only replaces zero cells by 0.5, so the Haldane-Anscombe
    correction (0.5 added to all four cells) is applied here and statsmodels' shift disabled.
    """
    table = np.array([[a, n_t - a], [c, n_c - c]], dtype=float)
    if table.min() == 0:
        table += 0.5
    t = Table2x2(table, shift_zeros=False)
    lo, hi = t.riskratio_confint(alpha=1 - confidence)
    return float(t.riskratio), float(lo), float(hi)


def assert_katz_close(got: tuple[float, Interval], ref: tuple[float, float, float], ctx: object) -> None:
    rr, iv = got
    assert close(rr, ref[0]), ctx
    assert close(iv.lo, ref[1]), ctx
    assert close(iv.hi, ref[2]), ctx


def test_katz_matches_references_on_grid() -> None:
    for n_t, n_c in itertools.product((1, 2, 3, 7, 30), (1, 4, 25)):
        for a, c in itertools.product(range(n_t + 1), range(n_c + 1)):
            for conf in (0.8, 0.95, 0.999):
                got = risk_ratio_katz(a, n_t, c, n_c, conf)
                assert_katz_close(got, katz_reference(a, n_t, c, n_c, conf), (a, n_t, c, n_c, conf))
                if conf == 0.95:
                    assert_katz_close(got, statsmodels_katz(a, n_t, c, n_c, conf), (a, n_t, c, n_c))


def test_katz_matches_references_random_large_counts() -> None:
    rng = random.Random(20240611)
    for _ in range(400):
        n_t, n_c = rng.randint(1, 100_000), rng.randint(1, 100_000)
        a = rng.choice([0, n_t, rng.randint(0, n_t), rng.randint(0, min(n_t, 50))])
        c = rng.choice([0, n_c, rng.randint(0, n_c), rng.randint(0, min(n_c, 50))])
        conf = rng.choice(CONFIDENCES)
        got = risk_ratio_katz(a, n_t, c, n_c, conf)
        assert_katz_close(got, katz_reference(a, n_t, c, n_c, conf), (a, n_t, c, n_c, conf))
        assert_katz_close(got, statsmodels_katz(a, n_t, c, n_c, conf), (a, n_t, c, n_c, conf))


def test_katz_without_zero_cells_equals_statsmodels_default() -> None:
    # No zero cell: statsmodels' default shift_zeros=True is a no-op, so the plain call must agree.
    for a, n_t, c, n_c in [(3, 100, 1, 100), (10, 20, 5, 40), (1, 2, 1, 2), (999, 1000, 1, 1000)]:
        t = Table2x2(np.array([[a, n_t - a], [c, n_c - c]]))
        rr, iv = risk_ratio_katz(a, n_t, c, n_c, 0.95)
        lo, hi = t.riskratio_confint(alpha=0.05)
        assert close(rr, float(t.riskratio)) and close(iv.lo, float(lo)) and close(iv.hi, float(hi))


def test_katz_zero_cells_use_haldane_anscombe_on_all_cells() -> None:
    # 0/10 vs 2/10: corrected table is 0.5, 10.5 / 2.5, 8.5 -> RR = (0.5/11) / (2.5/11) = 0.2.
    rr, iv = risk_ratio_katz(0, 10, 2, 10, 0.95)
    assert close(rr, 0.2)
    se = math.sqrt(1 / 0.5 - 1 / 11 + 1 / 2.5 - 1 / 11)
    assert close(iv.lo, 0.2 * math.exp(-1.959963984540054 * se))
    # statsmodels' default shift (zero cells -> 0.5 only) gives a different answer: (0.5/10.5)/(2/10).
    default = Table2x2(np.array([[0, 10], [2, 8]]))
    assert close(float(default.riskratio), (0.5 / 10.5) / 0.2)
    assert not close(rr, float(default.riskratio))
    # Both arms without events: RR is exactly 1 and the interval is symmetric on the log scale.
    rr, iv = risk_ratio_katz(0, 10, 0, 10, 0.95)
    assert rr == 1.0
    assert close(math.log(iv.lo), -math.log(iv.hi))
    # All treatment observations are events (cell b == 0) also triggers the correction.
    assert_katz_close(risk_ratio_katz(5, 5, 1, 10, 0.9), katz_reference(5, 5, 1, 10, 0.9), "b == 0")


def test_katz_swapping_arms_inverts() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n_t, n_c = rng.randint(1, 500), rng.randint(1, 500)
        a, c = rng.randint(0, n_t), rng.randint(0, n_c)
        conf = rng.choice(CONFIDENCES)
        rr, iv = risk_ratio_katz(a, n_t, c, n_c, conf)
        rr2, iv2 = risk_ratio_katz(c, n_c, a, n_t, conf)
        assert close(rr * rr2, 1.0)
        assert close(iv.lo * iv2.hi, 1.0) and close(iv.hi * iv2.lo, 1.0)


@pytest.mark.parametrize(
    ("args", "confidence"),
    [
        ((-1, 10, 1, 10), 0.95),
        ((1, 10, -1, 10), 0.95),
        ((11, 10, 1, 10), 0.95),
        ((1, 10, 11, 10), 0.95),
        ((0, 0, 1, 10), 0.95),
        ((1, 10, 0, 0), 0.95),
        ((1, -10, 1, 10), 0.95),
        ((1, 10, 1, 10), 0.0),
        ((1, 10, 1, 10), 1.0),
        ((1, 10, 1, 10), math.nan),
    ],
)
def test_katz_rejects_invalid(args: tuple[int, int, int, int], confidence: float) -> None:
    with pytest.raises(ValueError):
        risk_ratio_katz(*args, confidence)


def test_katz_rejects_non_integer_counts() -> None:
    with pytest.raises(TypeError):
        risk_ratio_katz(1.5, 10, 1, 10, 0.95)  # type: ignore[arg-type]


def test_katz_documented_non_monotone_edges() -> None:
    # Pinned so the docstring stays true: reaching d_t == n_t switches the correction on ...
    rr_before, _ = risk_ratio_katz(2, 3, 1, 10, 0.8)
    rr_after, _ = risk_ratio_katz(3, 3, 1, 10, 0.8)
    assert rr_after < rr_before
    # ... and the Katz upper bound itself is not monotone for small cells.
    assert risk_ratio_katz(2, 3, 3, 4, 0.95)[1].hi < risk_ratio_katz(1, 3, 3, 4, 0.95)[1].hi


@st.composite
def katz_pair(draw: st.DrawFn) -> tuple[int, int, int, int, int, float]:
    n_t = draw(st.integers(2, 300))
    d1 = draw(st.integers(0, n_t - 2))
    d2 = draw(st.integers(d1 + 1, n_t - 1))
    n_c = draw(st.integers(1, 300))
    d_c = draw(st.integers(0, n_c))
    conf = draw(st.floats(0.5, 0.999))
    return d1, d2, n_t, d_c, n_c, conf


@PROPERTY
@given(katz_pair())
def test_katz_rr_and_lower_bound_monotone_in_treatment_events(case: tuple[int, int, int, int, int, float]) -> None:
    d1, d2, n_t, d_c, n_c, conf = case  # d1 < d2 < n_t
    rr1, iv1 = risk_ratio_katz(d1, n_t, d_c, n_c, conf)
    rr2, iv2 = risk_ratio_katz(d2, n_t, d_c, n_c, conf)
    assert rr2 >= rr1
    assert iv2.lo >= iv1.lo


@PROPERTY
@given(katz_pair())
def test_katz_all_monotone_in_regular_region(case: tuple[int, int, int, int, int, float]) -> None:
    d1, d2, n_t, d_c, n_c, conf = case
    z = normal_quantile(0.5 + conf / 2)
    assume(0 < d_c < n_c and 2 * min(d1, n_t - d2) >= z * z)
    rr1, iv1 = risk_ratio_katz(d1, n_t, d_c, n_c, conf)
    rr2, iv2 = risk_ratio_katz(d2, n_t, d_c, n_c, conf)
    assert rr2 >= rr1 and iv2.lo >= iv1.lo and iv2.hi >= iv1.hi * (1 - 1e-12)


def test_katz_all_monotone_in_regular_region_exhaustive_small() -> None:
    for conf in (0.8, 0.95, 0.99):
        z2 = normal_quantile(0.5 + conf / 2) ** 2
        for n_t, n_c in itertools.product(range(2, 31), (3, 10, 29)):
            for d_c in range(1, n_c):
                prev = None
                for d_t in range(1, n_t):
                    if 2 * min(d_t, n_t - d_t) < z2:
                        prev = None
                        continue
                    rr, iv = risk_ratio_katz(d_t, n_t, d_c, n_c, conf)
                    if prev is not None:
                        assert rr >= prev[0] and iv.lo >= prev[1] and iv.hi >= prev[2] * (1 - 1e-12)
                    prev = (rr, iv.lo, iv.hi)


@PROPERTY
@given(
    st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.floats(0.5, 0.99),
    st.floats(0.0001, 0.0099),
)
def test_katz_point_inside_and_nested_by_confidence(
    t: tuple[int, int], c: tuple[int, int], conf: float, extra: float
) -> None:
    (n_t, d_t), (n_c, d_c) = t, c
    rr, iv = risk_ratio_katz(d_t, n_t, d_c, n_c, conf)
    _, wide = risk_ratio_katz(d_t, n_t, d_c, n_c, conf + extra)
    assert 0 < iv.lo <= rr <= iv.hi < math.inf
    assert wide.lo <= iv.lo and wide.hi >= iv.hi


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


# --------------------------------------------------------------------------- bootstrap


def lognormal(rng: random.Random, n: int, sigma: float = 0.5, scale: float = 1.0) -> list[float]:
    return [scale * rng.lognormvariate(0, sigma) for _ in range(n)]


def test_percentile_interval_rank_rule() -> None:
    reps = [float(i) for i in range(2000)]
    rng = random.Random(0)
    rng.shuffle(reps)
    # k = floor(2000 * 0.05 / 2) = 50: the 50th smallest and the 50th largest replicate.
    assert stats._percentile_interval(reps, 0.95) == Interval(49.0, 1950.0)
    assert stats._percentile_interval(reps[:10], 0.95) == Interval(min(reps[:10]), max(reps[:10]))
    assert stats._percentile_interval([3.0], 0.9) == Interval(3.0, 3.0)


def test_bootstrap_p95_point_matches_numpy() -> None:
    rng = random.Random(1)
    for _ in range(100):
        t = lognormal(rng, rng.randint(1, 300))
        c = lognormal(rng, rng.randint(1, 300))
        point, _ = bootstrap_ratio_of_p95(t, c, 0.95, 1, seed=0)
        ref = np.percentile(t, 95, method="inverted_cdf") / np.percentile(c, 95, method="inverted_cdf")
        assert close(point, float(ref), rel=1e-15)


def test_bootstrap_p95_deterministic_for_seed() -> None:
    rng = random.Random(2)
    t, c = lognormal(rng, 200, scale=1.1), lognormal(rng, 250)
    a = bootstrap_ratio_of_p95(t, c, 0.95, 300, seed=42)
    assert bootstrap_ratio_of_p95(t, c, 0.95, 300, seed=42) == a
    assert bootstrap_ratio_of_p95(tuple(t), tuple(c), 0.95, 300, seed=42) == a
    assert bootstrap_ratio_of_p95(t, c, 0.95, 300, seed=43)[1] != a[1]


def test_bootstrap_does_not_touch_global_random() -> None:
    random.seed(123)
    state = random.getstate()
    bootstrap_ratio_of_p95([1.0, 2.0, 3.0], [1.0, 2.0], 0.9, 50, seed=1)
    bootstrap_mean([1.0, 2.0, 3.0], 0.9, 50, seed=1)
    assert random.getstate() == state


def test_bootstrap_p95_interval_contains_point_many_seeds() -> None:
    for seed in range(40):
        rng = random.Random(1000 + seed)
        scale = rng.choice([1.0, 1.2, 2.0])
        t, c = lognormal(rng, rng.randint(100, 400), scale=scale), lognormal(rng, rng.randint(100, 400))
        point, iv = bootstrap_ratio_of_p95(t, c, 0.9, 200, seed=seed)
        assert iv.lo <= point <= iv.hi, seed
        assert iv.lo > 0 and iv.hi < math.inf


def test_bootstrap_p95_agrees_with_independent_numpy_bootstrap() -> None:
    rng = random.Random(4)
    t, c = lognormal(rng, 400, scale=1.3), lognormal(rng, 400)
    _, iv = bootstrap_ratio_of_p95(t, c, 0.9, 3000, seed=9)
    gen = np.random.default_rng(9)
    ta, ca = np.array(t), np.array(c)
    boots = np.array(
        [
            np.percentile(gen.choice(ta, ta.size), 95, method="inverted_cdf")
            / np.percentile(gen.choice(ca, ca.size), 95, method="inverted_cdf")
            for _ in range(3000)
        ]
    )
    ref_lo, ref_hi = np.percentile(boots, [5, 95])
    width = ref_hi - ref_lo
    assert abs(iv.lo - ref_lo) < 0.1 * width and abs(iv.hi - ref_hi) < 0.1 * width


def test_bootstrap_p95_zero_convention() -> None:
    # Control p95 of 0: ratio is 1 when treatment p95 is also 0 and inf otherwise.
    assert bootstrap_ratio_of_p95([0.0] * 10, [0.0] * 10, 0.9, 20, seed=0) == (1.0, Interval(1.0, 1.0))
    point, iv = bootstrap_ratio_of_p95([1.0] * 10, [0.0] * 10, 0.9, 20, seed=0)
    assert point == math.inf and iv == Interval(math.inf, math.inf)
    point, iv = bootstrap_ratio_of_p95([0.0] * 10, [2.0] * 10, 0.9, 20, seed=0)
    assert point == 0.0 and iv == Interval(0.0, 0.0)


@pytest.mark.parametrize(
    ("t", "c", "conf", "n_boot"),
    [
        ([], [1.0], 0.9, 10),
        ([1.0], [], 0.9, 10),
        ([-1.0], [1.0], 0.9, 10),
        ([1.0], [-0.5], 0.9, 10),
        ([math.nan], [1.0], 0.9, 10),
        ([1.0], [math.inf], 0.9, 10),
        ([1.0], [1.0], 1.5, 10),
        ([1.0], [1.0], 0.9, 0),
    ],
)
def test_bootstrap_p95_rejects_invalid(t: list[float], c: list[float], conf: float, n_boot: int) -> None:
    with pytest.raises(ValueError):
        bootstrap_ratio_of_p95(t, c, conf, n_boot, seed=0)


def test_bootstrap_mean_point_deterministic_and_contains() -> None:
    for seed in range(40):
        rng = random.Random(seed)
        values = [rng.gauss(10, 3) for _ in range(rng.randint(20, 300))]
        point, iv = bootstrap_mean(values, 0.95, 300, seed=seed)
        assert close(point, float(np.mean(values)), rel=1e-13)
        assert iv.lo <= point <= iv.hi
        assert bootstrap_mean(values, 0.95, 300, seed=seed) == (point, iv)
        assert bootstrap_mean(values, 0.95, 300, seed=seed + 1)[1] != iv


def test_bootstrap_mean_agrees_with_scipy_and_normal_theory() -> None:
    rng = random.Random(8)
    values = [rng.expovariate(1.0) for _ in range(300)]
    _, iv = bootstrap_mean(values, 0.9, 4000, seed=1)
    ref = sps.bootstrap(
        (np.array(values),), np.mean, confidence_level=0.9, n_resamples=4000, method="percentile", rng=1
    ).confidence_interval
    width = ref.high - ref.low
    assert abs(iv.lo - ref.low) < 0.1 * width and abs(iv.hi - ref.high) < 0.1 * width
    se = float(np.std(values, ddof=0)) / math.sqrt(len(values))
    assert math.isclose(iv.width, 2 * 1.6448536269514722 * se, rel_tol=0.15)


def test_bootstrap_mean_constant_and_single_value() -> None:
    assert bootstrap_mean([2.5] * 17, 0.95, 100, seed=3) == (2.5, Interval(2.5, 2.5))
    assert bootstrap_mean([7.0], 0.5, 10, seed=3) == (7.0, Interval(7.0, 7.0))
    with pytest.raises(ValueError):
        bootstrap_mean([], 0.95, 10, seed=0)
    with pytest.raises(ValueError):
        bootstrap_mean([1.0], 0.95, 0, seed=0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60),
    st.floats(0.5, 0.99),
    st.integers(0, 2**32),
)
def test_bootstrap_mean_interval_within_data_range(values: list[float], conf: float, seed: int) -> None:
    point, iv = bootstrap_mean(values, conf, 50, seed)
    slack = 1e-9 * max(1.0, max(abs(v) for v in values))
    assert min(values) - slack <= iv.lo <= iv.hi <= max(values) + slack
    assert min(values) - slack <= point <= max(values) + slack


# --------------------------------------------------------------------------- Wilson


def test_wilson_matches_statsmodels_grid() -> None:
    for n in range(1, 151):
        ks = np.arange(n + 1)
        for conf in (0.8, 0.9, 0.95, 0.99, 0.999):
            ref_lo, ref_hi = proportion_confint(ks, n, alpha=1 - conf, method="wilson")
            for k in range(n + 1):
                iv = wilson_interval(k, n, conf)
                assert close(iv.lo, float(ref_lo[k]), abs_=1e-14) and close(iv.hi, float(ref_hi[k]), abs_=1e-14)


def test_wilson_matches_statsmodels_random_large() -> None:
    rng = random.Random(12)
    for _ in range(300):
        n = rng.randint(1, 10_000_000)
        k = rng.choice([0, n, rng.randint(0, n), rng.randint(0, min(n, 30))])
        conf = rng.choice(CONFIDENCES)
        lo, hi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
        iv = wilson_interval(k, n, conf)
        assert close(iv.lo, float(lo), abs_=1e-13) and close(iv.hi, float(hi), abs_=1e-13), (k, n)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == Interval(0.0, 1.0)
    assert wilson_interval(0, 10).lo == 0.0
    assert wilson_interval(10, 10).hi == 1.0
    for bad in [(-1, 10), (11, 10), (0, -1)]:
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError):
        wilson_interval(1, 10, confidence=1.0)


@PROPERTY
@given(st.integers(1, 100_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.floats(0.5, 0.999))
def test_wilson_bounds_in_unit_interval_and_contain_phat(kn: tuple[int, int], conf: float) -> None:
    k, n = kn
    iv = wilson_interval(k, n, conf)
    assert 0.0 <= iv.lo <= k / n <= iv.hi <= 1.0


@PROPERTY
@given(
    st.integers(1, 5_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(2, 50),
    st.floats(0.5, 0.999),
)
def test_wilson_narrows_with_n(kn: tuple[int, int], m: int, conf: float) -> None:
    k, n = kn
    small, big = wilson_interval(k, n, conf), wilson_interval(k * m, n * m, conf)
    assert big.width < small.width


@PROPERTY
@given(st.integers(1, 5_000).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))), st.floats(0.5, 0.999))
def test_wilson_monotone_in_successes(kn: tuple[int, int], conf: float) -> None:
    k, n = kn
    a, b = wilson_interval(k, n, conf), wilson_interval(k + 1, n, conf)
    assert b.lo >= a.lo and b.hi >= a.hi


# --------------------------------------------------------------------------- paired comparisons (the gate's baseline)


def test_mcnemar_exact_matches_statsmodels_and_scipy() -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    for b in range(0, 41):
        for c in range(0, 41):
            ours = stats.mcnemar_exact(b, c)
            ref = mcnemar(np.array([[50, b], [c, 50]]), exact=True).pvalue
            assert close(ours, float(ref), rel=1e-12), (b, c)
            if b + c:
                assert close(ours, float(sps.binomtest(b, b + c, 0.5).pvalue), rel=1e-9), (b, c)
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(2, 0) == 0.5  # two broken cases alone prove nothing at 5%
    assert stats.mcnemar_exact(6, 0) == 0.03125
    assert stats.mcnemar_exact(700, 650) == pytest.approx(float(sps.binomtest(650, 1350, 0.5).pvalue), rel=1e-9)
    with pytest.raises(ValueError):
        stats.mcnemar_exact(-1, 3)


def test_wilcoxon_exact_without_ties_matches_scipy() -> None:
    rng = random.Random(11)
    for _ in range(300):
        n = rng.randint(1, stats.WILCOXON_EXACT_MAX_N)
        d = [rng.gauss(rng.uniform(-1, 1), 1) for _ in range(n)]
        ref = float(sps.wilcoxon(d, method="exact").pvalue)
        assert close(stats.wilcoxon_signed_rank(d), ref, rel=1e-12), d


def test_wilcoxon_with_ties_matches_scipy_permutation_test() -> None:
    # Judge scores are integers: their differences tie. scipy's exact answer is its permutation
    # test over all 2**n sign flips, which it runs for n <= 13.
    rng = random.Random(12)
    for _ in range(25):  # scipy's permutation test is slow: a few cases, the rest by brute force below
        n = rng.randint(2, 10)
        d = [float(rng.choice([-3, -2, -1, 1, 1, 2, 4])) for _ in range(n)]
        ref = float(sps.wilcoxon(d).pvalue)
        assert close(stats.wilcoxon_signed_rank(d), ref, rel=1e-9), d


def test_wilcoxon_with_ties_matches_brute_force_sign_flips() -> None:
    rng = random.Random(18)
    for _ in range(60):
        n = rng.randint(1, 14)
        d = [float(rng.choice([-2, -1, -0.5, 0.5, 1, 1, 3])) for _ in range(n)]
        ranks = sps.rankdata(np.abs(d))
        observed = float(np.sum(ranks[np.array(d) > 0]))
        sums = [float(np.dot(ranks, signs)) for signs in itertools.product((0, 1), repeat=n)]
        lower = sum(1 for t in sums if t <= observed + 1e-9) / len(sums)
        upper = sum(1 for t in sums if t >= observed - 1e-9) / len(sums)
        assert close(stats.wilcoxon_signed_rank(d), min(1.0, 2 * min(lower, upper)), rel=1e-12), d


def test_wilcoxon_large_samples_match_scipy_normal_approximation() -> None:
    rng = random.Random(13)
    for _ in range(100):
        n = rng.randint(stats.WILCOXON_EXACT_MAX_N + 1, 400)
        d = [float(rng.choice([-2, -1, 1, 1, 2, 3])) if rng.random() < 0.5 else rng.gauss(0.1, 1) for _ in range(n)]
        ref = float(sps.wilcoxon(d, method="asymptotic", correction=False).pvalue)
        assert close(stats.wilcoxon_signed_rank(d), ref, rel=1e-9), n


def test_wilcoxon_drops_zero_differences_like_scipy() -> None:
    rng = random.Random(14)
    for _ in range(50):
        nonzero = [rng.gauss(0.3, 1) for _ in range(rng.randint(1, 30))]
        with_zeros = nonzero + [0.0] * rng.randint(1, 20)
        rng.shuffle(with_zeros)
        ref = float(sps.wilcoxon(nonzero, method="exact").pvalue)
        assert close(stats.wilcoxon_signed_rank(with_zeros), ref, rel=1e-12)
    assert stats.wilcoxon_signed_rank([0.0, 0.0, 0.0]) == 1.0  # no change at all is no evidence of one
    assert stats.wilcoxon_signed_rank([-1.0] * 6) == pytest.approx(0.03125)  # six ties, all down: 2 / 2**6
    with pytest.raises(ValueError):
        stats.wilcoxon_signed_rank([])
    with pytest.raises(ValueError):
        stats.wilcoxon_signed_rank([1.0, math.nan])


def test_paired_statistics() -> None:
    assert stats.mean_difference([3.0, 5.0], [1.0, 2.0]) == 2.5
    assert stats.p95_ratio([100.0] * 9 + [400.0], [100.0] * 9 + [200.0]) == 2.0  # rank ceil(9.5) = 10
    assert stats.total_ratio([1.0, 2.0], [1.0, 1.0]) == 1.5
    assert stats.total_ratio([0.0], [0.0]) == 1.0 and stats.total_ratio([1.0], [0.0]) == math.inf


def test_bootstrap_paired_is_deterministic_and_contains_the_point() -> None:
    rng = random.Random(15)
    for seed in range(20):
        base = [rng.lognormvariate(5, 0.4) for _ in range(60)]
        now = [b * rng.uniform(0.9, 1.4) for b in base]
        point, iv = stats.bootstrap_paired(now, base, stats.p95_ratio, 0.95, 400, seed)
        assert point == stats.p95_ratio(now, base)
        assert iv.lo <= point <= iv.hi
        assert stats.bootstrap_paired(now, base, stats.p95_ratio, 0.95, 400, seed) == (point, iv)


def test_bootstrap_paired_agrees_with_scipy_paired_bootstrap() -> None:
    rng = random.Random(16)
    base = [rng.lognormvariate(5, 0.5) for _ in range(200)]
    now = [b * rng.uniform(1.0, 1.5) for b in base]
    for statistic, ref_stat in (
        (stats.total_ratio, lambda a, b: np.sum(a) / np.sum(b)),
        (stats.mean_difference, lambda a, b: np.mean(a) - np.mean(b)),
    ):
        _, iv = stats.bootstrap_paired(now, base, statistic, 0.95, 4000, seed=2)
        ref = sps.bootstrap(
            (np.array(now), np.array(base)),
            ref_stat,
            paired=True,
            vectorized=False,
            confidence_level=0.95,
            n_resamples=4000,
            method="percentile",
            rng=2,
        ).confidence_interval
        width = ref.high - ref.low
        assert abs(iv.lo - ref.low) < 0.1 * width and abs(iv.hi - ref.high) < 0.1 * width


def test_bootstrap_paired_keeps_pairs_together() -> None:
    # Every case got exactly 10% slower: resampling pairs keeps the ratio exactly 1.1 (an unpaired
    # bootstrap would not).
    rng = random.Random(17)
    base = [rng.uniform(50, 500) for _ in range(80)]
    now = [b * 1.1 for b in base]
    point, iv = stats.bootstrap_paired(now, base, stats.total_ratio, 0.95, 500, seed=4)
    assert point == pytest.approx(1.1) and iv.lo == pytest.approx(1.1) and iv.hi == pytest.approx(1.1)


def test_bootstrap_paired_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="equally long"):
        stats.bootstrap_paired([1.0, 2.0], [1.0], stats.total_ratio, 0.95, 10, 0)
    with pytest.raises(ValueError):
        stats.bootstrap_paired([], [], stats.total_ratio, 0.95, 10, 0)
    with pytest.raises(ValueError):
        stats.bootstrap_paired([1.0], [1.0], stats.total_ratio, 1.0, 10, 0)


# --- bootstraps drawn together ---------------------------------------------------------------------
# The reference is the plain loop each bootstrap ran on its own before draws were shared: one
# Random(seed) per statistic, n indices per replicate, the statistic on the gathered (and, for p95,
# sorted) values. Sharing the draws and reading p95 from the draw's counts must give the same floats.


def _own_loop(columns: list[list[float]], statistic: object, conf: float, n_boot: int, seed: int) -> stats.Interval:
    rng = random.Random(seed)
    n = len(columns[0])
    replicates = []
    for _ in range(n_boot):
        picks = rng.choices(range(n), k=n)
        replicates.append(statistic(*([c[i] for i in picks] for c in columns)))  # type: ignore[operator]
    return stats._percentile_interval(replicates, conf)


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


@PROPERTY
@given(
    data=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=60),
    seed=st.integers(0, 2**16),
)
def test_p95_ratio_from_counts_equals_sorting_each_resample(data: list[tuple[int, int]], seed: int) -> None:
    # Small integers: many ties, zeros (0/0 and x/0), and n from 1 up.
    now = [float(a) * 1.5 for a, _ in data]
    base = [float(b) for _, b in data]
    (iv,) = stats.bootstrap_intervals([stats.paired(now, base, stats.p95_ratio)], 0.9, 60, seed)
    assert iv == _own_loop([now, base], stats.p95_ratio, 0.9, 60, seed)


def test_statistics_drawn_together_equal_their_own_bootstraps() -> None:
    rng = random.Random(31)
    n, short = 120, 45  # two lengths: each length draws from its own Random(seed)
    base = [rng.lognormvariate(5, 0.5) for _ in range(n)]
    now = [b * rng.uniform(0.8, 1.5) for b in base]
    diffs = [rng.choice([-1.0, 0.0, 0.0, 1.0]) for _ in range(n)]
    few = [rng.uniform(-1, 1) for _ in range(short)]
    together = stats.bootstrap_intervals(
        [
            stats.mean_of(diffs),
            stats.paired(now, base, stats.p95_ratio),
            stats.mean_of(few),
            stats.paired(now, base, stats.total_ratio),
            stats.paired(now[:short], base[:short], stats.mean_difference),
        ],
        0.95,
        500,
        seed=8,
    )
    assert together == [
        _own_loop([diffs], _mean, 0.95, 500, 8),
        _own_loop([now, base], stats.p95_ratio, 0.95, 500, 8),
        _own_loop([few], _mean, 0.95, 500, 8),
        _own_loop([now, base], stats.total_ratio, 0.95, 500, 8),
        _own_loop([now[:short], base[:short]], stats.mean_difference, 0.95, 500, 8),
    ]
    assert bootstrap_mean(diffs, 0.95, 500, seed=8) == (_mean(diffs), together[0])
    assert stats.bootstrap_paired(now, base, stats.p95_ratio, 0.95, 500, 8) == (
        stats.p95_ratio(now, base),
        together[1],
    )


def test_drawing_together_checks_what_it_is_given() -> None:
    with pytest.raises(ValueError, match="equally long"):
        stats.paired([1.0, 2.0], [1.0], stats.p95_ratio)
    with pytest.raises(ValueError):
        stats.mean_of([1.0, math.nan])
    with pytest.raises(ValueError):
        stats.bootstrap_intervals([stats.mean_of([1.0])], 0.95, 0, seed=1)
    assert stats.bootstrap_intervals([], 0.95, 10, seed=1) == []
