"""The HTML report's charts, drawn as numbers for the template: the latency histogram with its percentile and
threshold marks, pass rates by category and difficulty, score distributions, and the deltas against the baseline
with their intervals. Every number on them is written plainly (`num`: never an exponent).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ragjudge.metrics.names import ANSWER_CORRECTNESS, FAITHFULNESS, P95_LATENCY_MS
from ragjudge.report.comparison_block import ComparisonBlock
from ragjudge.report.figures import fmt, p_text
from ragjudge.report.model import Report

CHART_WIDTH = 560
"""Width of the plotting area of every chart, in SVG units."""
HISTOGRAM_BINS = 12
HISTOGRAM_RIGHT = 700.0
"""The latency chart's right edge (its viewBox runs from -20 to 700): the plot ends at 560, its labels after."""
UNSET = "(none)"
FONT_PX = 11.0
"""The charts' text size, in SVG units (`svg text` in the template)."""
LABEL_WIDTH = 132.0
"""Room for a category or difficulty label beside its bar (the bars start at 140)."""
BARS_END = 140.0 + CHART_WIDTH
"""Where a rate chart's bars end; its counts (`2/3`) are written after."""
_NARROW = frozenset(" .,:;'|!()[]{}/-ilIjftr")
_WIDE = frozenset("MWmw@%…—")


def text_width(text: str) -> float:
    """How wide `text` is drawn in the charts' 11 px sans-serif, estimated generously: a wide (CJK) character or
    a `W` a full em, other capitals 0.8, narrow marks 0.4, the rest 0.65. Never less than the font draws it, so
    text cut to a width fits in it, whatever the script."""
    ems = 0.0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        if unicodedata.east_asian_width(ch) in ("W", "F") or ch in _WIDE:
            ems += 1.0
        elif ch in _NARROW:
            ems += 0.4
        else:
            ems += 0.8 if ch.isupper() else 0.65
    return ems * FONT_PX


def fit(text: str, width: float) -> str:
    """`text` as it fits in `width`: whole, or cut with an ellipsis."""
    if text_width(text) <= width:
        return text
    room, cut = width - text_width("…"), 0
    for ch in text:
        room -= text_width(ch)
        if room < 0:
            break
        cut += 1
    return text[:cut].rstrip() + "…"


@dataclass(frozen=True)
class Bar:
    """A rectangle of a chart, with its label and the figure it shows."""

    x: float
    y: float
    width: float
    height: float
    label: str
    value: str
    tone: str = ""


@dataclass(frozen=True)
class Mark:
    """A vertical line across a chart at `x` (p50, p95, the threshold)."""

    x: float
    label: str
    kind: str
    anchor: str = "start"
    """Where the label sits: `end` (left of the line) at the chart's right edge."""


@dataclass(frozen=True)
class Histogram:
    bars: list[Bar]
    marks: list[Mark]
    ticks: list[tuple[float, str]]
    count: int
    off_scale: str = ""
    """A threshold beyond the axis, in words: no line is drawn for it, where a line would claim a value it is
    not."""
    beyond: Mark | None = None
    """That threshold's label inside the chart, at its right edge and pointing past it (`threshold 60000 ms →`);
    `off_scale` is its title."""


@dataclass(frozen=True)
class RateRow:
    """One category's (or difficulty's) pass rate as a horizontal bar."""

    label: str
    passed: int
    total: int
    width: float

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def shown(self) -> str:
        """The label as it fits beside its bar: cut with an ellipsis (its title keeps it whole)."""
        return fit(self.label, LABEL_WIDTH)

    @property
    def count(self) -> str:
        return f"{self.passed}/{self.total}"


@dataclass(frozen=True)
class RateChart:
    """Pass rates by category (or difficulty): a row each, the label, the bar and the count after it."""

    rows: list[RateRow]

    @property
    def width(self) -> int:
        """The viewBox's width: to the end of the widest count, so no count is cut off."""
        return math.ceil(BARS_END + 6 + max((text_width(r.count) for r in self.rows), default=0.0) + 2)

    @property
    def height(self) -> int:
        return len(self.rows) * 22 + 4


