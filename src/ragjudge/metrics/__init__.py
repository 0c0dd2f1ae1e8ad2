"""Metrics: every metric's name, spec and formatting, in one place (`names`, `spec`, `registry`)."""

from __future__ import annotations

from ragjudge.metrics.registry import SPECS, lookup, of_scope, spec
from ragjudge.metrics.spec import MetricSpec, Scope

__all__ = ["SPECS", "MetricSpec", "Scope", "lookup", "of_scope", "spec"]
