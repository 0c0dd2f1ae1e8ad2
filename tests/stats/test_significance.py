"""`stats.significance`, McNemar's and Wilcoxon's tests, against statsmodels and scipy (test-only dependencies)."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy import stats as sps

from ragjudge import stats
from tests.stats.common import close

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


def test_wilcoxon_is_exact_up_to_50_differences_and_normal_from_51() -> None:
    rng = random.Random(15)
    d = [rng.gauss(0.3, 1) for _ in range(51)]
    assert close(stats.wilcoxon_signed_rank(d[:50]), float(sps.wilcoxon(d[:50], method="exact").pvalue), rel=1e-12)
    normal = float(sps.wilcoxon(d, method="asymptotic", correction=False).pvalue)
    assert close(stats.wilcoxon_signed_rank(d), normal, rel=1e-12)
    assert not close(float(sps.wilcoxon(d, method="exact").pvalue), normal, rel=1e-6)
