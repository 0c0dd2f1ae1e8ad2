"""What a metric is, as data: where a rule may use it, its unit and direction, how it is made and shown.

Every consumer (rules, scoring, the suite, the comparison with main, the comment, the HTML report, JUnit,
the canary, the docs) reads these fields rather than deciding them again by the metric's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Scope = Literal["case", "suite", "regression", "canary"]
"""Where a rule may name the metric: `gate.case`, `gate.suite`, `gate.regression`, `canary.rules`."""
SCOPES: tuple[Scope, ...] = ("case", "suite", "regression", "canary")

Unit = Literal["fraction", "ms", "usd", "count", "score", "delta", "multiple"]
"""`fraction` 0 to 1; `score` the judge's 1 to 5; `delta` a difference from the baseline's figure;
`multiple` a figure over the baseline's (or the stable deployment's)."""

Direction = Literal["higher", "lower", ""]
"""Which way is better; "" when neither is (a delta's better side is that of the figure it compares)."""


@dataclass(frozen=True)
class Percentile:
    """A suite metric made as the nearest-rank percentile of a case metric over every asked turn's first run
    (repeats go only to failing cases and would bias it)."""

    of: str
    q: int


@dataclass(frozen=True)
class Mean:
    """A suite metric made as the mean of a case metric over the judged replies that have a value."""

    of: str


@dataclass(frozen=True)
class Total:
    """A suite metric made as the sum of a case metric over the judged replies that have a value."""

    of: str


@dataclass(frozen=True)
class Computed:
    """A suite metric the suite works out by its own function (`gate.suite`): counts of cases, rates."""


Aggregate = Percentile | Mean | Total | Computed


@dataclass(frozen=True)
class MetricSpec:
    """One metric: everything any part of ragjudge needs to know about it besides how to measure one case."""

    name: str
    """As written in the config and the report; a family has a placeholder: `judge.<dimension>`."""
    scopes: tuple[Scope, ...]
    """Where a rule may name it."""
    unit: Unit
    direction: Direction
    description: str
    """One line, for the docs' metric table."""
    needs: tuple[str, ...] = ()
    """What it needs to have a value: `passages`, `golden ids`, `judge`, `reference`, `stream`, `cost`,
    `baseline`, `feedback`, `criteria`."""
    missing: str = ""
    """Why a suite or canary figure has no value, when none of the cases gave it one."""
    over_turns: Literal["mean", "sum"] = "mean"
    """How a conversation's value is made of its turns'."""
    over_cases: Aggregate | None = None
    """A suite metric: how it is made of the cases."""
    compares: str | None = None
    """A regression or canary ratio: the suite metric it sets against the baseline's."""
    pattern: str | None = None
    """A family's names as a regular expression with one group, the member (`judge\\.(\\w+)`)."""

    def is_family(self) -> bool:
        return self.pattern is not None


def plain(value: float, significant: int = 6) -> str:
    """A figure as `:g` writes it, but never with an exponent: `0.8`, `0.6667`, `12345` (not `1.234e+04`),
    `0.00001` (not `1e-05`). Reasons are read by people, in the comment and the HTML report."""
    shown = f"{value:.{significant}g}"
    if "e" not in shown or not math.isfinite(value):
        return shown
    if abs(value) >= 1:
        return f"{value:.0f}"
    return f"{float(shown):.{significant - 1 - math.floor(math.log10(abs(float(shown))))}f}".rstrip("0").rstrip(".")


def reason_number(spec: MetricSpec, value: float) -> str:
    """A value as a rule's reason writes it: `0.925`, `3012`, `+0.040`, `4`, `0.0123`."""
    if spec.unit == "count":
        return f"{value:.0f}"
    if spec.unit == "delta":
        return f"{value:+.3f}"
    if spec.unit == "ms":
        return f"{value:.0f}"
    if spec.unit == "score" and float(value).is_integer():
        return f"{value:.0f}"
    if spec.unit == "usd":
        return f"{value:.4f}"
    if spec.unit == "fraction":
        # Three places, as the rules table, the deltas and the HTML report write it: one pass_rate per run, never
        # 0.93 in one output and 0.925 in the next.
        return f"{value:.3f}"
    return f"{value:.2f}"


def table_number(spec: MetricSpec | None, value: float | None) -> str:
    """A value in the comment's rules table and footer: `0.905`, `812` (the column says ms), `$0.0123`; a
    metric the registry does not know (a hand-edited report's) as a plain figure."""
    if value is None:
        return "n/a"
    if spec is None:
        return f"{value:.3f}" if isinstance(value, float) else str(value)
    if spec.unit == "ms" or spec.unit == "count":
        return f"{value:.0f}"
    if spec.unit == "usd":
        return f"${value:.4f}"
    if spec.unit == "score":
        return f"{value:.2f}"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def unit_number(spec: MetricSpec | None, value: float | None) -> str:
    """A value with its unit, as the comparison with main writes it: `0.905`, `812 ms`, `$0.0123`, `3.50`."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "unbounded"
    if spec is None:
        return f"{value:.3f}"
    if spec.unit == "ms":
        return f"{value:.0f} ms"
    if spec.unit == "usd":
        return f"${value:.4f}"
    if spec.unit in ("score", "multiple"):
        return f"{value:.2f}"
    return f"{value:.3f}"


def multiple(value: float | None) -> str:
    """A ratio's figure: `1.25`."""
    if value is None:
        return "n/a"
    return "unbounded" if math.isinf(value) else f"{value:.2f}"
