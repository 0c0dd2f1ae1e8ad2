"""Stream protocols as data: which events carry the answer, which end the stream, which mark a failure.

Each built-in protocol is written here in the vocabulary a team uses to declare its own
(`config/protocol.py`), and `stream.Assembly` is the one reader of all of them. Nothing is guessed from a
stream's shape: a stream of an undeclared protocol is read by `generic` (the mapped `answer_delta`, ending
when the connection closes), and `recognition.recognise` only names what a stream looks like, for probe's
suggestion and a run's warning.

Tool calls are read the same way, by `tools` selectors: where a call's id, name, argument text (a delta, or
whole) and result are. Every reader knows every built-in protocol's tool-call events (`TOOL_EVENTS`), so no
reader, declared or not, ever takes a tool call's arguments for answer text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.config.protocol import BUILTIN_PROTOCOLS, Marker, ProtocolConfig, Scalar
from ragjudge.endpoint.paths import dig, is_missing, put
from ragjudge.endpoint.reply import ReplyShapeError


@dataclass(frozen=True)
class Selector:
    """Which events (every test given must hold) and what to read in them."""

    event: str | None = None
    """The SSE event name."""
    data: str | None = None
    """The event's data text, exactly (stripped)."""
    where: tuple[tuple[str, Scalar], ...] = ()
    """JSON fields by dotted path, each equal to its value."""
    has: str | None = None
    """A dotted path that must hold a non-empty value."""
    path: str | None = None
    """Where the value is (for an error: its message); None: the event's data text (an error: its message keys)."""
    id: str | None = None
    text: str | None = None
    title: str | None = None
    """Per-passage paths, for passage sources; `id` is also a tool call's id (and a text event's message id)."""
    name: str | None = None
    """A tool call's name, inside the item."""
    args: str | None = None
    """A tool call's arguments, inside the item: a piece of their JSON text, or (`whole`) all of it."""
    result: str | None = None
    """A tool call's result, inside the item."""
    whole: bool = False
    """The arguments are the whole of them, not the next piece."""
    until_close: bool = False
    """An end that completes the stream but lets it send more: reading goes on to the close."""
    reason: str = "the stream sent an error event"
    """How an error marker's reason opens (built-in protocols name the failure they read)."""
    shape: str | None = None
    """For a built-in failure marker: the common failure shape it is an instance of (`endpoint/failures.py`), so
    that `endpoint.ignore_failure_shapes` turns it off with the gate's own marker of that shape."""


@dataclass(frozen=True)
class Protocol:
    """One stream protocol."""

    name: str
    """A built-in name, `declared`, or `generic` (no protocol declared)."""
    text: tuple[Selector, ...] = ()
    ends: tuple[Selector, ...] = ()
    errors: tuple[Selector, ...] = ()
    passages: tuple[Selector, ...] = ()
    reasoning: tuple[Selector, ...] = ()
    refusal: tuple[Selector, ...] = ()
    conversation_id: tuple[Selector, ...] = ()
    usage: tuple[Selector, ...] = ()
    finish_reason: tuple[Selector, ...] = ()
    tools: tuple[Selector, ...] = ()
    """Events carrying tool calls: at `path` one call or a list of them (unset: the event itself), read at `id`,
    `name`, `args`, `result`. A protocol with none exposes no tool calls (their conditions are unknown)."""
    roles: tuple[Selector, ...] = ()
    """Events that open a message: its id at `id`, its role at `path`; text of a message whose role is not
    `assistant` is not answer text."""
    end_required: bool = True
    """A close before an end is a cut stream. False for `generic`, whose ends only stop the reading."""
    json_events: bool = True
    """Every event that no `data` marker picks must be JSON: anything else is a broken stream, not answer text."""

    @property
    def generic(self) -> bool:
        return self.name == "generic"


def _s(**kwargs: Any) -> Selector:
    where = kwargs.pop("where", {})
    return Selector(where=tuple(where.items()), **kwargs)


DONE = _s(data="[DONE]")

