"""What a stream looks like, named from its first events: for probe's first suggestion and a run's warning.

Nothing is read by it: a stream is read by the protocol declared (`endpoint/protocols.py`); this only says which
built-in protocol would read an undeclared one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Recognised:
    """What a stream looks like, and the wiring that reads it."""

    name: str
    """A built-in protocol's name, or `named-events` (event names no built-in protocol uses)."""
    label: str
    """How probe and the run's warning call it."""
    events: tuple[str, ...] = field(default=())
    """For `named-events`: the event names seen, in order of first appearance."""


LABELS = {
    "openai-chat": "OpenAI Chat Completions chunks",
    "openai-responses": "OpenAI Responses API events",
    "ai-sdk": "the AI SDK's UI message stream",
    "langserve": "LangServe events",
    "ag-ui": "AG-UI events",
}

_AG_UI_TYPES = frozenset(
    {
        "RUN_STARTED",
        "RUN_FINISHED",
        "RUN_ERROR",
        "STEP_STARTED",
        "STEP_FINISHED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TEXT_MESSAGE_CHUNK",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TOOL_CALL_CHUNK",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "MESSAGES_SNAPSHOT",
        "REASONING_START",
        "REASONING_MESSAGE_CONTENT",
        "THINKING_START",
        "CUSTOM",
        "RAW",
    }
)
"""AG-UI's event types (its JSON `type`), as its core schema names them."""

_AI_SDK_TYPES = frozenset(
    {
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "source-document",
        "source-url",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "error",
        "abort",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "message-metadata",
    }
)


def recognise(events: Iterable[tuple[str, Any]], header: str | None = None) -> Recognised | None:
    """What a stream's events (name, decoded JSON or None) look like; None when nothing is recognised.

    `header` is the reply's `x-vercel-ai-ui-message-stream` header, which names the AI SDK's stream outright."""
    if header:
        return Recognised("ai-sdk", LABELS["ai-sdk"])
    names: list[str] = []
    for name, data in events:
        if name and name not in names:
            names.append(name)
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if data.get("object") == "chat.completion.chunk" or _is_chunk(data):
            return Recognised("openai-chat", LABELS["openai-chat"])
        if isinstance(kind, str) and kind in _AG_UI_TYPES:
            return Recognised("ag-ui", LABELS["ag-ui"])
        if isinstance(kind, str) and kind.startswith("response."):
            return Recognised("openai-responses", LABELS["openai-responses"])
        if isinstance(kind, str) and (kind in _AI_SDK_TYPES or kind.startswith("data-")):
            return Recognised("ai-sdk", LABELS["ai-sdk"])
    if names and set(names) <= {"metadata", "data", "end", "error"} and "data" in names:
        return Recognised("langserve", LABELS["langserve"])
    if names:
        return Recognised("named-events", "named events (" + ", ".join(names[:6]) + ")", tuple(names))
    return None


def _is_chunk(data: dict[str, Any]) -> bool:
    choices = data.get("choices")
    return isinstance(choices, list) and bool(choices) and isinstance(choices[0], dict) and "delta" in choices[0]
