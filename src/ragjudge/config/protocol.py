"""`endpoint.protocol`: how a streamed reply's events are read, declared rather than guessed from their shape.

A protocol names its events by what they are: which carry answer text, what ends the stream, what marks a
failure and where its message is, which carry passages, the conversation id, usage and the finish reason. The
built-in ones (`endpoint/protocols.py`) are written in this same vocabulary; a team declares its own here.

Every marker picks events with the same four tests, all of which must hold: `event` (the SSE event name),
`data` (the event's data text exactly, such as `[DONE]`), `where` (JSON fields by dotted path, each equal to a
value) and `has` (a dotted path holding a non-empty value).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ragjudge.config.section import Section

BUILTIN_PROTOCOLS = ("openai-chat", "openai-responses", "ai-sdk", "langserve", "ag-ui")
"""The protocols `endpoint.protocol` (and the preset of the same name) can name."""

BuiltinProtocol = Literal["openai-chat", "openai-responses", "ai-sdk", "langserve", "ag-ui"]

Scalar = str | int | float | bool | None
MAX_MARKERS = 32
"""The most markers one key of a declared protocol may list."""

FailureShapeName = Literal[
    "error-event", "error-object", "type-error", "run-error", "response-failed", "finish-reason-error"
]
"""The failure shapes every stream reader recognises (`endpoint/failures.py`), by the name
`endpoint.ignore_failure_shapes` turns one off with."""


def _dotted(path: str) -> str:
    """A dotted path, or a ValueError naming it: a path with an empty part (`a..b`, `.a`, `a.`) leads nowhere, so a
    marker written so would never fire (an error marker that never fires lets an outage pass)."""
    if not path or any(not part for part in path.split(".")):
        raise ValueError(f"{path!r} is not a dotted path (a part is empty)")
    return path


class Marker(Section):
    """Which events: every test given must hold (at least one is given)."""

    event: str | None = Field(None, description="The SSE `event:` name the event must have.")
    data: str | None = Field(
        None, description="The event's data text, exactly (leading and trailing blanks aside): `[DONE]`."
    )
    where: dict[str, Scalar] = Field(
        default_factory=dict,
        description="JSON fields the event must have, by dotted path, each equal to its value: `{type: finish}`.",
    )
    has: str | None = Field(None, description="A dotted path that must hold a non-empty value in the event's JSON.")

    @model_validator(mode="after")
    def _some_test(self) -> Marker:
        if self.event is None and self.data is None and not self.where and self.has is None:
            raise ValueError("give at least one of event, data, where, has: a marker with none would match every event")
        return self

    @field_validator("where")
    @classmethod
    def _paths(cls, value: dict[str, Scalar]) -> dict[str, Scalar]:
        for path in value:
            _dotted(path)
        return value

    @field_validator("has")
    @classmethod
    def _has(cls, value: str | None) -> str | None:
        return None if value is None else _dotted(value)


class Reading(Marker):
    """Events that carry a value, and where it is in them."""

    path: str | None = Field(
        None, description="Dotted path to the value in the event's JSON; unset: the event's data text itself."
    )

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return None if value is None else _dotted(value)


class TextReading(Reading):
    """Events that carry answer text. `event` or `where` alone may pick them (`{event: token}` reads every
    `token` event's data); with neither, every event is read at `path`."""

    @model_validator(mode="after")
    def _some_test(self) -> TextReading:
        if self.event is None and self.data is None and not self.where and self.has is None and self.path is None:
            raise ValueError("give a path, or an event or where that picks the text events")
        return self


class EndMarker(Marker):
    """An event that ends the stream."""

    until_close: bool = Field(
        False,
        description="The stream is complete here but may send more (usage, say): read on until the connection "
        "closes. Unset: reading stops at this event.",
    )


class ErrorMarker(Marker):
    """An event that marks a failure: the case is an error quoting its message, never an answer."""

    message: str | None = Field(
        None,
        description="Dotted path to the failure's message; unset: the event's `errorText`, `message`, `detail` or "
        "`error`, else its data.",
    )

    @field_validator("message")
    @classmethod
    def _message(cls, value: str | None) -> str | None:
        return None if value is None else _dotted(value)


class PassageSource(Reading):
    """Events that carry passages, collected across every matching event: the value at `path` is one passage
    (an object) or a list of them."""

    id: str | None = Field(None, description="Path to the passage's id inside one passage.")
    text: str | None = Field(None, description="Path to the passage's text inside one passage.")
    title: str | None = Field(None, description="Path to the passage's title inside one passage.")

    @field_validator("id", "text", "title")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return None if value is None else _dotted(value)


class ToolSource(Reading):
    """Events that carry tool calls: at `path` one call or a list of them (unset: the event itself), each read at
    the paths below. Calls are kept apart by `id`; every event of one call adds what it carries."""

    id: str | None = Field(None, description="Path to the call's id inside one call (events of one call share it).")
    name: str | None = Field(None, description="Path to the tool's name inside one call.")
    args: str | None = Field(
        None, description="Path to the call's arguments: the next piece of their JSON text, or (`whole`) all of them."
    )
    whole: bool = Field(False, description="`args` holds the whole arguments, not the next piece.")
    result: str | None = Field(None, description="Path to the call's result inside one call.")

    @field_validator("id", "name", "args", "result")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return None if value is None else _dotted(value)


class ProtocolConfig(Section):
    """A stream protocol, in the vocabulary of the built-in ones. Each key takes one marker or a list."""

    extends: BuiltinProtocol | None = Field(
        None,
        description="A built-in protocol to start from: the keys given here replace its own (e.g. the AI SDK's, "
        "with passages from your `data-*` part).",
    )
    text: list[TextReading] | None = Field(
        None, description="Events carrying answer text, appended in order. Needed unless `extends` gives it."
    )
    end: list[EndMarker] | None = Field(
        None,
        description="What ends the stream. Declared, a close before it is a cut stream (a case error); unset, "
        "the stream ends when the connection closes.",
    )
    error: list[ErrorMarker] | None = Field(None, description="What marks a failure, and where its message is.")
    passages: list[PassageSource] | None = Field(None, description="Events carrying the retrieved passages.")
    reasoning: list[Reading] | None = Field(
        None, description="Events carrying a model's reasoning: kept in the trace, never in the answer or the TTFT."
    )
    refusal: list[Reading] | None = Field(
        None, description="Events carrying the model's refusal text: appended to the answer, which reads as declined."
    )
    conversation_id: list[Reading] | None = Field(
        None, description="Events carrying the conversation id (the last one read wins)."
    )
    usage: list[Reading] | None = Field(None, description="Events carrying token usage (the last one read wins).")
    finish_reason: list[Reading] | None = Field(
        None, description="Events carrying the finish reason (the last one read wins)."
    )
    tools: list[ToolSource] | None = Field(
        None,
        description="Events carrying tool calls (name, arguments, result): in the trace and for a case's `tools:` "
        "conditions, never answer text.",
    )

    @field_validator(
        "text",
        "end",
        "error",
        "passages",
        "reasoning",
        "refusal",
        "conversation_id",
        "usage",
        "finish_reason",
        "tools",
        mode="before",
    )
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        value = [value] if isinstance(value, dict) else value
        # Every event is tried against every marker: 3,000 markers over a chunk of 3,000 events ran 8-15 s past
        # the call's timeout (issue 40 item 12). No real protocol needs more than a few a key.
        if isinstance(value, list) and len(value) > MAX_MARKERS:
            raise ValueError(f"{len(value)} markers: at most {MAX_MARKERS} a key (list what marks the event once)")
        return value

    @model_validator(mode="after")
    def _reads_text(self) -> ProtocolConfig:
        if self.extends is None and not self.text:
            raise ValueError("text: say which events carry the answer text (or extend a built-in protocol)")
        return self


UNION_TAGS = frozenset({"named", "declared"})
"""The tags `ProtocolSetting` gives its two forms; error locations leave them out (`endpoint.protocol.end.0`)."""

ProtocolSetting = Annotated[
    Annotated[BuiltinProtocol, Tag("named")] | Annotated[ProtocolConfig, Tag("declared")],
    Discriminator(lambda value: "named" if isinstance(value, str) else "declared"),
]
"""`endpoint.protocol`: a built-in protocol's name, or a declared one (a mapping)."""
