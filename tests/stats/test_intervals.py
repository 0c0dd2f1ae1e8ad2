"""`stats.intervals` against statsmodels and scipy (test-only dependencies): the Interval type, Katz's risk-ratio
interval, Wilson's interval (given a confidence level, or calibration's z) and the labels it needs."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import Table2x2
from statsmodels.stats.proportion import proportion_confint

from ragjudge.stats import Interval, normal_quantile, risk_ratio_katz, wilson_interval
from ragjudge.stats.agreement import compare
from ragjudge.stats.intervals import labels_needed, max_lower_bound
from ragjudge.stats.normal import Z95
from tests.stats.common import CONFIDENCES, PROPERTY, close

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


# --------------------------------------------------------------------------- Wilson given z (calibration's)


def test_wilson_matches_statsmodels() -> None:
    rng = random.Random(7)
    cases = [(s, n) for n in range(1, 31) for s in range(n + 1)]
    cases += [(rng.randint(0, n), n) for n in (rng.randint(31, 5000) for _ in range(300))]
    for s, n in cases:
        ref_lo, ref_hi = proportion_confint(s, n, alpha=0.05, method="wilson")
        lo, hi = wilson_interval(s, n)
        assert lo == pytest.approx(float(ref_lo), abs=1e-12), (s, n)
        assert hi == pytest.approx(float(ref_hi), abs=1e-12), (s, n)


def test_wilson_other_alpha_matches_statsmodels() -> None:
    z99 = 2.5758293035489004  # norm.ppf(0.995)
    for s, n in [(0, 10), (3, 10), (10, 10), (97, 120)]:
        ref_lo, ref_hi = proportion_confint(s, n, alpha=0.01, method="wilson")
        lo, hi = wilson_interval(s, n, z=z99)
        assert lo == pytest.approx(float(ref_lo), abs=1e-9)
        assert hi == pytest.approx(float(ref_hi), abs=1e-9)


def test_wilson_edges_given_z() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 5)[0] == 0.0
    assert wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(3, 7, z=0.0) == pytest.approx((3 / 7, 3 / 7))
    for bad in [(-1, 5), (6, 5), (0, -1)]:
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, z=-1.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=100_000), st.data())
def test_wilson_bounds_in_unit_interval(n: int, data: st.DataObject) -> None:
    s = data.draw(st.integers(min_value=0, max_value=n))
    z = data.draw(st.floats(min_value=0.0, max_value=10.0))
    lo, hi = wilson_interval(s, n, z=z)
    assert 0.0 <= lo <= hi <= 1.0
    if n:
        assert lo <= s / n + 1e-12 and s / n - 1e-12 <= hi


def former_calibration_wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Calibration's own copy of the Wilson interval, as it was before stats had one."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    lower = 0.0 if successes == 0 else max(0.0, center - half)
    upper = 1.0 if successes == n else min(1.0, center + half)
    return (lower, upper)


def test_calibration_intervals_are_the_ones_its_records_always_held() -> None:
    # The records keep both ends in full precision: the one Wilson must give calibration's floats exactly.
    for n in range(0, 301):
        for k in range(n + 1):
            assert wilson_interval(k, n, z=Z95) == former_calibration_wilson(k, n), (k, n)
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(1, 10_000_000)
        k = rng.randint(0, n)
        z = rng.choice([Z95, 1.0, 2.5758293035489004])
        assert wilson_interval(k, n, z=z) == former_calibration_wilson(k, n, z), (k, n, z)
    report = compare([1] * 43 + [0] * 7, [1] * 50, binary=True)
    assert report.ci95 == former_calibration_wilson(43, 50) and type(report.ci95) is tuple


# --------------------------------------------------------------------------- labels needed


def test_max_lower_bound_is_perfect_agreement_wilson() -> None:
    assert max_lower_bound(0) == 0.0
    for n in [1, 2, 5, 10, 35, 100, 1000]:
        for z in [1.0, 1.96, Z95, 2.576]:
            assert max_lower_bound(n, z) == pytest.approx(wilson_interval(n, n, z=z)[0], rel=1e-12)


def test_labels_needed_known_values() -> None:
    # n / (n + 1.96^2) >= 0.9  <=>  n >= 34.57...
    assert labels_needed(0.9) == 35
    assert max_lower_bound(34) < 0.9 <= max_lower_bound(35)
    assert labels_needed(0.0) == 1
    assert labels_needed(-0.5) == 1
    for bad in [1.0, 1.5, math.nan]:
        with pytest.raises(ValueError):
            labels_needed(bad)


def test_labels_needed_is_minimal() -> None:
    rng = random.Random(11)
    targets = [0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99] + [rng.uniform(0.01, 0.995) for _ in range(300)]
    # exact boundaries: the lower bound of some n itself
    targets += [max_lower_bound(n) for n in range(1, 200)]
    for m in targets:
        for z in (1.96, Z95, 1.0, 2.576):
            n = labels_needed(m, z)
            assert n >= 1
            assert max_lower_bound(n, z) >= m, (m, z, n)
            assert n == 1 or max_lower_bound(n - 1, z) < m, (m, z, n)
            # cross-check against the independent statsmodels interval
            ref_lo = float(proportion_confint(n, n, alpha=0.05, method="wilson")[0])
            if z == Z95:
                assert ref_lo == pytest.approx(max_lower_bound(n, z), rel=1e-12)
