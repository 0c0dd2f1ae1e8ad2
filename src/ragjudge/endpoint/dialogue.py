"""A conversation's turns asked of the endpoint in order, each with the conversation so far (`run`, `canary`);
and the turn that cannot be asked because the conversation outgrew the request limit."""

from __future__ import annotations

from collections.abc import Callable

from ragjudge.cases.case import Case
from ragjudge.cases.conversations import Dialogue
from ragjudge.endpoint.result import EndpointResult


class TurnOutgrown(Exception):
    """A turn whose request renders over `endpoint.max_request_bytes` only with what the service said earlier.

    That turn's error, not bad input: every turn was rendered before any call with empty answers and fit, so
    it is the service's answers (or its conversation id) that outgrew the limit, in the middle of a run."""

    def __init__(self, key: str, limit: int, answers: int) -> None:
        carried = "1 earlier answer" if answers == 1 else f"{answers} earlier answers"
        self.reason = (
            f"endpoint error: not sent: {key} renders over {limit:,} bytes with the conversation's {carried} "
            f"(endpoint.max_request_bytes: {limit:,})"
        )
        """Why the turn has no reply, as a case error reads."""
        super().__init__(self.reason)


def carries_replies(case: Case) -> bool:
    """Whether the request carries something the service said (an answer, its conversation id); a turn as it is
    rendered before any call (`cases.rehearsal`) carries neither."""
    return case.conversation_id is not None or any(exchange.answer for exchange in case.history)


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
