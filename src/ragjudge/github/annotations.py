"""Which failures become `::error::` / `::warning::` annotations, worst first.

GitHub shows at most 10 of each kind per step, so the list is ranked and cut,
and the last slot says how many more there are. When the gate fails, the failed
suite rules and regression rules come first (they are why the step is red), then
the regressions against the baseline and the worst other cases as errors; when it
passes, the cases it tolerated are warnings, before the run's warnings (which keep one slot at least). A case's
annotation carries its case file and line, so it lands on the case in "Files changed";
the run's warnings, and the step's own (a baseline it could not look for or read, a comment that could not be
posted), are one annotation per kind, with a count, and when the kinds do not fit, the last slot says how many more
there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from ragjudge.github.workflow_commands import MAX_ANNOTATIONS
from ragjudge.metrics.names import CONTEXT_RECALL, FAITHFULNESS
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.causes import Cause, causes
from ragjudge.report.changes import on_main_words
from ragjudge.report.figures import label
from ragjudge.report.model import Report
from ragjudge.report.warning_kinds import by_kind

Kind = Literal["error", "warning"]
IDS_SHOWN = 5
"""Ids named in a cause's annotation; the rest are counted."""


@dataclass(frozen=True)
class Annotation:
    """One workflow-command annotation."""

    kind: Kind
    """`error` or `warning`."""
    title: str
    message: str
    file: str | None = None
    """The case file, relative to the workspace, for a case's annotation."""
    line: int | None = None
    """The line of the case in `file`."""

    def properties(self) -> dict[str, str]:
        """The workflow command's properties: `file` and `line` when the annotation is about a case."""
        # A file outside the checkout (its path absolute, or climbing out with `..`) is nowhere GitHub can show it.
        outside = self.file is None or PurePath(self.file).is_absolute() or ".." in PurePath(self.file).parts
        where = {"file": self.file} if self.file and not outside else {}
        if where and self.line:
            where["line"] = str(self.line)
        return where


def severity(case: CaseBlock) -> tuple[int, int, float, float, str]:
    """Sort key, worst first: more failed conditions, then errored before failed, then lower scores."""

    def score(name: str) -> float:
        value = case.metrics.get(name)
        return 1.0 if value is None else float(value)

    return (
        -len(case.failed_conditions),
        0 if case.status == "error" else 1,
        score(FAITHFULNESS),
        score(CONTEXT_RECALL),
        case.id,
    )


def case_annotation(kind: Kind, case: CaseBlock, base: str = "main", reasons: str | None = None) -> Annotation:
    """`reasons`: what to say it failed on (a cause's condition); every failed condition when None."""
    reasons = reasons or "; ".join(case.failed_conditions) or "no reason recorded"
    if case.change == "regression":
        title = f"ragjudge: case {case.id} regressed"
        return Annotation(kind, title, f"{case.id} passed on {base}, fails now: {reasons}", case.file, case.line)
    verb = "errored" if case.status == "error" else "failed"
    if case.change == "still_failing":
        title = f"ragjudge: case {case.id} {verb}, as on {base}"
        message = f"{case.id} {verb} on {base} too (not this change's doing): {reasons}"
        return Annotation(kind, title, message, case.file, case.line)
    return Annotation(kind, f"ragjudge: case {case.id} {verb}", f"{case.id} {verb}: {reasons}", case.file, case.line)


def cause_annotation(kind: Kind, cause: Cause, base: str) -> Annotation:
    """One annotation for a cause, on its example case's file and line: `and 29 more like it`."""
    example = cause.example
    others = [c.id for c in cause.cases if c.id != example.id]
    shown = ", ".join(others[:IDS_SHOWN]) + (f" and {len(others) - IDS_SHOWN} more" if len(others) > IDS_SHOWN else "")
    old = ""
    if cause.pre_existing == len(cause.cases):
        old = f", every one failing on {base} too"
    elif cause.pre_existing:
        old = f", {cause.pre_existing} of them failing on {base} too"
    lead = case_annotation(kind, example, base, cause.example_condition)
    message = f"{lead.message}; and {len(others)} more like it{old}: {shown}"
    return Annotation(kind, f"{lead.title}, and {len(others)} more like it", message, example.file, example.line)


