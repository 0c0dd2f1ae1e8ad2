"""Deterministic metrics: retrieval recall and precision, rejection accuracy (percentiles are `stats.percentile`)."""

from __future__ import annotations

from typing import Protocol

from ragjudge.cases import Case
from ragjudge.endpoint.trace import Trace


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
