"""The offline judge: a deterministic, lexical stand-in that needs no model.

A claim (a sentence of the answer) counts as supported when at least
`min_overlap` of its tokens (words; character bigrams for CJK) appear in one
retrieved passage. It cannot tell a paraphrase from a contradiction, so it is
a free pre-check and a demo judge, not a substitute for a model judge; the
rubric dimensions are reported as unassessable.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragjudge.cases.case import Case
from ragjudge.config.judge_config import CriterionConfig
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.criteria import criteria_for
from ragjudge.judge.interface import (
    NEGATIVE_DIMENSIONS,
    NO_SOURCES_NOTE,
    RUBRIC_DIMENSIONS,
    Claim,
    Judgement,
    LogFn,
    Unscored,
)
from ragjudge.judge.lexical_reference import judge_points
from ragjudge.judge.reference import split_reference
from ragjudge.judge.text import split_claims, tokens
from ragjudge.metrics.names import FAITHFULNESS

NAME = "offline-lexical"
NOTE = "offline judge: lexical overlap only (words and CJK bigrams); rubric dimensions not assessed"


class OfflineJudge:
    """Lexical claim support; deterministic and free."""

    name = NAME
    lexical = True

    def __init__(
        self,
        min_overlap: float = 0.5,
        reference: bool = True,
        criteria: Mapping[str, CriterionConfig] | None = None,
    ) -> None:
        self.min_overlap = min_overlap
        self.reference = reference
        """`judge.reference`: check answers against their reference (see `lexical_reference`)."""
        self.criteria = dict(criteria or {})

    def warm_up(self) -> None:
        return

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Judgement:
        dims = RUBRIC_DIMENSIONS if case.should_answer else NEGATIVE_DIMENSIONS
        claims = [] if trace.refused else split_claims(trace.answer)
        # Passages the service does not expose are unknown: no claim is checked against nothing (that would be 0).
        unknown = trace.passages_unknown and bool(claims)
        if unknown:
            claims = []
        evidence = [(p.id, tokens(p.text)) for p in trace.evidence]
        verdicts = [self._claim(text, evidence) for text in claims]
        faithfulness = None
        if verdicts:
            faithfulness = sum(c.supported for c in verdicts) / len(verdicts)
        answered = case.should_answer and not trace.refused and bool(trace.answer.strip())
        points = None
        given = split_reference(case.expected) if case.expected is not None else ()
        if answered and self.reference and given:
            points = judge_points(given, trace.answer)  # the points the model judge is given, split the same way
        # A criterion is a question about meaning: words cannot score it, and a rule on it must not pass.
        unscored = tuple(
            Unscored(f"criteria.{c.name}", "the offline judge cannot score criteria (set judge.provider: openai)")
            for c in (criteria_for(case, self.criteria) if answered else ())
        )
        judgement = Judgement(
            judge=NAME,
            faithfulness=faithfulness,
            claims=tuple(verdicts),
            unassessable=dims,
            notes=(NOTE, NO_SOURCES_NOTE) if unknown else (NOTE,),
            reference_points=points,
            unscored=unscored,
        )
        log(
            {
                "judge_kind": FAITHFULNESS,
                "model": NAME,
                "claims": len(verdicts),
                "supported": sum(c.supported for c in verdicts),
                FAITHFULNESS: faithfulness,
                "cache_hit": False,
            }
        )
        return judgement

    def _claim(self, text: str, evidence: list[tuple[str, set[str]]]) -> Claim:
        wanted = tokens(text)
        best_id, best = None, 0.0
        for pid, have in evidence:
            share = len(wanted & have) / len(wanted) if wanted else 0.0
            if share > best:
                best_id, best = pid, share
        supported = best >= self.min_overlap
        if not evidence:
            reason = "no passage text was retrieved"
        elif supported:
            reason = f"{best:.0%} of its words appear in passage {best_id}"
        else:
            reason = f"at most {best:.0%} of its words appear in any passage (needs {self.min_overlap:.0%})"
        return Claim(claim=text, supported=supported, evidence_id=best_id if supported else None, reason=reason)
