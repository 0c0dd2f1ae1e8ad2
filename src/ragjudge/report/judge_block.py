"""What the judge said of one answer, as a case's (or a turn's) `judge` block keeps it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

from pydantic import Field, field_validator

from ragjudge.metrics.names import COST_USD
from ragjudge.report.block import Block, GivenKeysBlock


class ClaimBlock(Block):
    """One factual claim of the answer and whether a retrieved passage supports it."""

    claim: str
    """The claim, as the judge extracted it from the answer."""
    supported: bool
    """Whether a passage supports the claim."""
    evidence_id: str | None
    """The id of the passage that supports it; null when none does (or the judge named none)."""
    reason: str
    """The judge's reason, in a sentence."""


class UnscoredBlock(Block):
    """A judgement that could not be made, and why: never a number."""

    judgement: str
    """What was not judged: `faithfulness`, `rubric`, `judge.<dimension>`, `reference`, `criteria.<name>` or
    `context_precision`."""
    reason: str
    """Why (a failed call, an invalid reply, ...)."""


class ReferencePointBlock(Block):
    """One point of the case's reference answer and how the answer treats it."""

    point: str
    """The point as the reference has it."""
    verdict: Literal["covered", "partial", "missing", "contradicted"]
    """How the answer treats the point."""
    quote: str
    """A verbatim excerpt of the answer for `covered`, `partial` and `contradicted`; empty for `missing`."""
    reason: str
    """The judge's reason, in a line."""


class AnswerCutBlock(Block):
    """An answer longer than `judge.max_answer_chars`: the judge saw only its start."""

    shown_chars: int
    """The characters the judge was shown: the answer's first `judge.max_answer_chars`."""
    answer_chars: int
    """The answer's whole length in characters."""


