"""The canary's rules (`canary.rules`): the registry's canary metrics, each `"OP number"` in the rules' grammar.

Which way a rule must point and what its threshold may be follow from the metric's spec: a metric where lower
is better takes an upper limit above 0, one where higher is better a lower limit, a fraction's between 0 and 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ragjudge.errors import ConfigError
from ragjudge.metrics import names, registry
from ragjudge.rules import LOWER_LIMITS, UPPER_LIMITS, holds, parse_threshold

DISLIKE_RATE_RATIO = names.DISLIKE_RATE_RATIO
P95_LATENCY_RATIO = names.P95_LATENCY_RATIO
P95_LATENCY_MS = names.P95_LATENCY_MS
P95_TTFT_RATIO = names.P95_TTFT_RATIO
P95_TTFT_MS = names.P95_TTFT_MS
FAITHFULNESS = names.FAITHFULNESS

_ORDER = (DISLIKE_RATE_RATIO, P95_LATENCY_RATIO, P95_LATENCY_MS, P95_TTFT_RATIO, P95_TTFT_MS, FAITHFULNESS)
"""Feedback first, then timing, then the judge: as the canary's report reads."""
METRICS = tuple(
    sorted(
        (s.name for s in registry.of_scope("canary")),
        key=lambda m: _ORDER.index(m) if m in _ORDER else len(_ORDER),
    )
)
"""Every canary metric, in the order reports list them."""

RATIO_METRICS = frozenset(s.name for s in registry.of_scope("canary") if s.unit == "multiple")
TTFT_METRICS = frozenset(m for m in METRICS if names.TTFT_MS in registry.reads(m))
TIMING_METRICS = frozenset(m for m in METRICS if names.LATENCY_MS in registry.reads(m)) | TTFT_METRICS
"""The p95 rules: on the whole reply's latency, or on the time to its first token (streamed replies only)."""
LIMIT_MS_METRICS = frozenset(s.name for s in registry.of_scope("canary") if s.unit == "ms")
"""Rules whose threshold is milliseconds."""


@dataclass(frozen=True)
class CanaryRule:
    """One canary threshold."""

    metric: str
    """One of `METRICS`."""
    op: str
    """`<=` or `<` for the ratios and the latency limit; `>=` or `>` for faithfulness."""
    threshold: float

    @property
    def is_ratio(self) -> bool:
        """Treatment relative to control (the threshold is a multiple of control)."""
        return self.metric in RATIO_METRICS

    def holds(self, value: float) -> bool:
        """Whether `value OP threshold`."""
        return holds(self.op, value, self.threshold)

    def holds_against(self, value: float, bound: float) -> bool:
        """Whether `value OP bound`, for a bound other than the threshold (e.g. 1.5 x control)."""
        return holds(self.op, value, bound)

    def text(self) -> str:
        """`<= 1.5`, as the rule was meant."""
        return f"{self.op} {self.threshold:g}"


def _parse_one(metric: str, text: str) -> CanaryRule:
    key = f"canary.rules.{metric}"
    spec = registry.lookup(metric, "canary")
    if spec is None:
        raise ConfigError(f"{key}: unknown canary metric {metric!r}", tip=f"canary metrics are: {', '.join(METRICS)}")
    op, threshold = parse_threshold(text, key, UPPER_LIMITS + LOWER_LIMITS, example="<= 1.5")
    if spec.direction == "lower" and op not in UPPER_LIMITS:
        raise ConfigError(f"{key}: must be an upper limit (<= or <), got {op!r}", tip=f'e.g. {metric}: "<= 1.5"')
    if spec.direction == "higher" and op not in LOWER_LIMITS:
        raise ConfigError(f"{key}: must be a lower limit (>= or >), got {op!r}", tip=f'e.g. {metric}: ">= 0.95"')
    if spec.direction == "lower" and threshold <= 0:
        raise ConfigError(f"{key}: the threshold must be above 0, got {threshold:g}")
    if spec.unit == "fraction" and not 0 <= threshold <= 1:
        raise ConfigError(f"{key}: {metric} is between 0 and 1, got {threshold:g}")
    return CanaryRule(metric, op, threshold)


def parse_canary_rules(rules: Mapping[str, str]) -> tuple[CanaryRule, ...]:
    """Parse `canary.rules` into `METRICS` order; errors name the key and what to write."""
    if not rules:
        raise ConfigError(
            "canary.rules: no rules, so nothing would be checked",
            tip="give at least one of: " + ", ".join(METRICS),
        )
    parsed = {metric: _parse_one(metric, text) for metric, text in rules.items()}
    return tuple(parsed[m] for m in METRICS if m in parsed)
