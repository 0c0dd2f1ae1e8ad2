"""The evidence scoring judge: how well each passage supports a claim, 0-5, auditable.

Per passage the judge gives a score with fixed anchors (5 directly supports, 4 strongly
consistent, 3 partially relevant, 2 weakly inconsistent, 1 directly contradicts, 0 irrelevant),
a confidence interval `[lo, hi]` within 0..1, a one-sentence rationale and a verbatim `key_quote`
(so that a score rests on words the passage really holds, not on a paraphrase).

A reply is validated before it is believed: one entry per passage, `passage_index` 0-based in
the order shown, integers in range, a well-formed interval. A reply that fails is asked once
more with the validation error appended; if it fails again, every passage of that call is
unscored with the reason. Then ragjudge checks each `key_quote` against its passage (NFKC,
whitespace ignored): a quote that is not there makes that passage's score unscored, never a
number. Passages go at most `MAX_BATCH` to a call: in a long list a judge's scores drift with
position and length.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.asking import Asker, Tally
from ragjudge.judge.budget import Budget
from ragjudge.judge.cache import JudgeCache
from ragjudge.judge.interface import LogFn
from ragjudge.judge.openai_judge import CallFailed, ChatCaller, Target
from ragjudge.judge.prompting import Message, fence_tags, inert, masked_cut, template
from ragjudge.judge.replies import ReplyError, schema_format, validated

MAX_BATCH = 6
"""Passages per judge call: more than 5-7 in one list invites position and length effects."""
RELEVANT = 4
"""A passage scoring at least this supports the claim (\"strongly consistent\" or better)."""
KIND = "evidence"


class PassageReply(BaseModel):
    """The judge's verdict on one passage, as it must appear in the reply."""

    model_config = ConfigDict(extra="forbid")

    passage_index: int = Field(strict=True)
    """0-based position of the passage in the list shown."""
    score: int = Field(strict=True)
    """0 (irrelevant) to 5 (directly supports)."""
    confidence: list[float]
    """`[lo, hi]` within 0..1, lo <= hi."""
    rationale: str
    """One sentence."""
    key_quote: str
    """The passage's most relevant sentence, verbatim."""

    @field_validator("score")
    @classmethod
    def _score_range(cls, value: int) -> int:
        if not 0 <= value <= 5:
            raise ValueError(f"must be an integer from 0 to 5, got {value}")
        return value

    @field_validator("confidence")
    @classmethod
    def _interval(cls, value: list[float]) -> list[float]:
        if len(value) != 2:
            raise ValueError(f"must be two numbers [low, high], got {len(value)}")
        lo, hi = value
        if not (0.0 <= lo <= 1.0 and 0.0 <= hi <= 1.0):
            raise ValueError("both bounds must lie between 0.0 and 1.0")
        if lo > hi:
            raise ValueError(f"low {lo:g} is above high {hi:g}")
        return value

    @field_validator("rationale", "key_quote")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class EvidenceReply(BaseModel):
    """`{"scores": [...], "summary": "..."}`."""

    model_config = ConfigDict(extra="ignore")  # an unknown top-level key is ignored; the log names it

    scores: list[PassageReply]
    summary: str

    @model_validator(mode="after")
    def _one_per_passage(self) -> EvidenceReply:
        seen: set[int] = set()
        for i, item in enumerate(self.scores):
            if item.passage_index in seen:
                raise ValueError(f"scores.{i}: passage {item.passage_index} is scored twice")
            seen.add(item.passage_index)
        return self


def response_format() -> dict[str, Any]:
    """The `json_schema` response_format, generated from the model the reply is checked against."""
    return schema_format("ragjudge_evidence", EvidenceReply)


def parse_evidence(text: str, count: int) -> list[PassageReply]:
    """The reply's per-passage verdicts in passage order; ReplyError says what is wrong."""
    reply = validated(text, EvidenceReply)
    for i, item in enumerate(reply.scores):
        if not 0 <= item.passage_index < count:
            raise ReplyError(
                f"scores.{i}.passage_index: {item.passage_index} is not a passage shown (0 to {count - 1})"
            )
    missing = sorted(set(range(count)) - {s.passage_index for s in reply.scores})
    if missing:
        raise ReplyError(f"scores: no score for passage(s) {', '.join(map(str, missing))}; score every passage")
    return sorted(reply.scores, key=lambda s: s.passage_index)


def _normal(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def quote_in(quote: str, passage: str) -> bool:
    """Whether `quote` is a verbatim part of `passage`, up to Unicode (NFKC) form and whitespace."""
    needle = _normal(quote)
    return bool(needle) and needle in _normal(passage)


_TAGS = fence_tags("passage", "claim")


def _inert(text: str) -> str:
    return inert(text, _TAGS)


def evidence_messages(claim: str, passages: Sequence[str]) -> list[Message]:
    system = template("evidence_system.j2").render()
    user = template("evidence_user.j2").render(claim=_inert(claim), passages=[_inert(p) for p in passages])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class PassageScore:
    """The judge's score for one passage, or why there is none."""

    position: int
    """0-based position in the list that was scored."""
    score: int | None
    """0-5; None when unscored."""
    confidence: tuple[float, float] | None = None
    rationale: str = ""
    key_quote: str = ""
    unscored: str | None = None
    """Why there is no score: a failed call, an invalid reply, a quote not found in the passage."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "score": self.score,
            "confidence": list(self.confidence) if self.confidence else None,
            "rationale": self.rationale,
            "key_quote": self.key_quote,
            "unscored": self.unscored,
        }


@dataclass(frozen=True)
class EvidenceResult:
    """One score per passage, in the order given, and what it cost."""

    scores: tuple[PassageScore, ...]
    calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


class EvidenceScorer:
    """The evidence judge over the `openai` SDK; thread-safe.

    `caller` may be shared with the rubric judge so that one 429 slows both and the
    response-format fallback is learned once per model.
    """

    def __init__(self, config: JudgeConfig, caller: ChatCaller | None = None, spend: Budget | None = None) -> None:
        self.config = config
        self.caller = caller or ChatCaller(config)
        self.asker = Asker(config, self.caller, JudgeCache(config.cache), spend)
        self.target = Target(config.model, config.base_url)
        self.name = config.model

    def score(self, claim: str, passages: Sequence[str], log: LogFn) -> EvidenceResult:
        """Score every passage for `claim`; passages are trimmed to `judge.max_passage_chars`."""
        shown = [masked_cut(p, self.config.max_passage_chars) for p in passages]
        tally = Tally()
        scores: list[PassageScore] = []
        for start in range(0, len(shown), MAX_BATCH):
            batch = shown[start : start + MAX_BATCH]
            scores.extend(self._batch(claim, batch, start, log, tally))
        return EvidenceResult(tuple(scores), tally.calls, tally.cache_hits, tally.tokens, round(tally.cost, 6))

    def _batch(self, claim: str, passages: list[str], offset: int, log: LogFn, tally: Tally) -> list[PassageScore]:
        messages = evidence_messages(claim, passages)
        try:
            replies: list[PassageReply] = self.asker.ask(
                self.target,
                KIND,
                messages,
                response_format(),
                lambda text: parse_evidence(text, len(passages)),
                0,
                log,
                tally,
                label="evidence judge",
            )
        except CallFailed as exc:
            return [PassageScore(offset + i, None, unscored=exc.reason) for i in range(len(passages))]
        out = []
        for reply, text in zip(replies, passages, strict=True):
            position = offset + reply.passage_index
            lo, hi = reply.confidence
            if not (quote_in(reply.key_quote, text) or quote_in(reply.key_quote, _inert(text))):
                shown = " ".join(reply.key_quote.split())[:120]
                reason = f'key_quote is not in passage {position}: "{shown}"'
                out.append(PassageScore(position, None, (lo, hi), reply.rationale, reply.key_quote, reason))
                continue
            out.append(PassageScore(position, reply.score, (lo, hi), reply.rationale.strip(), reply.key_quote))
        return out
