"""Statistics for the gate, the canary and calibration: standard library only, one module per idea.

* ``intervals``: the :class:`Interval` type; Wilson's interval for a proportion, Katz's for a risk ratio.
* ``bootstrap``: seeded percentile-bootstrap intervals (a mean, a ratio of p95s, paired figures).
* ``order_statistics``: distribution-free intervals for a quantile.
* ``significance``: McNemar's and Wilcoxon's signed-rank tests for paired samples.
* ``agreement``: how well a judge agrees with human labels (kappa, weighted kappa, MAE, Spearman, F1).
* ``percentile``, ``ranks``, ``normal``, ``arguments``: the nearest-rank percentile, mid-ranks, the normal
  quantile and the argument checks the others share.

Everything is pure Python (``math``, ``random``, ``statistics``, ``fractions``), so neither the canary nor
the gate has a numeric runtime dependency; the reference implementations the tests compare against (scipy,
statsmodels, scikit-learn, numpy) are test-only dependencies. Nothing here imports the rest of ragjudge.

Conventions shared by all functions:

* ``confidence`` is a two-sided confidence level strictly inside ``(0, 1)``, e.g. ``0.95``.
* Sample inputs must be non-empty and contain only finite floats; otherwise ``ValueError``.
* Confidence intervals are closed intervals, returned as :class:`Interval`.
* Bootstrap functions are deterministic for a given ``seed``: they draw from a private
  ``random.Random(seed)`` and never touch the global random state.

The names below are re-exported so that a caller can write ``stats.wilson_interval(...)``; the agreement
metrics are imported from ``stats.agreement`` by the one command that uses them.
"""

from __future__ import annotations

from ragjudge.stats.bootstrap import (
    Draw,
    Resampled,
    bootstrap_intervals,
    bootstrap_mean,
    bootstrap_paired,
    bootstrap_ratio_of_p95,
    mean_difference,
    mean_of,
    p95_ratio,
    paired,
    total_ratio,
)
from ragjudge.stats.intervals import Interval, risk_ratio_katz, wilson_interval
from ragjudge.stats.normal import normal_quantile
from ragjudge.stats.order_statistics import quantile_order_statistic_bounds, quantile_order_statistic_ranks
from ragjudge.stats.percentile import percentile_nearest_rank, percentile_or_none
from ragjudge.stats.significance import WILCOXON_EXACT_MAX_N, mcnemar_exact, wilcoxon_signed_rank

__all__ = [
    "WILCOXON_EXACT_MAX_N",
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
    "percentile_or_none",
    "quantile_order_statistic_bounds",
    "quantile_order_statistic_ranks",
    "risk_ratio_katz",
    "total_ratio",
    "wilcoxon_signed_rank",
    "wilson_interval",
]
