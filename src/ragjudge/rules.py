"""Threshold rules: `metric: "OP number"`, parsed once, checked per case and per suite.

The grammar (`parse_threshold`) is the canary's too (`canary.thresholds`); which metrics a scope allows and
how a value is written come from the metric registry (`ragjudge.metrics`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from ragjudge.errors import ConfigError
from ragjudge.metrics import names, registry
from ragjudge.metrics.spec import plain, reason_number

Scope = Literal["case", "suite", "regression"]

_MEANING: dict[Scope, str] = {
    "case": "each case must meet it, and the suite's pass_rate counts the cases that did",
    "suite": "it is checked once, on the figure of the whole suite",
    "regression": "it compares the run with the baseline's report",
}
_SCOPES: tuple[Scope, ...] = ("case", "suite", "regression")


def criterion_of(metric: str, scope: Scope) -> str | None:
    """The criterion a rule's metric names (`criteria.asks_for_order_mean` -> `asks_for_order`), or None."""
    return registry.member(metric, scope) if metric.startswith(names.CRITERIA_PREFIX) else None


def allowed(scope: Scope) -> list[str]:
    """The metric names a rule of `scope` may use, families with their placeholder, for a tip."""
    return [s.name for s in registry.of_scope(scope)]


_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}
_NEGATION = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!="}
_THRESHOLD = re.compile(r"^\s*(>=|<=|==|>|<)\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
UPPER_LIMITS = ("<=", "<")
LOWER_LIMITS = (">=", ">")


def holds(op: str, value: float, threshold: float) -> bool:
    """Whether `value OP threshold`."""
    return _OPS[op](value, threshold)


def parse_threshold(
    text: object, key: str, ops: tuple[str, ...] = tuple(_OPS), example: str = ">= 0.9"
) -> tuple[str, float]:
    """`"OP number"` as (op, number), the one grammar of every rule; an error names `key` and what to write."""
    match = _THRESHOLD.match(str(text))
    if not match or match.group(1) not in ops:
        raise ConfigError(
            f"{key}: cannot parse rule {text!r}",
            tip=f'write "OP number" with OP one of {" ".join(ops)}, e.g. "{example}"',
        )
    return match.group(1), float(match.group(2))


@dataclass(frozen=True)
class Rule:
    """One threshold."""

    scope: Scope
    metric: str
    op: str
    threshold: float

    def holds(self, value: float) -> bool:
        return holds(self.op, value, self.threshold)

    def failure(self, value: float) -> str:
        """`faithfulness 0.500 < 0.8`: the value, the broken comparison, the threshold, alike formatted."""
        threshold = format_value(self.metric, self.threshold)
        if registry.spec(self.metric).unit == "fraction":
            threshold = plain(self.threshold)  # as the config and the rules table write it: `0.98`, not `0.980`
        shown = format_value(self.metric, value), threshold
        if float(shown[0]) == float(shown[1]) and value != self.threshold:
            # Rounded alike, the reason would read "3000 > 3000": show the digits that broke the rule.
            shown = plain(value, 10), threshold
        return f"{self.metric} {shown[0]} {_NEGATION[self.op]} {shown[1]}"


@dataclass(frozen=True)
class Missing:
    """A metric with no number: not applicable (rule skipped) or unscored (case errors)."""

    reason: str
    unscored: bool = False


def format_value(metric: str, value: float) -> str:
    """A value as a rule's reason writes it, by the metric's unit."""
    return reason_number(registry.spec(metric), value)


def parse_rules(rules: Mapping[str, str], scope: Scope, key: str) -> list[Rule]:
    """Parse a mapping of rules; errors name `key.metric` and what to write instead."""
    parsed = []
    for metric, text in rules.items():
        if registry.lookup(metric, scope) is None:
            home = next((s for s in _SCOPES if registry.lookup(metric, s) is not None), None)
            if home is not None:
                # The same key one level over: `context_recall` under gate.suite is a rule each case must meet.
                raise ConfigError(
                    f"{key}.{metric}: {metric} is a {home} metric, not a {scope} one",
                    tip=f"move the rule under gate.{home}: {_MEANING[home]}",
                )
            raise ConfigError(
                f"{key}.{metric}: unknown {scope} metric {metric!r}",
                tip=f"{scope} metrics are: {', '.join(sorted(allowed(scope)))}",
            )
        op, threshold = parse_threshold(text, f"{key}.{metric}")
        parsed.append(Rule(scope=scope, metric=metric, op=op, threshold=threshold))
    return parsed
