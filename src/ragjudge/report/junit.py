"""The JUnit XML report (`--junit`): one testcase per case, for GitLab, Jenkins and other CI test views.

Layout (the common JUnit dialect that GitLab's `artifacts:reports:junit` and Jenkins read):

* `<testsuite name="ragjudge cases">`: one `<testcase classname=CATEGORY name=ID>` per case, with
  `<failure message=...>` listing the conditions it failed on (a contradicted reference point is one; the
  body adds the points the answer misses and the criteria scored low), `<error message=...>` for a case
  that could not be evaluated, `<skipped message="pending review, not gating (...)">` for a case pending
  review (no rule counts it; the message says how it went), and the suite's metrics as `<property>`s;
* `<testsuite name="ragjudge rules">`: one testcase per suite rule (and regression rule, when the
  report compares with a baseline), so the reason a gate failed shows even when every case passed.

Untrusted text (answers, reasons) is only ever character data or attribute values, escaped by the
XML writer; characters XML 1.0 cannot carry (most control characters) are dropped first.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ragjudge.judge.reference import ReferencePoint, missing_reason
from ragjudge.metrics.names import ANSWER_CORRECTNESS, REFERENCE_CONTRADICTIONS
from ragjudge.report.case_block import CaseBlock, TurnBlock
from ragjudge.report.figures import label, score
from ragjudge.report.model import Report

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
UNCATEGORISED = "uncategorised"
MESSAGE_CHARS = 1000
LOW_SCORE = 3
"""A criterion scored below this (1 or 2 of 5, under the scale's middle) is named in a failing case's body."""
# The suite's reference figures are null when no case had a reference: left out then, so that a report without
# references writes the properties it always did.
_OMITTED_WHEN_NULL = frozenset({ANSWER_CORRECTNESS, REFERENCE_CONTRADICTIONS})


def _text(value: object) -> str:
    return _NOT_XML.sub("", "" if value is None else str(value))


def _message(text: str) -> str:
    flat = " ".join(_text(text).split())
    return flat if len(flat) <= MESSAGE_CHARS else flat[: MESSAGE_CHARS - 1] + "…"


def _seconds(ms: float | None) -> str:
    return f"{(ms or 0.0) / 1000:.3f}"


def _turn_lines(case: CaseBlock) -> list[str]:
    """A conversation's dialogue, turn by turn: each question, its status and the answer it got."""
    lines = []
    for turn in case.turns:
        lines.append(f"turn {turn.turn} ({turn.status}): {turn.question}")
        if turn.trace.answer is not None:
            lines.append(f"  answer: {turn.trace.answer}")
        if turn.trace.retrieved_ids:
            lines.append("  retrieved: " + ", ".join(turn.trace.retrieved_ids))
    return lines


def _case_details(case: CaseBlock, base: str) -> str:
    """`base`: the baseline as every output names it (`main@abc1234`)."""
    lines = [f"question: {case.question}"] if not case.turns else [f"conversation of {len(case.turns)} turns:"]
    if case.change:
        lines.append(f"change against {base}: {case.change}")
    if case.baseline is not None:
        was = "; ".join(case.baseline.failed_conditions)
        lines.append(f"{base}: {case.baseline.status}" + (f" ({was})" if was else ""))
    if case.k_of_n:
        lines.append(f"runs: {case.k_of_n}")
    if case.turns:
        return _text("\n".join([*lines, *_turn_lines(case)]))
    if case.trace.answer is not None:
        lines.append(f"answer: {case.trace.answer}")
    if case.trace.retrieved_ids:
        lines.append("retrieved: " + ", ".join(case.trace.retrieved_ids))
    return _text("\n".join(lines))


def _judged_lines(case: CaseBlock | TurnBlock) -> list[str]:
    """What the judge found wrong beside the failed conditions: the reference points the answer misses, and
    the criteria scored low that no failed condition already names (a rule on a criterion says it there)."""
    lines = []
    for p in case.judge.reference_points or []:
        if p.verdict == "missing":
            lines.append(missing_reason(ReferencePoint(p.point, "missing", "", "")))
    for name, c in case.judge.criteria.items():
        value = c.score
        if value is None or value >= LOW_SCORE:
            continue
        metric = f"criteria.{name}"
        if any(cond.startswith(metric + " ") for cond in case.failed_conditions):
            continue
        reason = c.reason
        lines.append(f"{metric} {score(value)}/5" + (f": {reason}" if reason else ""))
    return lines


def _latency_ms(case: CaseBlock) -> float | None:
    """The case's time: a conversation's is every asked turn's, added up."""
    if case.turns:
        return sum(t.trace.latency_ms or 0.0 for t in case.turns)
    return case.trace.latency_ms


def _testcase(parent: ET.Element, case: CaseBlock, base: str) -> None:
    element = ET.SubElement(
        parent,
        "testcase",
        classname=_text(case.category or UNCATEGORISED),
        name=_text(case.id),
        time=_seconds(_latency_ms(case)),
    )
    conditions = "; ".join(case.failed_conditions)
    # The message is the conditions, as the comment's table has them; the body adds what the judge found.
    judged = [f"turn {t.turn}: {line}" for t in case.turns for line in _judged_lines(t)] or _judged_lines(case)
    body = _text("\n".join([*case.failed_conditions, *(judged if case.status != "pass" else [])]))
    if case.review == "pending":
        # Not gating: a CI test view must not show red for a case no rule counts, nor hide how it went.
        outcome = f"{case.status}: {conditions}" if conditions else case.status
        skipped = ET.SubElement(element, "skipped", message=_message(f"pending review, not gating ({outcome})"))
        skipped.text = body
    elif case.status == "fail":
        failure = ET.SubElement(element, "failure", message=_message(conditions), type="fail")
        failure.text = body
    elif case.status == "error":
        error = ET.SubElement(element, "error", message=_message(conditions or "could not be evaluated"), type="error")
        error.text = body
    ET.SubElement(element, "system-out").text = _case_details(case, base)


def _properties(parent: ET.Element, report: Report) -> None:
    props = ET.SubElement(parent, "properties")

    def add(name: str, value: object) -> None:
        ET.SubElement(props, "property", name=_text(name), value=_text("" if value is None else value))

    add("verdict", report.verdict)
    for name, value in report.suite.model_dump().items():
        if value is None and name in _OMITTED_WHEN_NULL:
            continue
        if value is None or isinstance(value, int | float | str | bool):
            add(f"suite.{name}", value)
    for delta in report.comparison.deltas if report.comparison else []:
        add(f"delta.{delta.metric}", delta.delta)


def _rule_cases(parent: ET.Element, report: Report) -> tuple[int, int]:
    rules: list[tuple[str, bool | None, str]] = [
        (f"{r.metric} {r.op} {r.threshold:g}", r.passed, r.reason) for r in report.rules if r.scope == "suite"
    ]
    for r in report.comparison.rules if report.comparison else []:
        rules.append((f"regression {r.metric} {r.op} {r.threshold:g}", r.passed, r.reason))
    failures = 0
    for name, passed, reason in rules:
        element = ET.SubElement(parent, "testcase", classname="ragjudge.rules", name=_text(name), time="0")
        if passed is False:
            failures += 1
            ET.SubElement(element, "failure", message=_message(reason), type="rule").text = _text(reason)
        else:
            ET.SubElement(element, "system-out").text = _text(reason)
    return len(rules), failures


def render_junit(report: Report) -> str:
    """The JUnit XML document for a report."""
    root = ET.Element("testsuites", name="ragjudge")
    cases = ET.SubElement(root, "testsuite", name="ragjudge cases")
    _properties(cases, report)
    base = label(report.comparison.baseline) if report.comparison is not None else "the baseline"
    for case in report.cases:
        _testcase(cases, case, base)
    gating = [c for c in report.cases if c.review != "pending"]
    failed = sum(c.status == "fail" for c in gating)
    errored = sum(c.status == "error" for c in gating)
    pending = len(report.cases) - len(gating)
    total_time = sum((_latency_ms(c) or 0.0) for c in report.cases)
    cases.attrib.update(
        tests=str(len(report.cases)),
        failures=str(failed),
        errors=str(errored),
        skipped=str(pending),
        time=_seconds(total_time),
        timestamp=_text(report.generated_at.replace("+00:00", "")) or "1970-01-01T00:00:00",
    )
    rules = ET.SubElement(root, "testsuite", name="ragjudge rules")
    n_rules, failed_rules = _rule_cases(rules, report)
    rules.attrib.update(
        tests=str(n_rules),
        failures=str(failed_rules),
        errors="0",
        skipped="0",
        time="0",
        timestamp=cases.attrib["timestamp"],
    )
    root.attrib.update(
        tests=str(len(report.cases) + n_rules),
        failures=str(failed + failed_rules),
        errors=str(errored),
        time=cases.attrib["time"],
    )
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
