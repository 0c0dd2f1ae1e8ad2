"""The HTML report (`--html`): one self-contained file to open in a browser, attach to a build or archive.

Everything is inline (CSS, SVG charts, a little JS for the case table's filters); nothing is fetched,
so it works offline and from an artifact store. The charts are drawn here, as numbers for the template
(`report/templates/report.html.j2`), and the template escapes every piece of text it is given:
answers, questions, ids and judge reasons are untrusted and never reach the page unescaped.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from jinja2 import Environment, StrictUndefined

from ragjudge import __version__
from ragjudge.metrics.names import ANSWER_CORRECTNESS, FAITHFULNESS, P95_LATENCY_MS
from ragjudge.report.comment_view import reading_order
from ragjudge.report.comparison_block import ComparisonBlock
from ragjudge.report.figures import score as score_text
from ragjudge.report.model import Report
from ragjudge.report.suite_block import RuleBlock
from ragjudge.report.warning_kinds import by_kind

CHART_WIDTH = 560
"""Width of the plotting area of every chart, in SVG units."""
HISTOGRAM_BINS = 12
UNSET = "(none)"


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


@dataclass
class View:
    """What the template draws."""

    report: Report
    version: str
    rules: list[dict[str, Any]]
    histogram: Histogram | None
    by_category: list[RateRow]
    by_difficulty: list[RateRow]
    distributions: list[Distribution]
    deltas: list[DeltaRow]
    comparison: ComparisonBlock | None
    cases: list[dict[str, Any]]
    statuses: list[str]
    changes: list[str]
    categories: list[str]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """The run's warnings by kind (`warning_kinds.by_kind`): one line a kind, with its count."""
    reference_charts: list[Distribution] = field(default_factory=list)
    """Answer correctness and the criteria; empty (and nothing drawn) when no case was judged against either."""
    criteria_means: list[tuple[str, str]] = field(default_factory=list)
    """(`criteria.NAME`, its suite mean) from the suite's `criteria.NAME_mean` figures."""


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "n/a"
        return f"{value:.{digits}g}" if abs(value) >= 1000 else f"{value:.{digits}f}".rstrip("0").rstrip(".") or "0"
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
        label = f"{_num(k * step, 4)}–{_num((k + 1) * step, 4)} ms"
        bars.append(Bar(k * width + 1, height - h, width - 2, h, label, str(n)))
    scale = CHART_WIDTH / (bins * step)
    marks = []
    for kind, value in (("p50", report.suite.p50_latency_ms), ("p95", report.suite.p95_latency_ms)):
        if value is not None:
            marks.append(Mark(min(value * scale, CHART_WIDTH), f"{kind} {value:.0f} ms", kind))
    off_scale = ""
    if threshold is not None and threshold * scale > CHART_WIDTH:
        off_scale = f"threshold {threshold:.0f} ms: beyond this axis (it ends at {_num(bins * step, 4)} ms)"
    elif threshold is not None:
        x = threshold * scale
        marks.append(Mark(x, f"threshold {threshold:.0f} ms", "threshold", "end" if x > CHART_WIDTH * 0.7 else "start"))
    ticks = [(k * width, _num(k * step, 4)) for k in range(0, bins + 1, max(1, bins // 6))]
    return Histogram(bars, marks, ticks, len(latencies), off_scale)


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
        shown = _num(d.delta)
        rows.append(
            DeltaRow(
                metric=d.metric,
                base=_num(d.base),
                now=_num(d.now),
                delta=f"×{shown}" if ratio and d.delta is not None else shown,
                interval=f"[{_num(low)}, {_num(high)}]" if low is not None or high is not None else "n/a",
                p_value=_num(d.p_value),
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


def case_rows(report: Report) -> list[dict[str, Any]]:
    rows = []
    for case in reading_order(report.cases):
        change = case.change or ""
        judge = case.judge
        text = " ".join([case.id, case.question, case.trace.answer or "", *case.failed_conditions, case.category or ""])
        rows.append(
            {
                "case": case,
                "category": case.category or UNSET,
                "change": change,
                "search": " ".join(text.lower().split()),
                "latency": _num(case.first_latency_ms(), 4),
                "claims": judge.claims,
                "reasoning": judge.reasoning,
                "scores": judge.scores,
                "unscored": judge.unscored,
                FAITHFULNESS: _num(judge.faithfulness),
                "reference_points": judge.reference_points or [],
                ANSWER_CORRECTNESS: _num(case.metrics.get(ANSWER_CORRECTNESS)),
                "criteria": {
                    name: {"score": score_text(c.score), "reason": c.reason} for name, c in judge.criteria.items()
                },
                "runs": case.runs,
                "k_of_n": case.k_of_n or "",
                "flaky": case.flaky,
                "baseline": case.baseline,
            }
        )
    return rows


def case_tally(rule: RuleBlock, report: Report) -> str | None:
    """A case rule's result as a count, `2 of 43 cases failed`; None for a suite rule.

    Cases failing a case rule need not fail the gate (pass_rate may tolerate them), so the count is told
    without the verdict's words or colours."""
    if rule.scope != "case":
        return None
    if rule.value is None or not math.isfinite(rule.value):
        return "no case failed" if rule.passed else "cases failed"
    return f"{rule.value:.0f} of {report.suite.cases} cases failed"


def build_view(report: Report) -> View:
    comparison = report.comparison
    rules: list[dict[str, Any]] = [
        {"kind": r.scope, "metric": r.metric, "passed": r.passed, "reason": r.reason, "tally": case_tally(r, report)}
        for r in [*report.rules, *(comparison.rules if comparison is not None else [])]
    ]
    rows = case_rows(report)
    notes = list(comparison.notices) if comparison is not None else []
    return View(
        report=report,
        version=__version__,
        rules=rules,
        histogram=histogram(report),
        by_category=rates(report, "category"),
        by_difficulty=rates(report, "difficulty"),
        distributions=distributions(report),
        deltas=delta_rows(comparison),
        comparison=comparison,
        cases=rows,
        statuses=sorted({c.status for c in report.cases}),
        changes=sorted({r["change"] for r in rows if r["change"]}),
        categories=sorted({r["category"] for r in rows}),
        notes=notes,
        warnings=[kind.text() for kind in by_kind(report.warnings)],
        reference_charts=reference_distributions(report),
        criteria_means=[
            (key.removesuffix("_mean"), _num(value))
            for key, value in sorted((report.suite.model_extra or {}).items())
            if key.startswith("criteria.") and key.endswith("_mean") and isinstance(value, int | float)
        ],
    )


def render_html(report: Report) -> str:
    if report.headline is None:
        from ragjudge.report.headline import with_headline  # a report saved before the headline was recorded

        report = with_headline(report)
    source = resources.files("ragjudge.report").joinpath("templates", "report.html.j2").read_text(encoding="utf-8")
    # Autoescape on: every value is escaped for HTML (text and attributes) unless the template says otherwise,
    # and it never does for report data.
    env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    return env.from_string(source).render(view=build_view(report))
