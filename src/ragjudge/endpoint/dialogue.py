"""A conversation's turns asked of the endpoint in order, each with the conversation so far (`run`, `canary`)."""

from __future__ import annotations

from collections.abc import Callable

from ragjudge.cases import Case, Dialogue
from ragjudge.endpoint.result import EndpointResult


def ask_turns(case: Case, ask: Callable[[Case], EndpointResult | None]) -> list[tuple[Case, EndpointResult]] | None:
    """Each turn as it was asked and its result, in order; None when `ask` gives None (the run was stopped).

    A turn with no reply ends the conversation: the next turn would be asked without the answer it follows."""
    asked: list[tuple[Case, EndpointResult]] = []
    dialogue = Dialogue()
    for turn in case.turns:
        this = dialogue.ask(turn)
        result = ask(this)
        if result is None:
            return None
        asked.append((this, result))
        if result.trace is None:
            break
        dialogue.answered(this, result.trace.answer, result.trace.conversation_id)
    return asked
