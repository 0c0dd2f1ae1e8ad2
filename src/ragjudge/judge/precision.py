"""LLM context precision: the rank-weighted context precision where "relevant" is judged, not labelled.

For a case without `golden_context_ids`, the evidence judge (`judge/evidence.py`) scores each retrieved
passage against the question; a passage scoring `RELEVANT` (4) or more counts as relevant. The
value is the gate's `context_precision` with those passages standing in for the golden ids:
sum of 1/(rank+1) over relevant passages, divided by max(#relevant, #retrieved) = #retrieved.

A passage the judge could not score makes the whole value unscored (with the first reason): an
unscored passage might have been relevant, so any number would be a guess. A passage the
endpoint returned without text cannot be judged and counts as not relevant; when no passage has
text at all the metric is not applicable. Nothing retrieved gives 0, as it does with golden ids.

`PrecisionJudge` wraps the configured judge and adds this to its judgement; it imports no SDK,
so the scoring module can depend on it cheaply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.interface import Judge, Judgement, LogFn, Unscored
from ragjudge.metrics.names import CONTEXT_PRECISION

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer, PassageScore

RELEVANT = 4
"""Evidence score from which a passage counts as relevant (4 strongly consistent, 5 directly supports)."""
NO_TEXT = "context_precision not applicable: the endpoint returned no passage text to judge"


@dataclass(frozen=True)
class EvidenceJudgement(Judgement):
    """A judgement with the evidence judge's per-passage scores and the precision they give."""

    context_precision: float | None = None
    """LLM context precision; None when unscored (see `unscored`) or not applicable (see `precision_note`)."""
    evidence: tuple[dict[str, Any], ...] = ()
    """Per retrieved passage: id, rank, score, confidence, rationale, key_quote, unscored."""
    precision_note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out[CONTEXT_PRECISION] = self.context_precision
        out["evidence"] = [dict(e) for e in self.evidence]
        return out


def rank_weighted_precision(relevant: Sequence[bool]) -> float:
    """Context precision with judged relevance: sum of 1/(rank+1) over relevant ranks / #retrieved."""
    if not any(relevant):
        return 0.0
    return sum(1 / (rank + 1) for rank, hit in enumerate(relevant) if hit) / len(relevant)


def judged_precision(judgement: Judgement | None) -> float | None:
    """The LLM context precision carried by a judgement, if any (for the case's metrics)."""
    return judgement.context_precision if isinstance(judgement, EvidenceJudgement) else None


def precision_missing(judgement: Judgement | None) -> tuple[str, bool] | None:
    """Why a judged precision has no value: (reason, unscored); None when there is nothing to say."""
    if not isinstance(judgement, EvidenceJudgement):
        return None
    reason = judgement.unscored_reason(CONTEXT_PRECISION)
    if reason is not None:
        return f"context_precision unscored: {reason}", True
    if judgement.precision_note:
        return judgement.precision_note, False
    return None


def wants_precision(case: Case, trace: Trace) -> bool:
    """LLM precision applies to in-scope cases without golden ids."""
    return not case.golden_context_ids and case.should_answer


class PrecisionJudge:
    """The configured judge, plus LLM context precision for cases without golden ids."""

    def __init__(self, inner: Judge, scorer: EvidenceScorer) -> None:
        self.inner = inner
        self.scorer = scorer
        self.name = inner.name
        self.lexical = inner.lexical

    def warm_up(self) -> None:
        self.inner.warm_up()  # the scorer shares the inner judge's caller, so its client too

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Judgement:
        base = self.inner.judge(case, trace, log)
        if not wants_precision(case, trace):
            return base
        carried = {f.name: getattr(base, f.name) for f in fields(Judgement)}
        if not trace.passages:
            return EvidenceJudgement(**carried, context_precision=0.0)
        # Only the first judge.max_passages are scored: 100,000 passages must not make 16,667 judge calls.
        limit = self.scorer.config.max_passages
        texts = [(i, p) for i, p in enumerate(trace.passages[:limit]) if p.text]
        if not texts:
            return EvidenceJudgement(**carried, precision_note=NO_TEXT)
        result = self.scorer.score(case.question, [p.text for _, p in texts], log)
        by_rank: dict[int, PassageScore] = {texts[s.position][0]: s for s in result.scores}
        evidence = []
        for rank, passage in enumerate(trace.passages[:limit]):
            score = by_rank.get(rank)
            row: dict[str, Any] = {"id": passage.id, "rank": rank}
            if score is None:
                row.update(score=None, unscored=None, note="no passage text: counted as not relevant")
            else:
                row.update({k: v for k, v in score.as_dict().items() if k != "position"})
            evidence.append(row)
        failures = [s.unscored for s in result.scores if s.unscored]
        relevant = [rank in by_rank and (by_rank[rank].score or 0) >= RELEVANT for rank in range(len(trace.passages))]
        judgement = EvidenceJudgement(
            **carried,
            evidence=tuple(evidence),
            context_precision=None if failures else rank_weighted_precision(relevant),
        )
        extra: tuple[Unscored, ...] = ()
        if failures:
            extra = (Unscored(CONTEXT_PRECISION, f"{len(failures)} passage(s) unscored: {failures[0]}"),)
        notes = judgement.notes
        if len(trace.passages) > limit:
            notes += (
                f"context precision: the first {limit} of {len(trace.passages)} passages were judged "
                "(judge.max_passages); the rest count as not relevant",
            )
        return replace(
            judgement,
            notes=notes,
            unscored=judgement.unscored + extra,
            tokens=judgement.tokens + result.tokens,
            cost_usd=round(judgement.cost_usd + result.cost_usd, 6),
            calls=judgement.calls + result.calls,
            cache_hits=judgement.cache_hits + result.cache_hits,
        )
