"""What changed against the baseline, as the comment shows it under the headline: the alert, and the deltas table.

`> [!CAUTION]` when a regression rule fails, `> [!WARNING]` for flaky cases, figures or cases
that could not be compared, and notices (an old baseline, a changed case set or judge),
`> [!NOTE]` otherwise. The sentence names the baseline (`main@abc1234`), its age and how the cases moved:
"Against main@abc1234 (3 days old): 2 regressions, 5 still failing, 36 still passing".

Text built here goes into Markdown as is, so every piece of data in it passes through `inline`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.metrics.names import NEWLY_FAILING, PASS_RATE
from ragjudge.metrics.spec import multiple
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.escape import inline, prose
from ragjudge.report.figures import NO_BASELINE, age_words, fmt, label, p_text, shared_cases
from ragjudge.report.model import Report

IDS_IN_SENTENCE = 10


@dataclass(frozen=True)
class Alert:
    kind: str
    """CAUTION, WARNING or NOTE."""
    sentence: str
    """Markdown-safe."""
    notes: tuple[str, ...]
    """Markdown-safe lines under the sentence."""

    def markdown(self) -> str:
        lines = [f"> [!{self.kind}]", f"> {self.sentence}"]
        lines += [f"> - {note}" for note in self.notes]
        return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _ids(cases: Sequence[CaseBlock], with_runs: bool = False) -> str:
    shown = []
    for c in cases[:IDS_IN_SENTENCE]:
        text = inline(c.id, 120)
        if with_runs and c.k_of_n:
            text += f" ({inline(c.k_of_n, 40)})"
        shown.append(text)
    more = len(cases) - IDS_IN_SENTENCE
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


_COUNTED = (
    ("regression", "regression", "regressions"),
    ("fixed", "fixed", "fixed"),
    ("still_failing", "still failing", "still failing"),
    ("new", "new", "new"),
    ("removed", "removed", "removed"),
    ("flaky", "flaky", "flaky"),
    ("baseline_flaky", "flaky on the baseline", "flaky on the baseline"),
    ("judge_split", "judge undecided", "judge undecided"),
    ("not_comparable", "not compared", "not compared"),
    ("still_passing", "still passing", "still passing"),
)
CHANGE_NAMES = {key: one for key, one, _ in _COUNTED} | {"pending_review": "pending review"}
"""Each `change` value in words, for a reader who never saw the report's codes (the HTML report's badges)."""


def counts_words(counts: dict[str, int], base: str = "the baseline") -> str:
    """`2 regressions, 5 still failing, 36 still passing`: each change that happened, still passing always;
    `base` names the baseline (`flaky on main@abc1234`)."""
    parts = []
    for key, one, many in _COUNTED:
        n = counts.get(key, 0)
        if n or key == "still_passing":
            parts.append(f"{n} {(one if n == 1 else many).replace('the baseline', base)}")
    return ", ".join(parts)


def alert(report: Report) -> Alert | None:
    """The alert under the headline: how the cases moved against the baseline, and what limits the comparison;
    a NOTE when a baseline was asked for and not found; None when no baseline was asked for.

    The headline names the regressions; the alert counts every change (CAUTION when a regression rule failed,
    WARNING when something could not be compared or a notice limits the comparison, NOTE otherwise)."""
    cmp = report.comparison
    if cmp is None:
        missing = next((w for w in report.warnings if w.startswith(NO_BASELINE)), None)
        if missing is None:
            return None
        return Alert("NOTE", prose("No baseline was compared: " + missing.removeprefix(NO_BASELINE), 400), ())
    where = f"{inline(label(cmp.baseline), 80)} ({age_words(cmp.baseline.age_days)})"
    sentence = f"Against {where}: {counts_words(cmp.counts, inline(label(cmp.baseline), 80))}"
    notes = [prose(n, 400) for n in cmp.notices]
    failed_rules = [r for r in cmp.rules if r.passed is False]
    if failed_rules:
        others = [r for r in failed_rules if r.metric != NEWLY_FAILING]
        sentence += "".join(f"; {inline(r.reason, 300)}" for r in others)
        return Alert("CAUTION", sentence, tuple(notes))
    flaky = [c for c in report.cases if c.change == "flaky"]
    unsure = [d for d in cmp.deltas if not d.comparable]
    odd_cases = [c for c in report.cases if c.change in ("not_comparable", "baseline_flaky")]
    if flaky or unsure or odd_cases or notes:
        if flaky:
            sentence += f"; flaky: {_ids(flaky, with_runs=True)}"
        if odd_cases:
            sentence += f"; not compared: {_ids(odd_cases)}"
        if unsure:
            sentence += f"; figures not comparable: {', '.join(inline(d.metric, 40) for d in unsure)}"
        return Alert("WARNING", sentence, tuple(notes))
    return Alert("NOTE", sentence, ())


def _arrow(value: float, null: float) -> str:
    return "▲" if value > null else ("▼" if value < null else "=")


def delta_rows(report: Report) -> list[dict[str, str]]:
    """The deltas table, one Markdown-safe row per metric."""
    cmp = report.comparison
    if cmp is None:
        return []
    rows = []
    for d in cmp.deltas:
        row = {"metric": d.metric, "base": fmt(d.metric, d.base), "now": fmt(d.metric, d.now)}
        row["moved"] = "—" if d.better is None or d.worse is None else f"{d.better} / {d.worse}"
        if d.delta is None or not d.comparable:
            row.update(delta="—", interval="—", p="—", verdict=inline(d.reason, 300))
        elif d.kind == "ratio":
            row.update(
                delta=f"{_arrow(d.delta, 1.0)} {multiple(d.delta)}×",
                interval=f"{multiple(d.ci_low)}× to {multiple(d.ci_high)}×",
                p="—",
                verdict="significant" if d.significant else "not significant",
            )
        else:
            # 1-5 scores (judge dimensions, the team's criteria) to 2 places, as the comparison's reasons write them.
            digits = 2 if d.metric.startswith(("judge.", "criteria.")) else 3
            row.update(
                delta=f"{_arrow(d.delta, 0.0)} {d.delta:+.{digits}f}",
                interval=f"{(d.ci_low or 0.0):+.{digits}f} to {(d.ci_high or 0.0):+.{digits}f}",
                p=p_text(d.p_value),
                verdict="significant" if d.significant else "not significant",
            )
        rows.append(row)
    return rows


def paired_note(report: Report) -> str:
    """`on the 39 cases both runs have (this run's pass_rate over its 40 cases: 0.925)`, as text to escape: why
    the deltas' figures are not the run's own, when the case set changed; empty when they are."""
    cmp = report.comparison
    if cmp is None:
        return ""
    paired = max((d.cases for d in cmp.deltas if d.comparable), default=0)
    where = shared_cases(report.suite.cases, paired)
    if not where:
        return ""
    own = report.suite.pass_rate
    if own is None:
        return where
    return f"{where} (this run's {PASS_RATE} over its {report.suite.cases} cases: {fmt(PASS_RATE, own)})"


def main_figures(report: Report) -> dict[str, str]:
    """Each suite rule failing on the baseline too, with the baseline's figure (`0.974`; empty when it had none):
    every output labels it as main's ("failing on main@abc1234 too (0.974 there)")."""
    cmp = report.comparison
    if cmp is None or report.headline is None:
        return {}
    before = {r.metric: r.value for r in cmp.baseline_rules if r.passed is False}
    return {
        metric: "" if before.get(metric) is None else fmt(metric, before[metric])
        for metric in report.headline.rules_failing_on_main
    }


def on_main_words(report: Report) -> dict[str, str]:
    """`, failing on main@abc1234 too (0.974 there)` for each suite rule failing on the baseline too, as plain text
    for stdout and the HTML report (the comment's rules table says it in its own column)."""
    cmp = report.comparison
    if cmp is None:
        return {}
    base = label(cmp.baseline)
    return {m: f", failing on {base} too" + (f" ({v} there)" if v else "") for m, v in main_figures(report).items()}
