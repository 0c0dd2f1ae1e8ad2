"""Threshold rules: `metric: "OP number"`, parsed once, checked per case and per suite."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from ragjudge.errors import ConfigError
from ragjudge.judge.interface import RUBRIC_DIMENSIONS

Scope = Literal["case", "suite", "regression"]

CASE_METRICS = frozenset(
    {
        "context_recall",
        "context_precision",
        "latency_ms",
        "ttft_ms",
        "cost_usd",
        "faithfulness",
        "answer_correctness",
        "reference_contradictions",
    }
    | {f"judge.{d}" for d in RUBRIC_DIMENSIONS}
)
SUITE_METRICS = frozenset(
    {
        "pass_rate",
        "rejection_accuracy",
        "p95_latency_ms",
        "p50_latency_ms",
        "p95_ttft_ms",
        "p50_ttft_ms",
        "faithfulness",
        "judge_error_rate",
        "endpoint_error_rate",
        "cost_usd",
        "answer_correctness",
        "reference_contradictions",
    }
)
REGRESSION_METRICS = frozenset(
    {
        "newly_failing",
        "pass_rate_delta",
        "faithfulness_delta",
        "answer_correctness_delta",
        "p95_latency_ratio",
        "p95_ttft_ratio",
        "cost_ratio",
    }
    | {f"judge.{d}_delta" for d in RUBRIC_DIMENSIONS}
)
"""Rules against the baseline (`gate.regression`); see `ragjudge.compare`."""
_ALLOWED: dict[Scope, frozenset[str]] = {"case": CASE_METRICS, "suite": SUITE_METRICS, "regression": REGRESSION_METRICS}
_MEANING: dict[Scope, str] = {
    "case": "each case must meet it, and the suite's pass_rate counts the cases that did",
    "suite": "it is checked once, on the figure of the whole suite",
    "regression": "it compares the run with the baseline's report",
}
# The team's criteria are metrics too: `criteria.NAME` per case, its mean per suite, its delta against main.
_CRITERIA: dict[Scope, re.Pattern[str]] = {
    "case": re.compile(r"criteria\.([A-Za-z_][A-Za-z0-9_]{0,63})"),
    "suite": re.compile(r"criteria\.([A-Za-z_][A-Za-z0-9_]{0,63})_mean"),
    "regression": re.compile(r"criteria\.([A-Za-z_][A-Za-z0-9_]{0,63})_delta"),
}


def criterion_of(metric: str, scope: Scope) -> str | None:
    """The criterion a rule's metric names (`criteria.asks_for_order_mean` -> `asks_for_order`), or None."""
    match = _CRITERIA[scope].fullmatch(metric)
    return match.group(1) if match else None


_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}
_NEGATION = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!="}
_RULE = re.compile(r"^\s*(>=|<=|==|>|<)\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class Rule:
    """One threshold."""

    scope: Scope
    metric: str
    op: str
    threshold: float

    def holds(self, value: float) -> bool:
        return _OPS[self.op](value, self.threshold)

    def failure(self, value: float) -> str:
        """`faithfulness 0.50 < 0.80`: the value, the broken comparison, the threshold, alike formatted."""
        shown = format_value(self.metric, value), format_value(self.metric, self.threshold)
        if shown[0] == shown[1] and value != self.threshold:
            # Rounded alike, the reason would read "3000 > 3000": show the digits that broke the rule.
            shown = f"{value:.10g}", format_value(self.metric, self.threshold)
        return f"{self.metric} {shown[0]} {_NEGATION[self.op]} {shown[1]}"


@dataclass(frozen=True)
class Missing:
    """A metric with no number: not applicable (rule skipped) or unscored (case errors)."""

    reason: str
    unscored: bool = False


def format_value(metric: str, value: float) -> str:
    if metric in ("newly_failing", "reference_contradictions"):
        return f"{value:.0f}"
    if metric.endswith("_delta"):
        return f"{value:+.3f}"
    if metric.endswith("_ms"):
        return f"{value:.0f}"
    if metric.startswith(("judge.", "criteria.")) and float(value).is_integer():
        return f"{value:.0f}"
    if metric == "cost_usd":
        return f"{value:.4f}"
    return f"{value:.2f}"


def parse_rules(rules: Mapping[str, str], scope: Scope, key: str) -> list[Rule]:
    """Parse a mapping of rules; errors name `key.metric` and what to write instead."""
    allowed = _ALLOWED[scope]
    parsed = []
    for metric, text in rules.items():
        if metric not in allowed and criterion_of(metric, scope) is None:
            home = next((s for s, names in _ALLOWED.items() if metric in names or criterion_of(metric, s)), None)
            if home is not None:
                # The same key one level over: `context_recall` under gate.suite is a rule each case must meet.
                raise ConfigError(
                    f"{key}.{metric}: {metric} is a {home} metric, not a {scope} one",
                    tip=f"move the rule under gate.{home}: {_MEANING[home]}",
                )
            raise ConfigError(
                f"{key}.{metric}: unknown {scope} metric {metric!r}",
                tip=f"{scope} metrics are: {', '.join(sorted(allowed))}",
            )
        match = _RULE.match(str(text))
        if not match:
            raise ConfigError(
                f"{key}.{metric}: cannot parse rule {text!r}",
                tip='write "OP number" with OP one of >= > <= < ==, e.g. ">= 0.9"',
            )
        parsed.append(Rule(scope=scope, metric=metric, op=match.group(1), threshold=float(match.group(2))))
    return parsed
