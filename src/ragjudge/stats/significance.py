"""Significance tests for paired samples: McNemar's for pass/fail, Wilcoxon's signed-rank for scores.

The gate compares a run with a baseline run of the same cases, so each case is a pair; both p-values are
exact where that is cheap, from integer counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from ragjudge.stats.arguments import check_count, check_values
from ragjudge.stats.ranks import mid_ranks

# Up to this many non-zero differences the Wilcoxon p-value is exact (an O(n^3) count); beyond it
# the normal approximation is within ~1e-3 of the exact value.
WILCOXON_EXACT_MAX_N = 50


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs of a paired 2x2 table.

    ``b`` pairs changed one way (e.g. passed before, fail now) and ``c`` the other. Under the
    null hypothesis each discordant pair is a fair coin, so the p-value is
    ``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``, computed with integers.
    No discordant pair gives 1.0. Equals statsmodels' ``mcnemar(table, exact=True)``.
    """
    b = check_count(b, "b")
    c = check_count(c, "c")
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


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
    nonzero = [d for d in check_values(differences, "differences") if d != 0.0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    ranks, groups = mid_ranks([abs(d) for d in nonzero])
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
