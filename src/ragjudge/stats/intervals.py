"""Confidence intervals in closed form: the :class:`Interval` type, Wilson's for a proportion, Katz's for a risk ratio.

The bootstrap and order-statistic intervals return the same :class:`Interval`; they live in
``stats.bootstrap`` and ``stats.order_statistics``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ragjudge.stats.arguments import check_confidence, check_count
from ragjudge.stats.normal import two_sided_z


class _Ends(NamedTuple):
    lo: float
    hi: float


class Interval(_Ends):
    """A closed interval ``[lo, hi]``; either end may be infinite.

    It is also the pair ``(lo, hi)``: it unpacks, indexes and compares equal to that tuple, which is what
    an agreement report keeps as its ``ci95``.
    """

    __slots__ = ()

    def __new__(cls, lo: float, hi: float) -> Interval:
        if not lo <= hi:  # also rejects NaN
            raise ValueError(f"invalid interval: lo={lo!r} > hi={hi!r}")
        return super().__new__(cls, lo, hi)

    @property
    def width(self) -> float:
        """``hi - lo`` (``inf`` when an end is unbounded)."""
        return self.hi - self.lo

    def contains(self, x: float) -> bool:
        """Whether ``lo <= x <= hi``."""
        return self.lo <= x <= self.hi


# --------------------------------------------------------------------------- proportions


def wilson_interval(successes: int, n: int, confidence: float = 0.95, *, z: float | None = None) -> Interval:
    """Wilson score interval for a binomial proportion ``successes / n``; ``n == 0`` gives ``[0, 1]``.

    The normal quantile is ``two_sided_z(confidence)``, or ``z`` itself when given (finite, ``>= 0``;
    ``confidence`` is then not read): calibration passes :data:`~ragjudge.stats.normal.Z95`, the value
    statsmodels uses. The ends are clamped to ``[0, 1]`` and are exactly 0 (resp. 1) when ``successes`` is
    0 (resp. ``n``).
    """
    if z is None:
        z = two_sided_z(confidence)
    elif not (math.isfinite(z) and z >= 0):
        raise ValueError(f"z must be finite and >= 0, got {z!r}")
    k = check_count(successes, "successes")
    n = check_count(n, "n")
    if k > n:
        raise ValueError(f"successes ({k}) must not exceed n ({n})")
    if n == 0:
        return Interval(0.0, 1.0)
    z2 = z * z
    p_hat = k / n
    denom = 1.0 + z2 / n
    center = (p_hat + z2 / (2.0 * n)) / denom
    # z times the root, then over denom: the order calibration records were written with, ends in full
    # precision. Dividing z by denom first moves an end by one ulp now and then; the bias check, which did,
    # reports its bound rounded to four places, where the two orders agree (tests/judge/test_bias.py).
    half = z * math.sqrt(p_hat * (1.0 - p_hat) / n + z2 / (4.0 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, center - half)
    hi = 1.0 if k == n else min(1.0, center + half)
    return Interval(lo, hi)


def max_lower_bound(n: int, z: float = 1.96) -> float:
    """Best achievable Wilson lower bound with ``n`` labels: perfect agreement, ``n`` of ``n``.

    Closed form ``n / (n + z**2)`` (equal to ``wilson_interval(n, n, z=z).lo``); ``0.0`` for
    ``n == 0``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not (math.isfinite(z) and z >= 0):
        raise ValueError(f"z must be finite and >= 0, got {z!r}")
    if n == 0:
        return 0.0
    return n / (n + z * z)


