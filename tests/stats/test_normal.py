"""`stats.normal`, the normal quantile, against scipy (a test-only dependency)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ragjudge.stats import normal_quantile
from tests.stats.common import close

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
