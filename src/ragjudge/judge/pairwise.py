"""The pairwise judge: is this run's answer better or worse than main's, asked directly, in both orders.

Threshold rules miss what a reviewer asks first: a PR can make a dozen answers worse while every one stays above
its thresholds. The judge is shown the question, the reference points, and each answer beside the passages it
had, in `<answer_a>` and `<answer_b>`, and replies `{"winner": "A" | "B" | "tie", "reason": "..."}`: validated,
asked again once with the error, as every judge reply. Each pair is asked in both orders (main first, then this
run first): a winner that changes with the order is a `tie`, and the pair counts against the judge's position
consistency. A judge that always prefers the first answer shown thus produces ties, never verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.asking import Asker, Tally
from ragjudge.judge.cache import JudgeCache
from ragjudge.judge.chat import CallFailed, ChatCaller, Target
from ragjudge.judge.interface import LogFn
from ragjudge.judge.prompting import Message, fence_tags, inert, template
from ragjudge.judge.replies import schema_format, validated

KIND = "pairwise"
REASON_CHARS = 300
Verdict = Literal["better", "worse", "tie"]


class PairwiseReply(BaseModel):
    """The judge's reply, as it must be."""

    model_config = ConfigDict(extra="forbid")

    winner: Literal["A", "B", "tie"]
    """Which answer serves the customer better, or `tie`."""
    reason: str
    """One line: what decided it."""

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        line = " ".join(value.split())
        if not line:
            raise ValueError("the reason is empty: say in one line what decided it")
        return line[:REASON_CHARS]


def response_format() -> dict[str, Any]:
    return schema_format("ragjudge_pairwise", PairwiseReply)


def parse_pairwise(text: str) -> PairwiseReply:
    """The reply, validated; ReplyError says what is wrong."""
    return validated(text, PairwiseReply)


_TAGS = fence_tags("question", "point", "passage", "answer_a", "answer_b")


def _inert(text: str) -> str:
    return inert(text, _TAGS)


def pairwise_messages(
    question: str,
    points: Sequence[str],
    answer_a: str,
    passages_a: Sequence[str],
    answer_b: str,
    passages_b: Sequence[str],
) -> list[Message]:
    user = template("pairwise_user.j2").render(
        question=_inert(question),
        points=[_inert(p) for p in points],
        answer_a=_inert(answer_a),
        passages_a=[_inert(p) for p in passages_a],
        answer_b=_inert(answer_b),
        passages_b=[_inert(p) for p in passages_b],
    )
    return [{"role": "system", "content": template("pairwise_system.j2").render()}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Side:
    """One version's answer and the passages it had."""

    answer: str
    passages: tuple[str, ...] = ()


@dataclass(frozen=True)
class PairVerdict:
    """This run's answer against main's, from both orders."""

    verdict: Verdict | None
    """`better`, `worse` or `tie` for this run's answer; None when the judge could not say (`unscored`)."""
    consistent: bool
    """Both orders gave the same verdict."""
    reasons: tuple[str, ...]
    """The judge's reason in each order: `main first: ...`, `this run first: ...`."""
    unscored: str | None = None
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "consistent": self.consistent, "reasons": list(self.reasons)}
        if self.unscored is not None:
            out["unscored"] = self.unscored
        return out


_FOR_THIS_RUN: dict[tuple[bool, str], Verdict] = {
    # (this run shown first, winner) -> this run's verdict
    (False, "A"): "worse",
    (False, "B"): "better",
    (True, "A"): "better",
    (True, "B"): "worse",
    (False, "tie"): "tie",
    (True, "tie"): "tie",
}


class PairwiseJudge:
    """Asks the model judge over the `openai` SDK; thread-safe."""

    def __init__(self, config: JudgeConfig, caller: ChatCaller | None = None) -> None:
        self.config = config
        self.asker = Asker(config, caller or ChatCaller(config), JudgeCache(config.cache))
        self.target = Target(config.model, config.base_url)

    def compare(self, question: str, points: Sequence[str], main: Side, now: Side, log: LogFn) -> PairVerdict:
        tally = Tally()
        verdicts: list[Verdict] = []
        reasons: list[str] = []
        c = self.config
        # Bounded as the rubric judge bounds its evidence: the answers, how many passages, and each passage.
        shown = [
            (s.answer[: c.max_answer_chars], [p[: c.max_passage_chars] for p in s.passages[: c.max_passages]])
            for s in (main, now)
        ]
        for now_first in (False, True):
            (answer_a, passages_a), (answer_b, passages_b) = shown[::-1] if now_first else shown
            messages = pairwise_messages(question, points, answer_a, passages_a, answer_b, passages_b)
            try:
                reply = self.asker.ask(self.target, KIND, messages, response_format(), parse_pairwise, 0, log, tally)
            except CallFailed as exc:
                return PairVerdict(
                    None, False, tuple(reasons), exc.reason, tally.calls, tally.tokens, tally.cost, tally.cache_hits
                )
            verdicts.append(_FOR_THIS_RUN[(now_first, reply.winner)])
            reasons.append(f"{'this run' if now_first else 'main'} first: {reply.winner}: {reply.reason}")
        consistent = verdicts[0] == verdicts[1]
        verdict: Verdict = verdicts[0] if consistent else "tie"
        return PairVerdict(
            verdict, consistent, tuple(reasons), None, tally.calls, tally.tokens, tally.cost, tally.cache_hits
        )