BUILTIN: dict[str, Protocol] = {
    # Chat Completions chunks. hayhooks 2.1 closes after the chunk with a finish_reason and never sends `[DONE]`,
    # so that chunk completes the stream too; the usage chunk may follow it, so reading goes on to the close.
    "openai-chat": Protocol(
        name="openai-chat",
        text=(_s(path="choices.0.delta.content"),),
        ends=(DONE, _s(has="choices.0.finish_reason", until_close=True)),
        errors=(_s(has="error", path="error", shape="error-object"),),
        reasoning=(_s(path="choices.0.delta.reasoning_content"),),
        refusal=(_s(path="choices.0.delta.refusal"),),
        # `tool_calls` deltas, assembled by their index: the first names the call, the rest add argument text.
        tools=(
            _s(
                has="choices.0.delta.tool_calls",
                path="choices.0.delta.tool_calls",
                id="index",
                name="function.name",
                args="function.arguments",
            ),
        ),
        usage=(_s(has="usage", path="usage"),),
        finish_reason=(_s(has="choices.0.finish_reason", path="choices.0.finish_reason"),),
    ),
    # The Responses API's typed events (each also names itself in `event:`; the JSON `type` is read).
    "openai-responses": Protocol(
        name="openai-responses",
        text=(_s(where={"type": "response.output_text.delta"}, path="delta"),),
        ends=(_s(where={"type": "response.completed"}),),
        errors=(
            _s(
                where={"type": "response.failed"},
                path="response.error.message",
                reason="the response failed",
                shape="response-failed",
            ),
            _s(
                where={"type": "response.incomplete"},
                path="response.incomplete_details.reason",
                reason="the response is incomplete",
            ),
            _s(where={"type": "error"}, path="message", reason="the stream sent an error event", shape="type-error"),
        ),
        passages=(
            _s(
                where={"type": "response.output_item.done", "item.type": "file_search_call"},
                has="item.results",
                path="item.results",
                id="file_id",
                text="text",
                title="filename",
            ),
        ),
        reasoning=(_s(where={"type": "response.reasoning_summary_text.delta"}, path="delta"),),
        refusal=(_s(where={"type": "response.refusal.delta"}, path="delta"),),
        tools=(
            _s(
                where={"type": "response.output_item.added", "item.type": "function_call"},
                path="item",
                id="id",
                name="name",
            ),
            _s(where={"type": "response.function_call_arguments.delta"}, id="item_id", args="delta"),
            _s(
                where={"type": "response.output_item.done", "item.type": "function_call"},
                path="item",
                id="id",
                name="name",
                args="arguments",
                whole=True,
            ),
        ),
        usage=(_s(where={"type": "response.completed"}, path="response.usage"),),
        finish_reason=(_s(where={"type": "response.completed"}, path="response.status"),),
    ),
    # The AI SDK's UI message stream (`x-vercel-ai-ui-message-stream: v1`), what `useChat` reads.
    "ai-sdk": Protocol(
        name="ai-sdk",
        text=(_s(where={"type": "text-delta"}, path="delta"),),
        ends=(_s(where={"type": "finish"}), DONE),
        errors=(
            _s(where={"type": "error"}, path="errorText", reason="the stream sent an error part", shape="type-error"),
            _s(where={"type": "abort"}, reason="the stream was aborted"),
            _s(
                where={"type": "finish", "finishReason": "error"},
                reason='the stream finished with finishReason "error"',
                shape="finish-reason-error",
            ),
        ),
        passages=(
            _s(where={"type": "source-document"}, id="sourceId", title="title"),
            _s(where={"type": "source-url"}, id="sourceId", title="title"),
        ),
        reasoning=(_s(where={"type": "reasoning-delta"}, path="delta"),),
        tools=(
            _s(where={"type": "tool-input-start"}, id="toolCallId", name="toolName"),
            _s(where={"type": "tool-input-delta"}, id="toolCallId", args="inputTextDelta"),
            _s(where={"type": "tool-input-available"}, id="toolCallId", name="toolName", args="input", whole=True),
            _s(where={"type": "tool-output-available"}, id="toolCallId", result="output"),
        ),
        usage=(_s(where={"type": "finish"}, has="messageMetadata.usage", path="messageMetadata.usage"),),
        finish_reason=(_s(where={"type": "finish"}, has="finishReason", path="finishReason"),),
    ),
    # LangServe's `/stream`: `event: data` chunks of the chain's output, then `event: end`.
    "langserve": Protocol(
        name="langserve",
        text=(_s(event="data", path="answer"),),
        ends=(_s(event="end"),),
        errors=(_s(event="error", shape="error-event"),),
    ),
    # AG-UI, what agent frameworks speak to UIs (Pydantic AI, LangGraph, CrewAI, ADK, Strands, Mastra): events
    # typed by their JSON `type`. Text is the assistant's messages' content; a tool call's argument deltas never are.
    "ag-ui": Protocol(
        name="ag-ui",
        text=(
            _s(where={"type": "TEXT_MESSAGE_CONTENT"}, path="delta", id="messageId"),
            _s(where={"type": "TEXT_MESSAGE_CHUNK"}, path="delta", id="messageId"),
        ),
        roles=(
            _s(where={"type": "TEXT_MESSAGE_START"}, id="messageId", path="role"),
            _s(where={"type": "TEXT_MESSAGE_CHUNK"}, id="messageId", path="role"),
        ),
        ends=(_s(where={"type": "RUN_FINISHED"}),),
        errors=(_s(where={"type": "RUN_ERROR"}, path="message", reason="the run failed", shape="run-error"),),
        reasoning=(
            _s(where={"type": "REASONING_MESSAGE_CONTENT"}, path="delta"),
            _s(where={"type": "REASONING_MESSAGE_CHUNK"}, path="delta"),
            _s(where={"type": "THINKING_TEXT_MESSAGE_CONTENT"}, path="delta"),
        ),
        tools=(
            _s(where={"type": "TOOL_CALL_START"}, id="toolCallId", name="toolCallName"),
            _s(where={"type": "TOOL_CALL_ARGS"}, id="toolCallId", args="delta"),
            _s(where={"type": "TOOL_CALL_CHUNK"}, id="toolCallId", name="toolCallName", args="delta"),
            _s(where={"type": "TOOL_CALL_RESULT"}, id="toolCallId", result="content"),
        ),
        conversation_id=(_s(where={"type": "RUN_STARTED"}, path="threadId"),),
    ),
}
"""The built-in protocols, by name (`endpoint.protocol`, and the preset of the same name)."""

