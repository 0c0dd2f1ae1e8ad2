"""The HTML report (`--html`): one self-contained file to open in a browser, attach to a build or archive.

Everything is inline (CSS, SVG charts, a little JS for the case table's filters); nothing is fetched,
so it works offline and from an artifact store. The charts are drawn here, as numbers for the template
(`report/templates/report.html.j2`), and the template escapes every piece of text it is given:
answers, questions, ids and judge reasons are untrusted and never reach the page unescaped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from jinja2 import Environment, StrictUndefined

from ragjudge import __version__
from ragjudge.metrics.names import ANSWER_CORRECTNESS, FAITHFULNESS
from ragjudge.report.bill import cost_words
from ragjudge.report.changes import CHANGE_NAMES, on_main_words, paired_note
from ragjudge.report.comment_view import reading_order
from ragjudge.report.comparison_block import ComparisonBlock
from ragjudge.report.figures import age_words, label, short_ref
from ragjudge.report.figures import score as score_text
from ragjudge.report.html_charts import (
    UNSET,
    DeltaRow,
    Distribution,
    Histogram,
    RateChart,
    delta_rows,
    distributions,
    histogram,
    num,
    rate_chart,
    reference_distributions,
)
from ragjudge.report.model import Report
from ragjudge.report.suite_block import RuleBlock
from ragjudge.report.warning_kinds import by_kind


@dataclass
class View:
    """What the template draws."""

    report: Report
    version: str
    rules: list[dict[str, Any]]
    histogram: Histogram | None
    by_category: RateChart
    by_difficulty: RateChart
    distributions: list[Distribution]
    deltas: list[DeltaRow]
    comparison: ComparisonBlock | None
    cases: list[dict[str, Any]]
    statuses: list[str]
    changes: list[tuple[str, str]]
    """Each change in the report: its code (the filter's value) and its words (what the reader sees)."""
    categories: list[str]
    notes: list[str] = field(default_factory=list)
    baseline_name: str = ""
    bill: str = ""
    """The run's cost in one phrase ("judge $0.41 · service $1.20", "judge cost unknown"); "" when none."""
    """`main@abc1234`: the baseline as every output names it (never the path it was read from)."""
    baseline_short: str = ""
    """`main`: the deltas' column heading (the sentence above it names the commit)."""
    baseline_age: str = ""
    paired_note: str = ""
    """`on the 39 cases both runs have (...)` when the case set changed; empty otherwise."""
    warnings: list[str] = field(default_factory=list)
    """The run's warnings by kind (`warning_kinds.by_kind`): one line a kind, with its count."""
    reference_charts: list[Distribution] = field(default_factory=list)
    """Answer correctness and the criteria; empty (and nothing drawn) when no case was judged against either."""
    criteria_means: list[tuple[str, str]] = field(default_factory=list)
    """(`criteria.NAME`, its suite mean) from the suite's `criteria.NAME_mean` figures."""


def _out_of_5(value: float | None) -> str:
    """A judge's 1-5 score as `4/5`; `not scored` when the judge gave none (never `None/5`)."""
    return "not scored" if value is None else f"{score_text(value)}/5"


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
                "change_words": CHANGE_NAMES.get(change, change),
                "search": " ".join(text.lower().split()),
                "latency": num(case.first_latency_ms(), 4),
                "claims": judge.claims,
                "reasoning": judge.reasoning,
                "scores": {dim: _out_of_5(value) for dim, value in judge.scores.items()},
                "unscored": judge.unscored,
                FAITHFULNESS: num(judge.faithfulness),
                "reference_points": judge.reference_points or [],
                ANSWER_CORRECTNESS: num(case.metrics.get(ANSWER_CORRECTNESS)),
                "criteria": {
                    name: {"score": _out_of_5(c.score), "reason": c.reason} for name, c in judge.criteria.items()
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
    on_main = on_main_words(report)
    rules: list[dict[str, Any]] = [
        {
            "kind": r.scope,
            "metric": r.metric,
            "passed": r.passed,
            "reason": r.reason + (on_main.get(r.metric, "") if r.scope == "suite" and r.passed is False else ""),
            "tally": case_tally(r, report),
        }
        for r in [*report.rules, *(comparison.rules if comparison is not None else [])]
    ]
    rows = case_rows(report)
    notes = list(comparison.notices) if comparison is not None else []
    return View(
        report=report,
        version=__version__,
        rules=rules,
        histogram=histogram(report),
        by_category=rate_chart(report, "category"),
        by_difficulty=rate_chart(report, "difficulty"),
        distributions=distributions(report),
        deltas=delta_rows(comparison),
        comparison=comparison,
        cases=rows,
        statuses=sorted({c.status for c in report.cases}),
        changes=[(c, CHANGE_NAMES.get(c, c)) for c in sorted({r["change"] for r in rows if r["change"]})],
        categories=sorted({r["category"] for r in rows}),
        notes=notes,
        baseline_name=label(comparison.baseline) if comparison is not None else "",
        bill=cost_words(report.suite),
        baseline_short=(short_ref(comparison.baseline.ref) or "baseline") if comparison is not None else "",
        baseline_age=age_words(comparison.baseline.age_days) if comparison is not None else "",
        paired_note=paired_note(report),
        warnings=[kind.text() for kind in by_kind(report.warnings)],
        reference_charts=reference_distributions(report),
        criteria_means=[
            (key.removesuffix("_mean"), num(value))
            for key, value in sorted((report.suite.model_extra or {}).items())
            if key.startswith("criteria.") and key.endswith("_mean") and isinstance(value, int | float)
        ],
    )


def _short_float(value: Any) -> Any:
    """A float the template writes as is (an SVG coordinate) to three places at most: `117.857`, never
    `117.85714285714286`; figures a reader reads go through `num` or `fmt` before they get here."""
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.3f}".rstrip("0").rstrip(".") or "0"
    return value


def render_html(report: Report) -> str:
    if report.headline is None:
        from ragjudge.report.headline import with_headline  # a report saved before the headline was recorded

        report = with_headline(report)
    source = resources.files("ragjudge.report").joinpath("templates", "report.html.j2").read_text(encoding="utf-8")
    # Autoescape on: every value is escaped for HTML (text and attributes) unless the template says otherwise,
    # and it never does for report data.
    env = Environment(
        autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, finalize=_short_float
    )
    env.filters["num"] = num
    return env.from_string(source).render(view=build_view(report))
