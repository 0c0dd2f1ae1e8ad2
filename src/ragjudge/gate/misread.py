"""An answer read from inside the passage list in most replies is a mapping error, not an answer.

`endpoint.response.answer` pointing into a passage list (a retriever's `documents.0.content`) would score every
case on the passage itself: faithful, on topic and usually passing. When that is so in more than half of the
replies (and at least two), each such case is an `error` with the reason, so the report and the gate's error
figures say it, instead of a pass. An answer that merely equals a passage's text, read from the service's own
answer field, is a warning (endpoint/coverage.py) when most replies do it: an extractive service may return a
short passage whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ragjudge.endpoint.answer_check import describe_flag, did_you_mean, most
from ragjudge.gate.scoring import CaseResult, score_conversation


def passage_answers_as_errors(results: Sequence[CaseResult]) -> list[CaseResult]:
    """The results, with the cases whose answer was read from the passage list made errors when they are most.

    Replies are counted as the suite counts them: a conversation's every asked turn is one; a conversation with
    such a turn is scored again from its turns."""
    replied = [u for r in results for u in (r.turns or (r,)) if u.endpoint.trace is not None]
    flagged = [r for r in replied if _is_passage(r)]
    if not most(len(flagged), len(replied)):
        return list(results)
    flags = [r.endpoint.trace.read.answer_flag for r in flagged if r.endpoint.trace is not None]
    flag = next((f for f in flags if f is not None and f.hint), flags[0])
    assert flag is not None
    reason = (
        f"{describe_flag(flag)} in {len(flagged)} of {len(replied)} replies: a mapping error, not an answer"
        f"{did_you_mean(flag)}"
    )
    errored = {id(r) for r in flagged}

    def marked(r: CaseResult) -> CaseResult:
        if id(r) not in errored:
            return r
        return dataclasses.replace(
            r, status="error", failed_conditions=(reason,), metrics=dict.fromkeys(r.metrics), flaky=False
        )

    out = []
    for r in results:
        if r.turns and any(id(t) in errored for t in r.turns):
            out.append(score_conversation(r.case, [marked(t) for t in r.turns]))
        else:
            out.append(marked(r))
    return out


def _is_passage(result: CaseResult) -> bool:
    trace = result.endpoint.trace
    flag = trace.read.answer_flag if trace is not None else None
    return flag is not None and flag.kind == "passage" and flag.from_passages