assert tuple(BUILTIN) == BUILTIN_PROTOCOLS

TYPED_REASONING = tuple(dict.fromkeys(s for protocol in BUILTIN.values() for s in protocol.reasoning if s.where))
"""Every built-in protocol's reasoning events picked by their type: an undeclared stream keeps them apart too."""

TOOL_EVENTS = tuple(dict.fromkeys(selector for protocol in BUILTIN.values() for selector in protocol.tools))
"""Every built-in protocol's tool-call events: every reader reads them as tool calls, never as answer text (read
undeclared with `answer_delta: delta`, AG-UI's `TOOL_CALL_ARGS` deltas became the answer)."""

_GENERIC_ERRORS = tuple(
    dict.fromkeys(
        selector
        for protocol in ("ai-sdk", "openai-responses", "openai-chat", "langserve", "ag-ui")
        for selector in BUILTIN[protocol].errors
    )
)
"""An undeclared stream's failures: every built-in protocol's, none of which a healthy stream of another sends
(an `error` event, an object with a non-empty `error` as Ollama-style services and OpenAI-compatible gateways fail
mid-stream, the AI SDK's `error`, `abort` and `finishReason: "error"`, the Responses API's `response.failed` and
`response.incomplete`, whose error sits in `response.error`). An outage is never read as an answer: without the
Responses markers a failed response read as an empty answer, a decline, and passed every out-of-scope case."""


def generic(answer_delta: str | None, kind: str) -> Protocol:
    """No protocol declared: the mapped `answer_delta` in every event, the known failures, and the stream ends when
    the connection closes (`[DONE]` and `event: end` stop the reading, but are not required)."""
    return Protocol(
        name="generic",
        text=(_s(path=answer_delta),) if answer_delta else (),
        ends=(DONE, _s(event="end")),
        errors=_GENERIC_ERRORS,
        reasoning=TYPED_REASONING,
        end_required=False,
        json_events=bool(answer_delta) or kind == "ndjson",
    )


