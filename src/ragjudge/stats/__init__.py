"""Statistics for canary decisions and for the gate's comparison with a baseline, standard library only.

Everything here is pure Python (``math``, ``random``, ``statistics``, ``fractions``) so neither
the canary nor the gate has a numeric runtime dependency. The reference implementations the tests compare
against (scipy, statsmodels, numpy) are test-only dependencies.

Conventions shared by all functions:

* ``confidence`` is a two-sided confidence level strictly inside ``(0, 1)``, e.g. ``0.95``.
* Sample inputs must be non-empty and contain only finite floats; otherwise ``ValueError``.
* Confidence intervals are closed intervals, returned as :class:`Interval`.
* Bootstrap functions are deterministic for a given ``seed``: they draw from a private
  ``random.Random(seed)`` and never touch the global random state.
"""

from __future__ import annotations

import math
import operator
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist

__all__ = [
    "Draw",
    "Interval",
    "Resampled",
    "bootstrap_intervals",
    "bootstrap_mean",
    "bootstrap_paired",
    "bootstrap_ratio_of_p95",
    "mcnemar_exact",
    "mean_difference",
    "mean_of",
    "normal_quantile",
    "p95_ratio",
    "paired",
    "percentile_nearest_rank",
    "quantile_order_statistic_bounds",
    "quantile_order_statistic_ranks",
    "risk_ratio_katz",
    "total_ratio",
    "wilcoxon_signed_rank",
    "wilson_interval",
]

_STANDARD_NORMAL = NormalDist()

# Above this sample size log C(n, k) comes from lgamma instead of the exact integer math.comb
# (math.comb(100_000, 50_000) alone costs ~80 ms; lgamma is accurate to ~1e-10 relative there).
_EXACT_COMB_MAX_N = 10_000

# Binomial probabilities below this are treated as zero. They fall off monotonically away from
# the mode, so the ignored mass is below n * 1e-300.
_NEGLIGIBLE = 1e-300


