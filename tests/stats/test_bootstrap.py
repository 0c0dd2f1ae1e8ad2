"""`stats.bootstrap` against numpy and scipy bootstraps (test-only dependencies), and the plain loop it must equal."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ragjudge.stats import Interval, bootstrap_mean, bootstrap_ratio_of_p95
from ragjudge.stats import bootstrap as stats  # the module under test, private helpers included
from tests.stats.common import PROPERTY, close

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
