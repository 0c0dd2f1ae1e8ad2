"""Whether the answer read from a reply looks like something else: the question echoed back, a retrieved
passage's text verbatim, or an id.

Each is a mapping mistake (hayhooks' `answers.0.query`, a retriever's `documents.0.content`, an OpenAI
completion's `id`) that a run would otherwise score as an answer. Checked where the reply is read, while the
passages' text and the reply itself are still at hand.
"""

from __future__ import annotations

from typing import Any

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.reply import locate
from ragjudge.endpoint.suggestion import looks_like_id, same_text, suggest, through_passages
from ragjudge.endpoint.trace import AnswerFlag, AnswerFlagKind, Trace

_WHAT: dict[AnswerFlagKind, str] = {
    "question": "the echoed question",
    "passage": "a retrieved passage's text verbatim",
    "id": "an id (a UUID, a hex hash or a completion id), not text",
}


def check_answer(data: Any, mapping: ResponseMapping, trace: Trace, question: str | None) -> AnswerFlag | None:
    """A flag when the answer is the question, a passage's text or shaped like an id; None otherwise."""
    answer = trace.answer
    if not answer.strip() or not isinstance(data, dict):
        return None
    _, path = locate(data, mapping, "answer")
    inside = through_passages(data, path)
    kind: AnswerFlagKind | None = None
    if question is not None and same_text(answer, question):
        kind = "question"
    elif inside or any(p.text and same_text(answer, p.text) for p in trace.passages):
        kind = "passage"
    elif looks_like_id(answer):
        kind = "id"
    if kind is None:
        return None
    hint = suggest(data, "", "answer", question)
    return AnswerFlag(kind, path, hint if hint != path else None, from_passages=inside)


def is_certain(flag: AnswerFlag) -> bool:
    """A flag that is a mapping mistake in any one reply; a passage's text alone may be a quote (see `AnswerFlag`)."""
    return flag.kind != "passage" or flag.from_passages


def describe_flag(flag: AnswerFlag) -> str:
    """`endpoint.response.answer reads the echoed question (answers.0.query)`."""
    what = "a retrieved passage, not the generated answer" if flag.from_passages else _WHAT[flag.kind]
    return f"endpoint.response.answer reads {what} ({flag.path})"


def did_you_mean(flag: AnswerFlag) -> str:
    if flag.hint:
        return f": did you mean {flag.hint}?"
    return ": map endpoint.response.answer to the generated answer (`ragjudge probe` shows the reply)"


def most(count: int, replies: int) -> bool:
    """More than half of the replies, and at least two: when a passage's text as the answer is no quote."""
    return count >= 2 and count * 2 > replies