@dataclass(frozen=True, slots=True)
class Interval:
    """A closed interval ``[lo, hi]``; either end may be infinite."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:  # also rejects NaN
            raise ValueError(f"invalid interval: lo={self.lo!r} > hi={self.hi!r}")

    @property
    def width(self) -> float:
        """``hi - lo`` (``inf`` when an end is unbounded)."""
        return self.hi - self.lo

    def contains(self, x: float) -> bool:
        """Whether ``lo <= x <= hi``."""
        return self.lo <= x <= self.hi


# --------------------------------------------------------------------------- validation helpers


def _check_confidence(confidence: float) -> float:
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence


def _check_values(values: Sequence[float], name: str = "values") -> list[float]:
    data = [float(v) for v in values]
    if not data:
        raise ValueError(f"{name} must not be empty")
    if not all(math.isfinite(v) for v in data):
        raise ValueError(f"{name} must contain only finite numbers")
    return data


def _check_n_boot(n_boot: int) -> int:
    n_boot = operator.index(n_boot)
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    return n_boot


def _check_count(value: int, name: str) -> int:
    value = operator.index(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _exact(x: float) -> Fraction:
    """The decimal value ``x`` was written as (``0.95`` -> ``19/20``, not the binary double).

    Used where a rank is ``ceil``/``floor`` of a product that should be an exact integer, so that
    e.g. the 28th percentile of 25 values is rank ``ceil(28 * 25 / 100) = 7`` and not 8 because
    ``0.28 * 25 == 7.000000000000001`` in binary floating point.
    """
    return Fraction(repr(float(x)))


def _z_two_sided(confidence: float) -> float:
    """The ``z`` with ``P(-z <= Z <= z) = confidence`` for a standard normal ``Z``."""
    return -normal_quantile((1.0 - confidence) / 2.0)


# --------------------------------------------------------------------------- normal quantile


def normal_quantile(p: float) -> float:
    """Inverse CDF of the standard normal distribution, for ``p`` in ``(0, 1)``.

    Delegates to :meth:`statistics.NormalDist.inv_cdf` (Wichura's AS241, ~1e-16 relative).
    """
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    return _STANDARD_NORMAL.inv_cdf(p)


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
    confidence = _check_confidence(confidence)
    a = _check_count(d_t, "d_t")
    nt = _check_count(n_t, "n_t")
    c = _check_count(d_c, "d_c")
    nc = _check_count(n_c, "n_c")
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
    half = _z_two_sided(confidence) * se
    # min/max only guard against last-bit rounding; se > 0 always holds here.
    return rr, Interval(min(rr, math.exp(log_rr - half)), max(rr, math.exp(log_rr + half)))


# --------------------------------------------------------------------------- percentiles


def _nearest_rank(n: int, q: float) -> int:
    """1-based rank ``ceil(q / 100 * n)`` computed exactly, clamped to ``[1, n]``."""
    return min(n, max(1, math.ceil(_exact(q) * n / 100)))


def percentile_nearest_rank(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile: the ``ceil(q/100 * n)``-th smallest value.

    ``q`` must be in ``(0, 100]``. The rank is computed exactly from the decimal value of ``q``
    (so ``q = 28, n = 25`` gives rank 7, where naive floating point gives 8). Equals
    ``numpy.percentile(values, q, method="inverted_cdf")`` except at such float-rounding ties.
    """
    q = float(q)
    if not 0.0 < q <= 100.0:
        raise ValueError(f"q must be in (0, 100], got {q!r}")
    data = sorted(_check_values(values))
    return data[_nearest_rank(len(data), q) - 1]


# --------------------------------------------------------------------------- bootstrap


def _percentile_interval(replicates: list[float], confidence: float) -> Interval:
    """Percentile-bootstrap interval from ``B`` replicates.

    With ``k = max(1, floor(B * (1 - confidence) / 2))`` this is ``[k-th smallest, k-th largest]``,
    symmetric in the number of replicates cut from each tail.
    """
    reps = sorted(replicates)
    b = len(reps)
    k = max(1, math.floor(b * (1 - _exact(confidence)) / 2))
    return Interval(reps[k - 1], reps[b - k])


def _ratio(num: float, den: float) -> float:
    if den > 0.0:
        return num / den
    return 1.0 if num == 0.0 else math.inf


def bootstrap_ratio_of_p95(
    treatment: Sequence[float],
    control: Sequence[float],
    confidence: float,
    n_boot: int,
    seed: int,
) -> tuple[float, Interval]:
    """Ratio of nearest-rank 95th percentiles (treatment / control) with a bootstrap interval.

    Each of ``n_boot`` replicates resamples both arms independently with replacement (same
    sizes) from one ``random.Random(seed)`` and recomputes the ratio; the interval is the
    percentile interval of the replicates (see ``_percentile_interval``).

    Values must be finite and ``>= 0`` (latencies, costs). If a control p95 is 0 the ratio is
    defined as 1.0 when the treatment p95 is also 0 and ``inf`` otherwise, so the upper bound can
    be ``inf`` for data that is mostly zeros.
    """
    confidence = _check_confidence(confidence)
    n_boot = _check_n_boot(n_boot)
    t = _check_values(treatment, "treatment")
    c = _check_values(control, "control")
    if min(t) < 0.0 or min(c) < 0.0:
        raise ValueError("treatment and control values must be >= 0")

    rank_t = _nearest_rank(len(t), 95.0) - 1
    rank_c = _nearest_rank(len(c), 95.0) - 1
    point = _ratio(sorted(t)[rank_t], sorted(c)[rank_c])

    rng = random.Random(seed)
    n_t, n_c = len(t), len(c)
    replicates: list[float] = []
    for _ in range(n_boot):
        t_star = sorted(rng.choices(t, k=n_t))[rank_t]
        c_star = sorted(rng.choices(c, k=n_c))[rank_c]
        replicates.append(_ratio(t_star, c_star))
    return point, _percentile_interval(replicates, confidence)


def bootstrap_mean(values: Sequence[float], confidence: float, n_boot: int, seed: int) -> tuple[float, Interval]:
    """Sample mean with a percentile-bootstrap interval (``n_boot`` resamples, ``Random(seed)``)."""
    data = _check_values(values)
    point = math.fsum(data) / len(data)
    (interval,) = bootstrap_intervals([mean_of(data)], confidence, n_boot, seed)
    return point, interval


# --------------------------------------------------------------------------- order statistics


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
    half_alpha = (1.0 - _check_confidence(confidence)) / 2.0
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
    data = sorted(_check_values(values))
    n = len(data)
    lower, upper = quantile_order_statistic_ranks(n, q, confidence)
    lo = data[lower - 1] if lower >= 1 else -math.inf
    hi = data[upper - 1] if upper <= n else math.inf
    return Interval(lo, hi)


# --------------------------------------------------------------------------- proportions


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion; ``n == 0`` gives ``[0, 1]``.

    The ends are clamped to ``[0, 1]`` and are exactly 0 (resp. 1) when ``successes`` is 0
    (resp. ``n``).
    """
    confidence = _check_confidence(confidence)
    k = _check_count(successes, "successes")
    n = _check_count(n, "n")
    if k > n:
        raise ValueError(f"successes ({k}) must not exceed n ({n})")
    if n == 0:
        return Interval(0.0, 1.0)
    z = _z_two_sided(confidence)
    z2 = z * z
    p_hat = k / n
    denom = 1.0 + z2 / n
    center = (p_hat + z2 / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p_hat * (1.0 - p_hat) / n + z2 / (4.0 * n * n))
    lo = 0.0 if k == 0 else max(0.0, center - half)
    hi = 1.0 if k == n else min(1.0, center + half)
    return Interval(lo, hi)


# --------------------------------------------------------------------------- paired comparisons
#
# The gate compares a run with a baseline run of the same cases: the samples are paired (case i
# of `now` is case i of `base`), so resampling draws cases, keeping each pair together.

PairedStatistic = Callable[[Sequence[float], Sequence[float]], float]
"""``statistic(now, base)`` over two equally long, paired samples."""


def mean_difference(now: Sequence[float], base: Sequence[float]) -> float:
    """``mean(now) - mean(base)``, i.e. the mean of the paired differences."""
    return math.fsum(now) / len(now) - math.fsum(base) / len(base)


def p95_ratio(now: Sequence[float], base: Sequence[float]) -> float:
    """Nearest-rank p95 of ``now`` over that of ``base`` (1.0 for 0/0, ``inf`` for x/0)."""
    rank = _nearest_rank(len(now), 95.0) - 1
    return _ratio(sorted(now)[rank], sorted(base)[rank])


def total_ratio(now: Sequence[float], base: Sequence[float]) -> float:
    """``sum(now) / sum(base)`` (1.0 for 0/0, ``inf`` for x/0)."""
    return _ratio(math.fsum(now), math.fsum(base))


# --------------------------------------------------------------------------- bootstraps drawn together
#
# A comparison bootstraps up to nine figures over the same cases with the same seed. A resample draws n
# indices from `Random(seed)`, so every figure of the same n draws the very same indices: drawn once per
# replicate and shared, each figure's interval is exactly what its own bootstrap gives, at a fraction of
# the cost (drawing is most of it: about 0.45 ms of 0.57 per replicate of a mean at 5,000 cases).


@dataclass(slots=True)
class Draw:
    """One replicate's drawn indices, and what statistics read from them."""

    picks: list[int]
    _take: Callable[[Sequence[float]], Sequence[float]] = field(init=False)
    _counts: dict[int, int] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # itemgetter gathers in C; with one index it returns the item, not a tuple.
        only = self.picks[0]
        self._take = operator.itemgetter(*self.picks) if len(self.picks) > 1 else (lambda c: (c[only],))

    def take(self, column: Sequence[float]) -> Sequence[float]:
        """The drawn values of a column, in the order drawn."""
        return self._take(column)

    def counts(self) -> dict[int, int]:
        """How many times each index was drawn (indices never drawn are absent)."""
        if self._counts is None:
            self._counts = Counter(self.picks)
        return self._counts


@dataclass(frozen=True)
class Resampled:
    """A statistic to bootstrap over ``n`` paired values: ``replicate`` computes it on one draw."""

    n: int
    replicate: Callable[[Draw], float]


def mean_of(values: Sequence[float]) -> Resampled:
    """The mean of ``values`` (checked: non-empty, finite)."""
    data = _check_values(values)
    n = len(data)
    return Resampled(n, lambda draw: math.fsum(draw.take(data)) / n)


def paired(now: Sequence[float], base: Sequence[float], statistic: PairedStatistic) -> Resampled:
    """``statistic(now, base)`` over paired samples (checked: equally long, non-empty, finite)."""
    a = _check_values(now, "now")
    b = _check_values(base, "base")
    if len(a) != len(b):
        raise ValueError(f"paired samples must be equally long, got {len(a)} and {len(b)}")
    if statistic is p95_ratio:
        return Resampled(len(a), _p95_ratio_replicate(a, b))
    return Resampled(len(a), lambda draw: statistic(draw.take(a), draw.take(b)))


def _p95_ratio_replicate(now: list[float], base: list[float]) -> Callable[[Draw], float]:
    """`p95_ratio` of a draw without sorting it: the same value, read from the draw's counts.

    A resample's values are the sample's, each as many times as its index was drawn. Walking the sample
    from its largest value down and adding up those counts reaches the `above`-th largest of the resample,
    which is what sorting it and reading rank `rank` gives; it is near the top, so the walk is short.
    """
    n = len(now)
    above = n - (_nearest_rank(n, 95.0) - 1)
    down_now = sorted(range(n), key=now.__getitem__, reverse=True)
    down_base = sorted(range(n), key=base.__getitem__, reverse=True)

    def largest(order: list[int], values: list[float], counts: dict[int, int]) -> float:
        seen = 0
        for i in order:
            seen += counts.get(i, 0)
            if seen >= above:
                return values[i]
        raise AssertionError("a draw holds n values")  # pragma: no cover - the counts add up to n

    def replicate(draw: Draw) -> float:
        counts = draw.counts()
        return _ratio(largest(down_now, now, counts), largest(down_base, base, counts))

    return replicate


def bootstrap_intervals(statistics: Sequence[Resampled], confidence: float, n_boot: int, seed: int) -> list[Interval]:
    """Percentile-bootstrap intervals of several statistics, each exactly as a bootstrap of its own would give.

    Statistics of the same ``n`` share each replicate's draw (``n`` indices with replacement from one
    ``random.Random(seed)`` per ``n``); the interval is the percentile interval of the replicates (see
    ``_percentile_interval``).
    """
    confidence = _check_confidence(confidence)
    n_boot = _check_n_boot(n_boot)
    replicates: list[list[float]] = [[] for _ in statistics]
    for n in sorted({s.n for s in statistics}):
        group = [(s.replicate, replicates[i]) for i, s in enumerate(statistics) if s.n == n]
        draw = random.Random(seed).choices
        indices = range(n)
        for _ in range(n_boot):
            one = Draw(draw(indices, k=n))
            for replicate, out in group:
                out.append(replicate(one))
    return [_percentile_interval(r, confidence) for r in replicates]


def bootstrap_paired(
    now: Sequence[float],
    base: Sequence[float],
    statistic: PairedStatistic,
    confidence: float,
    n_boot: int,
    seed: int,
) -> tuple[float, Interval]:
    """``statistic(now, base)`` with a paired percentile-bootstrap interval.

    Each of ``n_boot`` replicates draws ``n`` pair indices with replacement from one
    ``random.Random(seed)`` and recomputes the statistic on the drawn pairs; the interval is the
    percentile interval of the replicates (see ``_percentile_interval``).
    """
    resampled = paired(now, base, statistic)
    point = statistic(_check_values(now, "now"), _check_values(base, "base"))
    (interval,) = bootstrap_intervals([resampled], confidence, n_boot, seed)
    return point, interval


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs of a paired 2x2 table.

    ``b`` pairs changed one way (e.g. passed before, fail now) and ``c`` the other. Under the
    null hypothesis each discordant pair is a fair coin, so the p-value is
    ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``, computed with integers.
    No discordant pair gives 1.0. Equals statsmodels' ``mcnemar(table, exact=True)``.
    """
    b = _check_count(b, "b")
    c = _check_count(c, "c")
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


# Up to this many non-zero differences the Wilcoxon p-value is exact (an O(n^3) count); beyond it
# the normal approximation is within ~1e-3 of the exact value.
WILCOXON_EXACT_MAX_N = 50


def _mid_ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """1-based ranks with ties given their mean rank, and the sizes of the tie groups."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    groups: list[int] = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        groups.append(end - start + 1)
        start = end + 1
    return ranks, groups


def wilcoxon_signed_rank(differences: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value for paired differences (``now - base``).

    Zero differences are dropped (Wilcoxon's convention; none left gives 1.0). The absolute
    differences are ranked, ties sharing their mean rank, and ``R+`` is the rank sum of the
    positive ones. Up to ``WILCOXON_EXACT_MAX_N`` differences the p-value is exact, from the
    distribution of ``R+`` over all ``2**n`` sign assignments of these very ranks (so also exact
    with ties); beyond that it is the normal approximation with the tie-corrected variance and no
    continuity correction. The two-sided p-value is ``min(1, 2 * min(P(R+ <= r), P(R+ >= r)))``.
    Matches scipy's ``wilcoxon``: method ``exact`` without ties, its permutation test with ties,
    ``asymptotic`` for large samples.
    """
    nonzero = [d for d in _check_values(differences, "differences") if d != 0.0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    ranks, groups = _mid_ranks([abs(d) for d in nonzero])
    r_plus = math.fsum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    if n <= WILCOXON_EXACT_MAX_N:
        # Mean ranks are multiples of 1/2: doubled they are integers, and the count of sign
        # assignments per doubled rank sum is a subset-sum table.
        doubled = [round(2 * r) for r in ranks]
        counts = [1] + [0] * sum(doubled)
        top = 0
        for w in doubled:
            top += w
            for total in range(top, w - 1, -1):
                counts[total] += counts[total - w]
        t = round(2 * r_plus)
        lower = Fraction(sum(counts[: t + 1]), 2**n)
        upper = Fraction(sum(counts[t:]), 2**n)
        return float(min(Fraction(1), 2 * min(lower, upper)))
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(g**3 - g for g in groups) / 48
    if variance <= 0.0:
        return 1.0
    z = (r_plus - mean) / math.sqrt(variance)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))  # erfc keeps tiny p-values accurate
