"""The comparison with a baseline report from main: per-case change, deltas, regression rules."""

from ragjudge.compare.baseline import Baseline, baseline_for, load_baseline
from ragjudge.compare.comparison import compare_with_baseline
from ragjudge.compare.regression import regression_rules

__all__ = ["Baseline", "baseline_for", "compare_with_baseline", "load_baseline", "regression_rules"]
