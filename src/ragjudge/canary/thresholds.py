"""The canary's rules (`canary.rules`): six metrics, each `"OP number"`, parsed once."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ragjudge.errors import ConfigError

DISLIKE_RATE_RATIO = "dislike_rate_ratio"
P95_LATENCY_RATIO = "p95_latency_ratio"
P95_LATENCY_MS = "p95_latency_ms"
P95_TTFT_RATIO = "p95_ttft_ratio"
P95_TTFT_MS = "p95_ttft_ms"
FAITHFULNESS = "faithfulness"

METRICS = (DISLIKE_RATE_RATIO, P95_LATENCY_RATIO, P95_LATENCY_MS, P95_TTFT_RATIO, P95_TTFT_MS, FAITHFULNESS)
"""Every canary metric, in the order reports list them."""

RATIO_METRICS = frozenset({DISLIKE_RATE_RATIO, P95_LATENCY_RATIO, P95_TTFT_RATIO})
TIMING_METRICS = frozenset({P95_LATENCY_RATIO, P95_LATENCY_MS, P95_TTFT_RATIO, P95_TTFT_MS})
"""The p95 rules: on the whole reply's latency, or on the time to its first token (streamed replies only)."""
TTFT_METRICS = frozenset({P95_TTFT_RATIO, P95_TTFT_MS})
LIMIT_MS_METRICS = frozenset({P95_LATENCY_MS, P95_TTFT_MS})
"""Rules whose threshold is milliseconds."""
_UPPER_BOUNDED = frozenset({DISLIKE_RATE_RATIO}) | TIMING_METRICS

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_RULE = re.compile(r"^\s*(>=|<=|>|<)\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


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
        return _OPS[self.op](value, self.threshold)

    def holds_against(self, value: float, bound: float) -> bool:
        """Whether `value OP bound`, for a bound other than the threshold (e.g. 1.5 x control)."""
        return _OPS[self.op](value, bound)

    def text(self) -> str:
        """`<= 1.5`, as the rule was meant."""
        return f"{self.op} {self.threshold:g}"


def _parse_one(metric: str, text: str) -> CanaryRule:
    key = f"canary.rules.{metric}"
    if metric not in METRICS:
        raise ConfigError(f"{key}: unknown canary metric {metric!r}", tip=f"canary metrics are: {', '.join(METRICS)}")
    match = _RULE.match(str(text))
    if not match:
        raise ConfigError(
            f"{key}: cannot parse rule {text!r}", tip='write "OP number" with OP one of >= > <= <, e.g. "<= 1.5"'
        )
    op, threshold = match.group(1), float(match.group(2))
    if metric in _UPPER_BOUNDED and op not in ("<=", "<"):
        raise ConfigError(f"{key}: must be an upper limit (<= or <), got {op!r}", tip=f'e.g. {metric}: "<= 1.5"')
    if metric == FAITHFULNESS and op not in (">=", ">"):
        raise ConfigError(f"{key}: must be a lower limit (>= or >), got {op!r}", tip='e.g. faithfulness: ">= 0.95"')
    if metric in _UPPER_BOUNDED and threshold <= 0:
        raise ConfigError(f"{key}: the threshold must be above 0, got {threshold:g}")
    if metric == FAITHFULNESS and not 0 <= threshold <= 1:
        raise ConfigError(f"{key}: faithfulness is between 0 and 1, got {threshold:g}")
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
