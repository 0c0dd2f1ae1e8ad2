"""Distribution-free confidence intervals for a quantile, between two order statistics of the sample.

The number of observations below the true ``q``-quantile is ``Binomial(n, q)`` whatever the distribution,
so two ranks of the sorted sample bound the quantile with a known coverage.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from ragjudge.stats.arguments import check_confidence, check_values
from ragjudge.stats.intervals import Interval

# Above this sample size log C(n, k) comes from lgamma instead of the exact integer math.comb
# (math.comb(100_000, 50_000) alone costs ~80 ms; lgamma is accurate to ~1e-10 relative there).
_EXACT_COMB_MAX_N = 10_000

# Binomial probabilities below this are treated as zero. They fall off monotonically away from
# the mode, so the ignored mass is below n * 1e-300.
_NEGLIGIBLE = 1e-300


def _log_comb(n: int, k: int) -> float:
    if n <= _EXACT_COMB_MAX_N:
        return math.log(math.comb(n, k))
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _binomial_pmf(n: int, p: float) -> list[float]:
    """``P(B = k)`` for ``k = 0..n``, ``B ~ Binomial(n, p)``, ``0 < p < 1``.

    Starts at the mode (computed in log space, so nothing underflows for large ``n``) and walks
    outwards with the term ratio ``P(k+1)/P(k) = (n-k)/(k+1) * p/(1-p)``, stopping once terms are
    negligible: O(n) memory, O(sqrt(n)) arithmetic in practice.
    """
    pmf = [0.0] * (n + 1)
    mode = min(n, max(0, math.floor((n + 1) * p)))
    pmf[mode] = math.exp(_log_comb(n, mode) + mode * math.log(p) + (n - mode) * math.log1p(-p))
    odds = p / (1.0 - p)
    term = pmf[mode]
    for k in range(mode, n):  # k -> k + 1
        term *= (n - k) / (k + 1) * odds
        if term < _NEGLIGIBLE:
            break
        pmf[k + 1] = term
    term = pmf[mode]
    for k in range(mode, 0, -1):  # k -> k - 1
        term *= k / (n - k + 1) / odds
        if term < _NEGLIGIBLE:
            break
        pmf[k - 1] = term
    return pmf


def quantile_order_statistic_ranks(n: int, q: float, confidence: float) -> tuple[int, int]:
    """1-based ranks ``(l, u)`` of the distribution-free interval ``[x_(l), x_(u)]`` for the q-quantile.

    With ``B ~ Binomial(n, q)`` (the number of observations below the true quantile) and
    ``alpha = 1 - confidence``, the interval is equal-tailed:

    * ``l`` is the largest rank in ``1..n`` with ``P(B <= l - 1) <= alpha / 2``,
    * ``u`` is the smallest rank in ``1..n`` with ``P(B >= u) <= alpha / 2``,

    so ``P(l <= B < u) >= confidence``. When no rank satisfies a condition (``n`` too small,
    i.e. ``(1 - q)**n > alpha/2`` resp. ``q**n > alpha/2``) that side is unbounded and reported
    as ``l = 0`` (``x_(0) = -inf``) resp. ``u = n + 1`` (``x_(n+1) = +inf``). Always ``l < u``.
    """
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    q = float(q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    half_alpha = (1.0 - check_confidence(confidence)) / 2.0
    pmf = _binomial_pmf(n, q)

    lower = 0  # largest k + 1 with P(B <= k) <= alpha/2, k in 0..n-1
    cdf = 0.0
    for k in range(n):
        cdf += pmf[k]
        if cdf > half_alpha:
            break
        lower = k + 1

    upper = n + 1  # smallest u in 1..n with P(B >= u) <= alpha/2
    sf = 0.0
    for u in range(n, 0, -1):
        sf += pmf[u]
        if sf > half_alpha:
            break
        upper = u
    return lower, upper


def quantile_order_statistic_bounds(values: Sequence[float], q: float, confidence: float) -> Interval:
    """Distribution-free two-sided confidence interval for the ``q``-quantile, ``q`` in ``(0, 1)``.

    The interval is ``[x_(l), x_(u)]`` for the order statistics of ``values`` with ranks from
    :func:`quantile_order_statistic_ranks`; a side whose rank does not exist because ``values``
    is too short is ``-inf`` / ``+inf``. Coverage is at least ``confidence`` for continuous
    distributions and, since the interval is closed, also with ties / discrete data.
    """
    data = sorted(check_values(values))
    n = len(data)
    lower, upper = quantile_order_statistic_ranks(n, q, confidence)
    lo = data[lower - 1] if lower >= 1 else -math.inf
    hi = data[upper - 1] if upper <= n else math.inf
    return Interval(lo, hi)
