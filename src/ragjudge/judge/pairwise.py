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
from ragjudge.judge.asking import Asker, Tally, fresh_samples
from ragjudge.judge.cache import JudgeCache
from ragjudge.judge.chat import CallFailed, ChatCaller, Target
from ragjudge.judge.interface import LogFn
from ragjudge.judge.prompting import Message, fence_tags, inert, masked_cut, template
from ragjudge.judge.replies import schema_format, validated
from ragjudge.metrics.names import COST_USD

KIND = "pairwise"
REASON_CHARS = 300
Verdict = Literal["better", "worse", "tie"]
PAIR_ROUND = 3000
"""A pairwise round r >= 1 is asked with fresh samples named `PAIR_ROUND + r`."""
PAIR_WORSE_MARGIN = 4
"""Pairwise orders finding this run's answer worse, less those that do not, for a `worse` verdict: two rounds
that agree in both orders. One consistent round is wrong for about p^2 of the equal pairs, which on a service that
rewords every answer is a false `worse` in one PR of five; two are wrong for about p^4."""
PAIR_SETTLED_MARGIN = 2
"""Orders not finding it worse, less those that do, at which the pair is settled as not worse."""


def pair_settled(worse: int, not_worse: int) -> bool:
    """Whether a pairwise verdict's orders so far settle it (`worse`, or not worse), so no round is asked again."""
    return worse - not_worse >= PAIR_WORSE_MARGIN or not_worse - worse >= PAIR_SETTLED_MARGIN


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
    """This run's answer against main's, from both orders of one round or more."""

    verdict: Verdict | None
    """`better`, `worse` or `tie` for this run's answer; None when the judge could not say (`unscored`)."""
    consistent: bool
    """The first round's two orders gave the same verdict (what position consistency counts)."""
    reasons: tuple[str, ...]
    """The judge's reason in each order: `main first: ...`, `this run first: ...` (`round 2, main first: ...`)."""
    unscored: str | None = None
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    orders: tuple[Verdict, ...] = ()
    """This run's verdict in each order asked, round by round (main first, then this run first)."""

    @property
    def rounds(self) -> int:
        return len(self.orders) // 2

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "consistent": self.consistent, "reasons": list(self.reasons)}
        if self.unscored is not None:
            out["unscored"] = self.unscored
        if self.orders:
            out["orders"] = list(self.orders)
        out.update({"calls": self.calls, "tokens": self.tokens, COST_USD: round(self.cost_usd, 6)})
        return out


def settle(orders: Sequence[Verdict], rounds: int) -> tuple[Verdict, bool]:
    """The verdict the orders so far give, and whether it is settled (`gate.votes.pair_settled`).

    With one round allowed, a round whose orders agree is the verdict (a winner that changes with the order is a
    tie). With more, a `worse` needs PAIR_WORSE_MARGIN more orders finding it worse than not, and a verdict that
    is not worse needs PAIR_SETTLED_MARGIN more orders not finding it worse; unsettled at the last round: `tie`.
    """
    if rounds <= 1:
        return (orders[0] if orders[0] == orders[1] else "tie"), True
    worse = sum(o == "worse" for o in orders)
    not_worse = len(orders) - worse
    if not pair_settled(worse, not_worse):
        return "tie", False
    if worse > not_worse:
        return "worse", True
    better = sum(o == "better" for o in orders)
    return ("better" if better - (len(orders) - better) >= PAIR_SETTLED_MARGIN else "tie"), True


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

    def compare(
        self, question: str, points: Sequence[str], main: Side, now: Side, log: LogFn, rounds: int = 1
    ) -> PairVerdict:
        """Both orders, and again with fresh samples (`gate.votes.PAIR_ROUND + r`) while the orders leave the
        verdict unsettled, up to `rounds` rounds."""
        tally = Tally()
        orders: list[Verdict] = []
        reasons: list[str] = []
        c = self.config
        # Bounded as the rubric judge bounds its evidence: the answers, how many passages, and each passage; masked
        # before they are cut, so a secret at the bound is never half-sent.
        shown = [
            (
                masked_cut(s.answer, c.max_answer_chars),
                [masked_cut(p, c.max_passage_chars) for p in s.passages[: c.max_passages]],
            )
            for s in (main, now)
        ]
        verdict: Verdict = "tie"
        for r in range(max(1, rounds)):
            for now_first in (False, True):
                (answer_a, passages_a), (answer_b, passages_b) = shown[::-1] if now_first else shown
                messages = pairwise_messages(question, points, answer_a, passages_a, answer_b, passages_b)
                try:
                    with fresh_samples(PAIR_ROUND + r if r else 0):
                        reply = self.asker.ask(
                            self.target, KIND, messages, response_format(), parse_pairwise, 0, log, tally
                        )
                except CallFailed as exc:
                    if r:  # the rounds already asked stand: an unsettled pair is a tie, as at the last round
                        return self._verdict("tie", orders, [*reasons, f"round {r + 1}: {exc.reason}"], tally)
                    return PairVerdict(
                        None, False, tuple(reasons), exc.reason, tally.calls, tally.tokens, tally.cost, tally.cache_hits
                    )
                orders.append(_FOR_THIS_RUN[(now_first, reply.winner)])
                where = f"round {r + 1}, " if r else ""
                reasons.append(f"{where}{'this run' if now_first else 'main'} first: {reply.winner}: {reply.reason}")
            verdict, done = settle(orders, rounds)
            if done:
                break
        return self._verdict(verdict, orders, reasons, tally)

    @staticmethod
    def _verdict(verdict: Verdict, orders: list[Verdict], reasons: list[str], tally: Tally) -> PairVerdict:
        consistent = orders[0] == orders[1]
        return PairVerdict(
            verdict,
            consistent,
            tuple(reasons),
            None,
            tally.calls,
            tally.tokens,
            tally.cost,
            tally.cache_hits,
            tuple(orders),
        )
