"""Deterministic conditions: free, exact, never in disagreement with themselves."""

from __future__ import annotations

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace
from ragjudge.gate.tool_checks import tool_failures

DECLINED = "declined a question the corpus covers"


def mechanical_failures(case: Case, trace: Trace) -> list[str]:
    """Every deterministic condition the reply fails, one reason each."""
    failures = []
    text = trace.answer.lower()
    for phrase in case.must_mention:
        if phrase.lower() not in text:
            failures.append(f'missing required detail: "{phrase}"')
    for phrase in case.must_not_mention:
        if phrase.lower() in text:
            failures.append(f'contains forbidden claim: "{phrase}"')
    if case.should_answer and (trace.refused or not trace.answer.strip()):
        failures.append(DECLINED)
    if not case.should_answer and not trace.refused and trace.confidence != "none":
        stated = trace.confidence if trace.confidence is not None else "not stated"
        failures.append(f'answered an out-of-scope question with confidence "{stated}"')
    if trace.retrieval_tool_missed and case.golden_context_ids and case.should_answer:
        failures.append(
            f"never called its retrieval tool {trace.retrieval_tool_missed}: nothing was retrieved (context_recall 0)"
        )
    if case.tools is not None and trace.tool_calls is not None:  # none exposed: unknown, warned about once
        failures += tool_failures(case.tools, trace.tool_calls)
    return failures