def labels_needed(min_agreement: float, z: float = 1.96) -> int:
    """Smallest number of labels for which ``min_agreement`` is reachable at all.

    That is the smallest ``n >= 1`` with ``max_lower_bound(n, z) >= min_agreement``: even a
    judge that agrees on every one of fewer labels cannot show a Wilson lower bound of
    ``min_agreement``, so a gate with fewer labels is unreachable by construction.

    ``min_agreement <= 0`` needs one label (at least one is always required);
    ``min_agreement >= 1`` is never reachable and raises :class:`ValueError`. The default
    ``z = 1.96`` is slightly larger than ``Z95``, so the answer is conservative for
    intervals computed with ``Z95``.
    """
    if math.isnan(min_agreement) or min_agreement >= 1.0:
        raise ValueError(f"min_agreement must be < 1 to be reachable, got {min_agreement!r}")
    if not (math.isfinite(z) and z >= 0):
        raise ValueError(f"z must be finite and >= 0, got {z!r}")
    if min_agreement <= 0.0:
        return 1
    # Closed-form estimate of n >= m z^2 / (1 - m), then correct for float rounding.
    n = max(1, math.ceil(min_agreement * z * z / (1.0 - min_agreement)))
    while n > 1 and max_lower_bound(n - 1, z) >= min_agreement:
        n -= 1
    while max_lower_bound(n, z) < min_agreement:
        n += 1
    return n


# --------------------------------------------------------------------------- risk ratio


def risk_ratio_katz(d_t: int, n_t: int, d_c: int, n_c: int, confidence: float) -> tuple[float, Interval]:
    """Risk ratio of treatment vs control with the Katz log confidence interval.

    ``d_t`` of ``n_t`` treatment observations and ``d_c`` of ``n_c`` control observations are
    events (e.g. dislikes). With the 2x2 table ``a = d_t, b = n_t - d_t, c = d_c, d = n_c - d_c``::

        RR = (a / n_t) / (c / n_c)
        log(RR) +/- z * sqrt(1/a - 1/n_t + 1/c - 1/n_c)

    Zero cells (Haldane-Anscombe): if *any* of the four cells ``a, b, c, d`` is zero, 0.5 is
    added to *every* cell (so ``n_t`` and ``n_c`` each grow by 1) before computing both the point
    estimate and the interval. The returned point estimate is then the corrected one, which is
    finite and positive, e.g. ``0/10`` vs ``0/10`` gives ``RR = 1``. (Note: statsmodels'
    ``Table2x2(shift_zeros=True)`` instead replaces only the zero cells by 0.5.)

    Monotonicity in ``d_t`` (all else fixed): ``RR`` and the lower bound never decrease as long
    as ``d_t < n_t``; the step to ``d_t == n_t`` switches the correction on and can lower both
    (e.g. 2/3 vs 1/10 has ``RR = 6.67``, 3/3 vs 1/10 has ``RR = 6.42``). The Katz upper bound is
    not monotone for small cells (e.g. at 95%, 1/3 vs 3/4 has ``hi = 2.43``, 2/3 vs 3/4 has
    ``hi = 2.37``); it is non-decreasing over any range of ``d_t`` in which every value satisfies
    ``2 * min(d_t, n_t - d_t) >= z**2`` (``min >= 2`` at 95%) and ``0 < d_c < n_c``.

    Raises ``ValueError`` on negative counts, ``d > n`` or ``n == 0``.
    """
    confidence = check_confidence(confidence)
    a = check_count(d_t, "d_t")
    nt = check_count(n_t, "n_t")
    c = check_count(d_c, "d_c")
    nc = check_count(n_c, "n_c")
    if nt == 0 or nc == 0:
        raise ValueError("n_t and n_c must be > 0")
    if a > nt:
        raise ValueError(f"d_t ({a}) must not exceed n_t ({nt})")
    if c > nc:
        raise ValueError(f"d_c ({c}) must not exceed n_c ({nc})")

    a_f, nt_f, c_f, nc_f = float(a), float(nt), float(c), float(nc)
    if 0 in (a, nt - a, c, nc - c):
        a_f, c_f = a_f + 0.5, c_f + 0.5
        nt_f, nc_f = nt_f + 1.0, nc_f + 1.0

    rr = (a_f / nt_f) / (c_f / nc_f)
    log_rr = math.log(a_f / nt_f) - math.log(c_f / nc_f)
    se = math.sqrt(1.0 / a_f - 1.0 / nt_f + 1.0 / c_f - 1.0 / nc_f)
    half = two_sided_z(confidence) * se
    # min/max only guard against last-bit rounding; se > 0 always holds here.
    return rr, Interval(min(rr, math.exp(log_rr - half)), max(rr, math.exp(log_rr + half)))