@dataclass(frozen=True)
class Distribution:
    """How one judge dimension's scores spread over their bins."""

    name: str
    bars: list[Bar]
    count: int


@dataclass(frozen=True)
class DeltaRow:
    """One metric against the baseline: the delta as a dot, its 95% interval as a line, on the row's scale."""

    metric: str
    base: str
    now: str
    delta: str
    interval: str
    p_value: str
    significant: bool | None
    comparable: bool
    reason: str
    zero_x: float
    dot_x: float | None
    low_x: float | None
    high_x: float | None


def num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "n/a"
        # Never an exponent: `12500`, not `1.25e+04`; `0.000015`, not `1.5e-05` (digits stay significant).
        if abs(value) >= 1000:
            return f"{value:.0f}"
        places = digits if value == 0 or abs(value) >= 10**-digits else digits - 1 - math.floor(math.log10(abs(value)))
        return f"{value:.{places}f}".rstrip("0").rstrip(".") or "0"
    return str(value)


def _nice_step(span: float, bins: int) -> float:
    raw = span / bins
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return float(factor * magnitude)
    return float(10 * magnitude)


def histogram(report: Report, height: float = 150.0) -> Histogram | None:
    # As the suite's percentiles count them: each single case's first run, and each asked turn of a conversation.
    firsts = [t.trace.latency_ms for c in report.cases for t in c.turns] + [
        c.first_latency_ms() for c in report.cases if not c.turns
    ]
    latencies = [v for v in firsts if v is not None]
    if not latencies:
        return None
    threshold = next((r.threshold for r in report.rules if r.scope == "suite" and r.metric == P95_LATENCY_MS), None)
    top = max([*latencies, 1.0])
    # A threshold far above every latency would squash the data into one bin: it is then marked at the edge.
    if threshold is not None and threshold <= top * 1.5:
        top = max(top, threshold)
    step = _nice_step(top * 1.0001, HISTOGRAM_BINS)
    bins = max(1, math.ceil(top * 1.0001 / step))
    counts = Counter(min(int(v // step), bins - 1) for v in latencies)
    most = max(counts.values())
    width = CHART_WIDTH / bins
    bars = []
    for k in range(bins):
        n = counts.get(k, 0)
        h = height * n / most
        label = f"{num(k * step, 4)}–{num((k + 1) * step, 4)} ms"
        bars.append(Bar(k * width + 1, height - h, width - 2, h, label, str(n)))
    scale = CHART_WIDTH / (bins * step)
    marks = []
    for kind, value in (("p50", report.suite.p50_latency_ms), ("p95", report.suite.p95_latency_ms)):
        if value is not None:
            marks.append(Mark(min(value * scale, CHART_WIDTH), f"{kind} {value:.0f} ms", kind))
    off_scale, beyond = "", None
    if threshold is not None and threshold * scale > CHART_WIDTH:
        off_scale = f"threshold {threshold:.0f} ms: beyond this axis (it ends at {num(bins * step, 4)} ms)"
        beyond = Mark(HISTOGRAM_RIGHT - 4, f"threshold {threshold:.0f} ms →", "beyond", "end")
    elif threshold is not None:
        x = threshold * scale
        marks.append(Mark(x, f"threshold {threshold:.0f} ms", "threshold", "end" if x > CHART_WIDTH * 0.7 else "start"))
    ticks = [(k * width, num(k * step, 4)) for k in range(0, bins + 1, max(1, bins // 6))]
    return Histogram(bars, marks, ticks, len(latencies), off_scale, beyond)


def rate_chart(report: Report, key: str) -> RateChart:
    return RateChart(rates(report, key))


def rates(report: Report, key: str) -> list[RateRow]:
    totals: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for case in report.cases:
        label = getattr(case, key, None) or UNSET
        totals[label] += 1
        passed[label] += case.status == "pass"
    return [
        RateRow(label, passed[label], totals[label], CHART_WIDTH * passed[label] / totals[label])
        for label in sorted(totals)
    ]


def distributions(report: Report, height: float = 80.0) -> list[Distribution]:
    """Faithfulness in five bins of 0.2, and each rubric dimension over its 1–5 scores."""
    faith = [c.judge.faithfulness for c in report.cases]
    found: dict[str, list[float]] = {FAITHFULNESS: [v for v in faith if v is not None]}
    for case in report.cases:
        for dim, score in case.judge.scores.items():
            found.setdefault(f"judge.{dim}", []).append(float(score))
    return [_distribution(name, values, name == FAITHFULNESS, height) for name, values in found.items() if values]


def reference_distributions(report: Report, height: float = 80.0) -> list[Distribution]:
    """Answer correctness over the cases whose reference was judged (five bins of 0.2), and each of the team's
    criteria over its 1–5 scores; empty when no case has either."""
    found: dict[str, list[float]] = {}
    for case in report.cases:
        for name, value in case.metrics.items():
            if (name == ANSWER_CORRECTNESS or name.startswith("criteria.")) and isinstance(value, int | float):
                found.setdefault(name, []).append(float(value))
    # Answer correctness first, then the criteria by name, whatever order the cases met them in.
    found = dict(sorted(found.items(), key=lambda item: (item[0] != ANSWER_CORRECTNESS, item[0])))
    return [_distribution(name, values, name == ANSWER_CORRECTNESS, height) for name, values in found.items()]


def _distribution(name: str, values: list[float], unit_interval: bool, height: float) -> Distribution:
    """A share (0 to 1) in five bins of 0.2, or a 1–5 score in its five values: five bars, 220 wide in all."""
    if unit_interval:
        labels = ["0–0.2", "0.2–0.4", "0.4–0.6", "0.6–0.8", "0.8–1"]
        counts = Counter(min(int(v / 0.2 + 1e-9), 4) for v in values)
    else:
        labels = ["1", "2", "3", "4", "5"]
        counts = Counter(min(max(round(v) - 1, 0), 4) for v in values)
    most = max(counts.values())
    width = 220 / len(labels)
    bars = [
        Bar(
            k * width + 1,
            height - height * counts.get(k, 0) / most,
            width - 2,
            height * counts.get(k, 0) / most,
            labels[k],
            str(counts.get(k, 0)),
        )
        for k in range(len(labels))
    ]
    return Distribution(name, bars, len(values))


def delta_rows(comparison: ComparisonBlock | None, width: float = 240.0) -> list[DeltaRow]:
    """Deltas centre on 0; ratios (p95 latency, cost) on 1. Each row has its own scale: metrics differ in units."""
    rows = []
    for d in comparison.deltas if comparison is not None else []:
        ratio = d.kind == "ratio"
        centre = 1.0 if ratio else 0.0
        nums = [d.delta, d.ci_low, d.ci_high]
        finite = [abs(v - centre) for v in nums if v is not None and math.isfinite(v)]
        span = max(finite, default=0.0) or 1.0

        def at(value: float | None, span: float = span, centre: float = centre) -> float | None:
            if value is None or not math.isfinite(value):
                return None
            return width / 2 + ((value - centre) / span) * (width / 2 - 8)

        low, high = d.ci_low, d.ci_high
        shown = num(d.delta)
        rows.append(
            DeltaRow(
                metric=d.metric,
                base=fmt(d.metric, d.base),
                now=fmt(d.metric, d.now),
                delta=f"×{shown}" if ratio and d.delta is not None else shown,
                interval=f"[{num(low)}, {num(high)}]" if low is not None or high is not None else "n/a",
                p_value=p_text(d.p_value),
                significant=d.significant,
                comparable=d.comparable,
                reason=d.reason,
                zero_x=width / 2,
                dot_x=at(d.delta),
                low_x=at(low),
                high_x=at(high),
            )
        )
    return rows
