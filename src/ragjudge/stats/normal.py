"""The standard normal quantile: the ``z`` behind every normal-approximation interval."""

from __future__ import annotations

from statistics import NormalDist

from ragjudge.stats.arguments import check_confidence

#: Two-sided 95% normal quantile, ``scipy.stats.norm.ppf(0.975)`` (what statsmodels uses). It is two ulps
#: above ``two_sided_z(0.95)``; calibration has always used this one, and its records keep the ends in full.
Z95 = 1.959963984540054

_STANDARD_NORMAL = NormalDist()


def normal_quantile(p: float) -> float:
    """Inverse CDF of the standard normal distribution, for ``p`` in ``(0, 1)``.

    Delegates to :meth:`statistics.NormalDist.inv_cdf` (Wichura's AS241, ~1e-16 relative).
    """
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    return _STANDARD_NORMAL.inv_cdf(p)


def two_sided_z(confidence: float) -> float:
    """The ``z`` with ``P(-z <= Z <= z) = confidence`` for a standard normal ``Z``."""
    return -normal_quantile((1.0 - check_confidence(confidence)) / 2.0)