def _selectors(markers: Sequence[Marker] | None) -> tuple[Selector, ...] | None:
    if markers is None:
        return None
    out = []
    for marker in markers:
        fields = marker.model_dump()
        fields["where"] = tuple(fields["where"].items())
        if "message" in fields:  # an error marker's message is where its value is
            fields["path"] = fields.pop("message")
        out.append(Selector(**fields))
    return tuple(out)


def declared(config: str | ProtocolConfig | None) -> Protocol | None:
    """The protocol `endpoint.protocol` declares; None when none is."""
    if config is None:
        return None
    if isinstance(config, str):
        return BUILTIN[config]
    base = BUILTIN[config.extends] if config.extends else Protocol(name="declared")
    changes: dict[str, Any] = {}
    for key, attr in (
        ("text", "text"),
        ("end", "ends"),
        ("error", "errors"),
        ("passages", "passages"),
        ("reasoning", "reasoning"),
        ("refusal", "refusal"),
        ("conversation_id", "conversation_id"),
        ("usage", "usage"),
        ("finish_reason", "finish_reason"),
        ("tools", "tools"),
    ):
        given = _selectors(getattr(config, key))
        if given is not None:
            changes[attr] = given
    protocol = dataclasses.replace(base, **changes)
    if config.extends is None:
        # A declared protocol requires its end only when it names one; its events are JSON when its text is read
        # at a path (a `token` event whose data is the text itself needs none).
        protocol = dataclasses.replace(
            protocol,
            end_required=bool(protocol.ends),
            json_events=any(s.path is not None for s in protocol.text),
        )
    return protocol


def passage(source: Selector, item: Any, mapping: ResponseMapping) -> dict[str, Any]:
    """One passage a source's `id`, `text` and `title` paths read from `item`, in the shape the mapping reads: each
    at the mapping's per-passage path (`retrieved_id: meta.doc_id` gets `{"meta": {"doc_id": ...}}`)."""
    out: dict[str, Any] = {}
    for key, path in (("id", source.id), ("text", source.text), ("title", source.title)):
        value = dig(item, path) if path else None
        if value is not None and not is_missing(value):
            put(out, getattr(mapping, f"retrieved_{key}") or key, value)
    return out


AI_SDK_HEADER = "x-vercel-ai-ui-message-stream"
"""The header an AI SDK UI message stream response carries (`v1`)."""


def read_body(protocol: Protocol, data: Any, mapping: ResponseMapping) -> Any:
    """One JSON body as `protocol` reads it. Only the Responses API needs this: its answer is the `output_text`
    parts of its `output` items, its passages a `file_search_call`'s results. Anything else is left as it is."""
    if protocol.name != "openai-responses" or not isinstance(data, dict) or data.get("object") != "response":
        return data
    status = data.get("status")
    if status == "failed":
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        raise ReplyShapeError(f"the response failed: {message}" if isinstance(message, str) else "the response failed")
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        raise ReplyShapeError(
            f"the response is incomplete: {reason}" if isinstance(reason, str) else "the response is incomplete"
        )
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    refused = False
    passages: list[dict[str, Any]] | None = None
    source = next(s for s in protocol.passages) if protocol.passages else None
    for item in data.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                    texts.append(part["refusal"])
                    refused = True
        elif item.get("type") == "function_call":
            calls.append({"name": item.get("name"), "arguments": item.get("arguments"), "id": item.get("call_id")})
        elif item.get("type") == "file_search_call" and isinstance(item.get("results"), list) and source is not None:
            passages = passages or []
            passages.extend(passage(source, result, mapping) for result in item["results"])
    out: dict[str, Any] = {mapping.answer or "answer": "".join(texts), mapping.tool_calls or "tool_calls": calls}
    if refused:
        out[mapping.refused or "refused"] = True
    if passages is not None:
        out[mapping.retrieved or "retrieved"] = passages
    return out
