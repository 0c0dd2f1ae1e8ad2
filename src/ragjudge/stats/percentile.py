"""The nearest-rank percentile, its rank computed exactly: the one percentile of the gate, the canary and the bootstrap.

The ``q``-th percentile of ``n`` values is the ``ceil(q/100 * n)``-th smallest. The product is taken in
exact rational arithmetic on the decimal value of ``q``, because in binary floating point it can land just
above an integer and pick the next rank: ``0.28 * 25 == 7.000000000000001``, so the 28th percentile of 25
values would be the 8th smallest instead of the 7th. (For p50 and p95, the only ones the reports show, the
float product never errs: ``tests/stats/test_percentile.py`` checks it.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from ragjudge.stats.arguments import check_values


def exact_decimal(x: float) -> Fraction:
    """The decimal value ``x`` was written as (``0.95`` -> ``19/20``, not the binary double).

    Used where a rank is ``ceil``/``floor`` of a product that should be an exact integer, so that
    e.g. the 28th percentile of 25 values is rank ``ceil(28 * 25 / 100) = 7`` and not 8 because
    ``0.28 * 25 == 7.000000000000001`` in binary floating point.
    """
    return Fraction(repr(float(x)))


def nearest_rank(n: int, q: float) -> int:
    """1-based rank ``ceil(q / 100 * n)`` computed exactly, clamped to ``[1, n]``."""
    return min(n, max(1, math.ceil(exact_decimal(q) * n / 100)))


def percentile_nearest_rank(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile: the ``ceil(q/100 * n)``-th smallest value.

    ``q`` must be in ``(0, 100]`` and ``values`` non-empty and finite. The rank is computed exactly from
    the decimal value of ``q`` (so ``q = 28, n = 25`` gives rank 7, where naive floating point gives 8).
    Equals ``numpy.percentile(values, q, method="inverted_cdf")`` except at such float-rounding ties.
    """
    q = float(q)
    if not 0.0 < q <= 100.0:
        raise ValueError(f"q must be in (0, 100], got {q!r}")
    data = sorted(check_values(values))
    return data[nearest_rank(len(data), q) - 1]


def percentile_or_none(values: Sequence[float], q: float) -> float | None:
    """The gate's form of :func:`percentile_nearest_rank`: ``None`` when there are no values.

    The same rank, read from the values as they are (not converted to float, not checked: the gate's
    latencies are measured or already validated), and ``q`` may be 0, which reads the smallest value
    like every ``q`` below the first rank. ``q`` must be in ``[0, 100]``.
    """
    q = float(q)
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    if not values:
        return None
    ordered = sorted(values)
    return ordered[nearest_rank(len(ordered), q) - 1]