def gate_annotations(report: Report, warnings: Sequence[str] = ()) -> list[Annotation]:
    """The annotations for a gate report; `warnings` (e.g. a comment that could not be posted) go first."""
    # Regressions against the baseline first: they are what this change broke.
    # Cases pending review gate nothing: the comment shows them, the annotations do not.
    failing = (c for c in report.cases if c.status != "pass" and c.review != "pending")
    bad = sorted(failing, key=lambda c: (c.change != "regression", severity(c)))
    gate_failed = report.verdict != "pass"
    # The error budget's reason opens the report's warnings; shown once, as the error it is.
    kinds = _kinds([w for w in (*warnings, *report.warnings) if w != report.error_reason])
    if not gate_failed:
        # The cases the gate tolerated take the slots first (they are about this change's cases), but for one that
        # the warnings keep, so that no warning goes unsaid.
        tolerated = _fill([], bad, "warning", MAX_ANNOTATIONS - (1 if kinds else 0))
        return tolerated + _notes(kinds, MAX_ANNOTATIONS - len(tolerated))
    failed_rules = [r for r in report.rules if r.scope == "suite" and r.passed is False]
    if report.comparison is not None:
        failed_rules += [r for r in report.comparison.rules if r.passed is False]
    base = label(report.comparison.baseline) if report.comparison is not None else "main"
    on_main = on_main_words(report)
    errors = [Annotation("error", f"ragjudge: {report.verdict}", report.error_reason)] if report.error_reason else []
    errors += [
        Annotation(
            "error",
            f"ragjudge: {r.scope} rule {r.metric} failed",
            r.reason + (on_main.get(r.metric, "") if r.scope == "suite" else ""),
        )
        for r in failed_rules
    ]
    if not errors:
        errors.append(Annotation("error", f"ragjudge: {report.verdict}", "no case could be evaluated"))
    # One annotation per cause first (on its example's file and line), then the cases no cause stands for.
    found = causes(report)
    errors += [cause_annotation("error", k, base) for k in found[: max(0, MAX_ANNOTATIONS - len(errors) - 1)]]
    told = {c.id for k in found for c in k.cases}
    rest = [c for c in bad if c.id not in told]
    return _fill(errors, rest, "error", base=base)[:MAX_ANNOTATIONS] + _notes(kinds, MAX_ANNOTATIONS)


def step_warnings(warnings: Sequence[str], room: int = MAX_ANNOTATIONS) -> list[Annotation]:
    """The step's warnings when there is no gate report to annotate: one a kind, `room` in all."""
    return _notes(_kinds(warnings), room)


def _kinds(warnings: Sequence[str]) -> list[str]:
    return [kind.text() for kind in by_kind(warnings)]


def _notes(kinds: Sequence[str], room: int) -> list[Annotation]:
    """One warning annotation per kind of warning; when they do not all fit, the last slot counts the rest."""
    if len(kinds) <= room:
        return [Annotation("warning", "ragjudge", text) for text in kinds]
    shown = [Annotation("warning", "ragjudge", text) for text in kinds[: room - 1]]
    rest = len(kinds) - len(shown)
    return [*shown, Annotation("warning", "ragjudge: more warnings", f"{rest} more kinds of warning: see the log")]


def _fill(
    head: list[Annotation], cases: Sequence[CaseBlock], kind: Kind, limit: int = MAX_ANNOTATIONS, base: str = "main"
) -> list[Annotation]:
    """`head` then one annotation per case, `limit` in all; when they do not all fit, the last slot counts the
    rest."""
    room = limit - len(head)
    if room <= 0:
        return head
    if len(cases) <= room:
        return head + [case_annotation(kind, c, base) for c in cases]
    shown = [case_annotation(kind, c, base) for c in cases[: room - 1]]
    rest = len(cases) - len(shown)
    more = Annotation(kind, "ragjudge: more cases", f"{rest} more failing or errored cases: see the job summary")
    return head + shown + [more]
