"""The variables the endpoint's URL and body templates see for one request.

One place builds them, so every request (a single question, a turn of a conversation) offers the same
names: `question`, `case`, `model` (`endpoint.model`), and the conversation's `messages` (OpenAI-style
`{role, content}`, ending with the current question), `history` (the same without it), `turn` (1-based)
and `conversation_id` (null on a first turn).
"""

from __future__ import annotations

from typing import Any

from ragjudge.cases import Case


def template_context(case: Case, model: str | None, conversation: dict[str, Any] | None = None) -> dict[str, Any]:
    """`conversation` gives `messages`, `history`, `turn`, `conversation_id` where a conversation has them;
    a single question is a conversation of one turn."""
    context: dict[str, Any] = {"question": case.question, "case": case.as_template_context(), "model": model}
    context.update(conversation or {})
    if "messages" not in context:
        context["messages"] = [{"role": "user", "content": case.question}]
    context.setdefault("history", [])
    context.setdefault("turn", 1)
    context.setdefault("conversation_id", None)
    return context
