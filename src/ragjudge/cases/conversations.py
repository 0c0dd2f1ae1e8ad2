"""Conversations: a case with `turns:`, built into one case per turn, then asked in order with what came before.

`run`, `probe` and `canary` all step through a conversation with `Dialogue`; the endpoint templates see the
conversation so far through `template_variables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragjudge.cases.case import TURN_SEPARATOR, Case, Exchange
from ragjudge.cases.schema import CaseModel, TurnModel
from ragjudge.cases.scope import expects_answer
from ragjudge.cases.tools import ToolConditions
from ragjudge.config.judge_config import CriterionConfig


def _criteria(criteria: list[str] | dict[str, CriterionConfig]) -> dict[str, Any]:
    return {
        "criteria": tuple(criteria) if isinstance(criteria, list) else (),
        "inline_criteria": tuple(criteria.items()) if isinstance(criteria, dict) else (),
    }


def conversation(
    model: CaseModel, turns: Sequence[TurnModel], case_id: str, origin: str, place: tuple[str, int | None]
) -> Case:
    """A conversation: the case-level fields apply to every turn; a turn's own category or should_answer wins.
    `place`: the case file and the line the conversation starts on, which every turn keeps."""
    file, line = place
    built = []
    shared = _criteria(model.criteria)
    for number, turn in enumerate(turns, start=1):
        category = turn.category if turn.category is not None else model.category
        own = _criteria(turn.criteria)
        built.append(
            Case(
                id=f"{case_id}{TURN_SEPARATOR}{number}",
                question=turn.question,
                expected=tuple(turn.expected) if isinstance(turn.expected, list) else turn.expected,
                golden_context_ids=tuple(turn.golden_context_ids),
                category=category,
                should_answer=expects_answer(turn.should_answer, category),
                must_mention=tuple(turn.must_mention),
                must_not_mention=tuple(turn.must_not_mention),
                source=model.source,
                difficulty=model.difficulty,
                tags=tuple(model.tags),
                origin=f"{origin} turn {number}",
                criteria=tuple(dict.fromkeys((*shared["criteria"], *own["criteria"]))),
                inline_criteria=(*shared["inline_criteria"], *own["inline_criteria"]),
                turn=number,
                file=file,
                line=line,
                tools=ToolConditions.of(turn.tools),
            )
        )
    return Case(
        id=case_id,
        question=built[0].question,
        expected=None,
        golden_context_ids=(),
        category=model.category,
        should_answer=all(t.should_answer for t in built),
        must_mention=(),
        must_not_mention=(),
        source=model.source,
        difficulty=model.difficulty,
        tags=tuple(model.tags),
        origin=origin,
        turns=tuple(built),
        review=model.review,
        file=file,
        line=line,
    )


def template_variables(case: Case) -> dict[str, Any]:
    """What an endpoint template sees for one request: `question`, `case`, and the conversation so far.

    `messages` is the OpenAI-style list (earlier questions and the service's own answers, then this
    question); `history` is the same without this question; `ui_messages` is `messages` as the AI SDK's
    UIMessages (`{id, role, parts: [{type: "text", text}]}`); `turn` counts from 1 (1 for one question);
    `conversation_id` is what the service called the conversation last (None on a first turn)."""
    history: list[dict[str, str]] = []
    for exchange in case.history:
        history.append({"role": "user", "content": exchange.question})
        history.append({"role": "assistant", "content": exchange.answer})
    messages = [*history, {"role": "user", "content": case.question}]
    return {
        "question": case.question,
        "case": case.as_template_context(),
        "history": history,
        "messages": messages,
        "ui_messages": [
            {"id": f"{case.id}-{i}", "role": m["role"], "parts": [{"type": "text", "text": m["content"]}]}
            for i, m in enumerate(messages, 1)
        ],
        "turn": case.turn or 1,
        "conversation_id": case.conversation_id,
    }


class Dialogue:
    """A conversation as it goes in one run: each turn is asked with the turns before it, as they were answered,
    and with the conversation id the service gave last (`run`, `probe` and `canary` all step through it)."""

    def __init__(self) -> None:
        self.history: list[Exchange] = []
        self.conversation_id: str | None = None

    def ask(self, turn: Case) -> Case:
        """The turn as it is to be asked now."""
        return replace(turn, history=tuple(self.history), conversation_id=self.conversation_id)

    def answered(self, asked: Case, answer: str, conversation_id: str | None) -> None:
        """What the service answered `asked` (and what it called the conversation, if it said)."""
        self.history.append(Exchange(asked.question, answer))
        self.conversation_id = conversation_id or self.conversation_id


def rehearsal(case: Case) -> list[Case]:
    """The requests to render before any call: the case, or each turn of a conversation as it will be asked
    (with the earlier questions, and empty answers standing in for the service's)."""
    if not case.turns:
        return [case]
    return [
        replace(turn, history=tuple(Exchange(t.question, "") for t in case.turns[: turn.turn - 1]))
        for turn in case.turns
    ]
