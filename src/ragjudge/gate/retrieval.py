"""Deterministic metrics: retrieval recall and precision, rejection accuracy (percentiles are `stats.percentile`)."""

from __future__ import annotations

from typing import Protocol

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.interface import EVIDENCE_DIMENSIONS
from ragjudge.metrics.names import CONTEXT_PRECISION, CONTEXT_RECALL, FAITHFULNESS, JUDGE_PREFIX

NO_PASSAGES = "the service exposes no passages (endpoint.response.retrieved is not mapped and the reply has none)"
"""Why a metric that needs the retrieved passages has no value for such a reply."""
NO_TRACE_PASSAGES = (
    "neither the reply nor the service's spans gave passages (traces.settle_s passed, or no span carried documents)"
)
"""The same, with `traces:` set: the reply's trace was waited for and gave none."""
_NEED_ANSWER = frozenset({FAITHFULNESS, *(JUDGE_PREFIX + d for d in EVIDENCE_DIMENSIONS)})
"""Metrics about the answer's support by the passages: they need passages only when there is an answer."""


def unknown_passages(metric: str, case: Case, trace: Trace) -> str | None:
    """Why `metric` cannot be computed for a reply whose passages are unknown; None when it can (or needs none).

    Recall with no golden ids, or of a refusal, needs no passages; nor does faithfulness of a refusal."""
    if not trace.passages_unknown:
        return None
    answered = not trace.refused and bool(trace.answer.strip())
    if metric == CONTEXT_RECALL:
        needed = bool(case.golden_context_ids) and not trace.refused
    elif metric == CONTEXT_PRECISION:
        needed = True
    else:
        needed = metric in _NEED_ANSWER and answered
    why = NO_PASSAGES if trace.spans is None else NO_TRACE_PASSAGES
    return f"{metric} unknown: {why}" if needed else None


def context_recall(case: Case, trace: Trace) -> float:
    """Share of golden ids retrieved: 1 with no golden ids, and a refusal counts as a hit."""
    if not case.golden_context_ids:
        return 1.0
    retrieved = set(trace.retrieved_ids)
    hits = sum(1 for gid in case.golden_context_ids if trace.refused or gid in retrieved)
    return hits / len(case.golden_context_ids)


def context_precision(case: Case, trace: Trace) -> float | None:
    """Rank-weighted precision: sum of 1/(rank+1) over golden ids found,
    divided by max(#golden, #retrieved). None (not applicable) with no golden ids."""
    if not case.golden_context_ids:
        return None
    ids = list(trace.retrieved_ids)
    ranks = [ids.index(gid) for gid in case.golden_context_ids if gid in ids]
    if not ranks:
        return 0.0
    return sum(1 / (r + 1) for r in ranks) / max(len(case.golden_context_ids), len(ids))


class Scoped(Protocol):
    """A case's side of the rejection check: a `Case`, or the suite's `SuiteCase` of one."""

    @property
    def should_answer(self) -> bool: ...


class Declined(Protocol):
    """A reply's side of the rejection check: a `Trace`, or the suite's `Reply` of one."""

    @property
    def refused(self) -> bool: ...


def rejection_correct(case: Scoped, trace: Declined) -> bool:
    """Out-of-scope refused and in-scope answered are both right."""
    return trace.refused != case.should_answer