class CriterionBlock(GivenKeysBlock):
    """One of the team's criteria (`judge.criteria`) as the judge scored it."""

    score: int | float | None = None
    """1 to 5 (a median of samples may be 3.5). A score that is not a number (in a report edited by hand) reads
    as null: it is left out of the means, never a crash of `merge` or `run --baseline`."""
    reason: str = ""
    """The judge's reason; empty when it gave none."""

    @field_validator("score", mode="before")
    @classmethod
    def _a_number_or_none(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None
        return value


class EvidenceBlock(GivenKeysBlock):
    """One retrieved passage as the evidence judge scored it for LLM context precision."""

    id: str = ""
    """The passage's id."""
    rank: int = 0
    """Its place in retrieval order, from 0."""
    score: int | None = None
    """0 (irrelevant) to 5 (directly supports); 4 or more counts as relevant. Null when unscored or not judged."""
    confidence: list[float] | None = None
    """The judge's `[low, high]` confidence, within 0 to 1; null when unscored. Absent for a passage without
    text."""
    rationale: str = ""
    """The judge's reason in a sentence; absent for a passage without text."""
    key_quote: str = ""
    """The passage's most relevant sentence, verbatim; absent for a passage without text."""
    unscored: str | None = None
    """Why there is no score (a failed call, an invalid reply, a quote not in the passage); null when scored."""
    note: str = ""
    """Present only for a passage the endpoint returned without text: it counts as not relevant."""


_USAGE = ("tokens", COST_USD, "calls", "cache_hits")


class EscalationUsageBlock(GivenKeysBlock):
    """What the escalation model's calls used, for one answer."""

    calls: int = 0
    """Calls made to `judge.escalate.model`."""
    tokens: int = 0
    """Their tokens, prompt and completion."""
    cost_usd: float | None = 0.0
    """Their cost in USD; null (unknown, never 0) when the escalation model has no price in `judge.prices`."""


class JudgeBlock(GivenKeysBlock):
    """What the judge said of an answer. Each key is written only when the judgement has it (`declined`,
    `reference_points`, `answer_cut`, `criteria`, `context_precision`, `evidence`, `judged`); reports written
    before a case the judge never saw had a full block have an empty object (`{}`) there."""

    judge: str = ""
    """Who judged: `offline-lexical`, or the model's name."""
    faithfulness: float | None = None
    """Supported claims over claims, 0 to 1; null when the answer made no claim (a refusal), or unscored (see
    `unscored`)."""
    claims: list[ClaimBlock] = Field(default_factory=list)
    """The answer's claims with the judge's verdict on each; empty when there was nothing to judge."""
    scores: dict[str, int | float] = Field(default_factory=dict)
    """The rubric, by dimension (`grounding`, `relevance`, `calibration`, `citations`, `tone`): 1 to 5, a median
    of samples may be 3.5; a dimension left out was unassessable or unscored."""
    reasoning: dict[str, str] = Field(default_factory=dict)
    """The judge's reason per rubric dimension."""
    unassessable: list[str] = Field(default_factory=list)
    """Dimensions that cannot honestly be scored for this answer (grounding with no passage text, ...)."""
    unscored: list[UnscoredBlock] = Field(default_factory=list)
    """Judgements that could not be made, each with why; empty when every one was made."""
    notes: list[str] = Field(default_factory=list)
    """What a person should know about the judgement (`not judged: no usable reply`, samples dropped, ...)."""
    tokens: int = 0
    """Tokens the judge's calls used, prompt and completion."""
    cost_usd: float | None = 0.0
    """What the judge's calls cost in USD; 0 for the offline judge and for cache hits; null (unknown, never 0)
    when calls were made to a model not in `judge.prices`."""
    calls: int = 0
    """Calls made to the judge's model for this answer."""
    cache_hits: int = 0
    """Judgements read from the judge cache instead of calling the model."""
    escalation: EscalationUsageBlock | None = None
    """Of `calls`, `tokens` and `cost_usd`: what `judge.escalate.model`'s calls used (the first judgement's and
    any rejudge's); absent when no escalation call was made."""
    escalated: list[str] = Field(default_factory=list)
    """What was judged again by `judge.escalate.model` because a score was near a rule's threshold
    (`rubric by MODEL`, `faithfulness by MODEL`); empty when nothing was."""
    spread: dict[str, float] = Field(default_factory=dict)
    """Per dimension, the highest minus the lowest score across samples (`judge.samples` > 1); else empty."""
    declined: bool | None = None
    """The judge's word on whether the answer declined; present only when asked (`endpoint.refusal.judge`)."""
    reference_points: list[ReferencePointBlock] | None = None
    """The reference answer's points and the verdict on each; present only when the reference was judged."""
    answer_cut: AnswerCutBlock | None = None
    """Present when the answer was longer than `judge.max_answer_chars` and the judge saw only its start."""
    criteria: dict[str, CriterionBlock] = Field(default_factory=dict)
    """The team's criteria by name, each with its score and reason; present only when some were scored. Entries
    that are not objects (in a report edited by hand) are left out."""
    context_precision: float | None = None
    """LLM context precision (0 to 1) of an in-scope case without golden ids, the evidence judge deciding which
    passages are relevant; null when unscored or not applicable. Present only when a `context_precision` case
    rule had the model judge asked for it."""
    evidence: list[EvidenceBlock] = Field(default_factory=list)
    """The evidence judge's score for each retrieved passage, in retrieval order (at most `judge.max_passages`);
    present beside `context_precision`."""
    judged: bool | None = None
    """`false` for a case the judge never saw (no usable reply, a conversation judged turn by turn), whose other
    keys are then empty and whose `notes` say why; absent when judged."""

    @field_validator(*(k for k in _USAGE if k != COST_USD), mode="before")
    @classmethod
    def _null_is_none_used(cls, value: object) -> object:
        # The reader of free-form blocks took a null figure as 0: a report that holds one still loads. Not the
        # cost: a null cost is unknown (an unpriced model), and a report read back must keep it unknown, never 0.
        return 0 if value is None else value

    @field_validator("criteria", mode="before")
    @classmethod
    def _criteria_objects(cls, value: object) -> object:
        # Read, never a crash of `merge` or `run --baseline`: the free-form block's reader took what it could.
        if not isinstance(value, Mapping):
            return {}
        return {name: c for name, c in value.items() if isinstance(c, Mapping | CriterionBlock)}

    def was_judged(self) -> bool:
        """Whether the judge saw the answer: a block that is not empty (older reports' `{}`) nor `judged: false`."""
        return not self.is_empty() and self.judged is not False
