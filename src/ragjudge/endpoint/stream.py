"""Streamed replies read by their protocol, event by event (the events come from `endpoint/events.py`).

`Assembly` reads the events by their protocol (`endpoint/protocols.py`): a failure
marker is a `StreamFault` quoting its message, a declared end stops the reading,
and the events are gathered into the one JSON object the ordinary reply reader
(`parse_reply`) expects: the answer text joined, passages collected across
events, and every other mapped path taken from the last event where it resolves. `notes` says how a stream
was read and, when no protocol was declared, what it looks like.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint import failures, tool_calls
from ragjudge.endpoint.events import Event
from ragjudge.endpoint.paths import dig, is_missing, put
from ragjudge.endpoint.protocols import BUILTIN, TOOL_EVENTS, Protocol, Selector, generic, passage
from ragjudge.endpoint.recognition import recognise
from ragjudge.endpoint.reply import DEFAULT_KEYS, REPLY_LEVEL_KEYS
from ragjudge.endpoint.trace import StreamNotes
from ragjudge.safetext import clean_data, clean_text

_LOOKED_UP = tuple(key for key in REPLY_LEVEL_KEYS if key != "answer")
"""The reply-level mapping keys looked up in every event (the last event where one resolves wins); the answer is
gathered on its own (deltas, or the last answer sent)."""


class StreamFault(Exception):
    """The stream cannot give a reply: its error event, a cut, a bad event."""


_NOT_JSON: Any = object()
_SEEN_KEPT = 20
"""Events kept (name and JSON) for `recognise`: what a stream is shows in its first events."""
MAX_REASONING_CHARS = 20_000
"""A model's reasoning is kept in the trace up to this many characters."""
_MESSAGE_KEYS = ("errorText", "message", "detail", "error")


def _empty(value: Any) -> bool:
    return is_missing(value) or value in (None, "", False) or value == {} or value == []


_UNTYPED: Any = object()


def _type_of(selector: Selector) -> Any:
    return next((value for path, value in selector.where if path == "type"), _UNTYPED)


class _ByType:
    """Selectors by the JSON `type` they require, in their order: an event is tried only against those that can
    match it (a reader tries some thirty markers per event; most are picked by `type`)."""

    def __init__(self, selectors: tuple[Selector, ...]) -> None:
        self.selectors = selectors
        self._kinds = tuple(_type_of(s) for s in selectors)
        self._for: dict[Any, tuple[Selector, ...]] = {}

    def get(self, data: Any) -> tuple[Selector, ...]:
        kind = data.get("type", _UNTYPED) if isinstance(data, dict) else _UNTYPED
        if not isinstance(kind, str | int | float | bool) or kind is None:
            kind = _UNTYPED  # no type, or one no marker can name: only the markers that need none
        found = self._for.get(kind)
        if found is None:
            found = tuple(s for s, k in zip(self.selectors, self._kinds, strict=True) if k is _UNTYPED or k == kind)
            if len(self._for) < 256:  # bounded: a stream's types are few, a hostile one's are not
                self._for[kind] = found
        return found


def _matches(selector: Selector, name: str, raw: str, data: Any) -> bool:
    if selector.event is not None and name != selector.event:
        return False
    if selector.data is not None and raw != selector.data:
        return False
    if selector.where or selector.has is not None or selector.path is not None:
        if data is _NOT_JSON:
            return False
        for path, value in selector.where:
            found = dig(data, path)
            if is_missing(found) or found != value or type(found) is not type(value):
                return False
        if selector.has is not None and _empty(dig(data, selector.has)):
            return False
    return True


class Assembly:
    """The events of one stream, read by its protocol and gathered into the reply object the ordinary reader
    (`parse_reply`) reads: the answer text joined, passages collected, the rest from the last event carrying it."""

    def __init__(
        self,
        mapping: ResponseMapping,
        excerpt: Callable[[bytes], str] | None = None,
        protocol: Protocol | None = None,
        kind: str = "sse",
        ignored: frozenset[str] = frozenset(),
    ) -> None:
        """`ignored`: the common failure shapes turned off by name (`endpoint.ignore_failure_shapes`)."""
        self.mapping = mapping
        self.protocol = protocol if protocol is not None else generic(mapping.answer_delta, kind)
        self._errors = _ByType(failures.markers(self.protocol.errors, ignored))
        """The protocol's failure markers, then the gate's common ones (`endpoint/failures.py`)."""
        self._tools = _ByType(tuple(dict.fromkeys((*self.protocol.tools, *TOOL_EVENTS))))
        """The protocol's tool-call events, then every built-in protocol's: a tool call is never answer text."""
        self._ends = _ByType(self.protocol.ends)
        self._text_events = _ByType(self.protocol.text)
        self._reasoning = _ByType(self.protocol.reasoning)
        self.tools = tool_calls.Collector()
        self._roles: dict[str, str] = {}
        """Each message's role by its id, where the protocol says (AG-UI): only the assistant's text is the answer."""
        self.kind = kind
        self.events = 0
        self.deltas: list[str] = []
        self.chars = 0
        self.first_answer: bool = False
        """True once an event carried answer text (a non-empty delta, or the answer itself)."""
        self.ended = False
        """The stream reached an end its protocol declares: a close now is not a cut."""
        self.refused = False
        self.reasoning: list[str] = []
        self.reasoning_chars = 0
        self.usage: Any = None
        self.finish_reason: str | None = None
        self.seen: list[tuple[str, Any]] = []
        """The first events' names and JSON, for `protocols.recognise`."""
        self.last: tuple[str, Any, str] | None = None
        """The last event read (name, JSON or None, the start of its data), for probe's proposed end marker."""
        self.first_at: float | None = None
        """When the bytes carrying the first answer text arrived (in the caller's clock, as given to `take`)."""
        self._excerpt = excerpt
        self._found: dict[str, Any] = {}
        self._answer: Any = None
        self._text: list[str] = []
        self._passages: list[Any] | None = None
        self._conversation_id: Any = None
        self._lookups = tuple((path, path.split(".", 1)[0]) for key in _LOOKED_UP for path in self._paths(key))
        """The reply-level paths looked up in every object event, each with its first key: most events hold none,
        and a path whose first key is absent is not followed (a third of a tiny event's reading, measured)."""

    def _paths(self, key: str) -> tuple[str, ...]:
        mapped = getattr(self.mapping, key)
        return (mapped,) if mapped else DEFAULT_KEYS[key]

    def add(self, event: Event) -> bool:
        """Take one event; True when reading stops here (a declared end). Raises StreamFault for a failure or a
        broken event."""
        raw = event.data.strip()
        if not raw and not event.name:
            return False  # a keep-alive
        self.events += 1
        data: Any = _NOT_JSON
        if raw:
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                data = _NOT_JSON
        if len(self.seen) < _SEEN_KEPT:
            self.seen.append((event.name, data if data is not _NOT_JSON else None))
        self.last = (event.name, data if data is not _NOT_JSON else None, raw[:200])
        name = event.name
        protocol = self.protocol
        for selector in self._errors.get(data):
            if _matches(selector, name, raw, data):
                raise StreamFault(self._failure(selector, event, data))
        end = next((s for s in self._ends.get(data) if _matches(s, name, raw, data)), None)
        if data is _NOT_JSON and raw and protocol.json_events and end is None:
            what = "line" if self.kind == "ndjson" else "event"
            raise StreamFault(f"stream {what} {self.events} is not valid JSON")
        self._read(name, event.data, data, after_end=self.ended)
        if end is not None:
            self.ended = True
            return not end.until_close
        return False

    def _read(self, name: str, text: str, data: Any, after_end: bool = False) -> None:
        """Take what the event carries. `text` is its data as sent (a text stream's spaces are its answer's).

        `after_end`: the stream already reached an end that lets it send more (usage after an OpenAI chunk's
        `finish_reason`): only the usage, finish reason, conversation id and mapped keys are read, never more
        answer text, reasoning or passages."""
        raw = text.strip()
        protocol = self.protocol
        if not after_end:
            self._read_content(name, text, raw, data)
        for key, selectors in (
            ("conversation_id", protocol.conversation_id),
            ("usage", protocol.usage),
            ("finish_reason", protocol.finish_reason),
        ):
            for selector in selectors:
                if _matches(selector, name, raw, data):
                    value = self._value(selector, text, data)
                    if not _empty(value):
                        setattr(self, "_conversation_id" if key == "conversation_id" else key, value)
        if isinstance(data, dict):
            for path, head in self._lookups:
                if head in data:
                    value = dig(data, path)
                    if not is_missing(value):
                        self._found[path] = value

    def _read_content(self, name: str, text: str, raw: str, data: Any) -> None:
        """The answer text, tool calls, refusal, reasoning and passages an event carries."""
        protocol = self.protocol
        for selector in protocol.roles:
            if _matches(selector, name, raw, data) and selector.id and selector.path:
                message, role = dig(data, selector.id), dig(data, selector.path)
                if isinstance(message, str) and isinstance(role, str) and len(self._roles) < 1000:
                    self._roles[message] = role
        tool = False
        for selector in self._tools.get(data):
            if _matches(selector, name, raw, data):
                tool = True
                value = data if selector.path is None else dig(data, selector.path)
                self.tools.take(value, selector.id, selector.name, selector.args, selector.result, selector.whole)
        # A typed reasoning event is never answer text, whatever else matches it (`delta` is both, undeclared).
        thinking = any(s.where and _matches(s, name, raw, data) for s in self._reasoning.get(data))
        for selector in () if tool or thinking else self._text_events.get(data):
            if _matches(selector, name, raw, data):
                message = dig(data, selector.id) if selector.id else None
                if not isinstance(message, str) or self._roles.get(message, "assistant") == "assistant":
                    self._take_text(self._value(selector, text, data))
                break
        else:
            if protocol.generic and not tool and not thinking:
                self._generic_answer(text, data)
        for selector in protocol.refusal:
            if _matches(selector, name, raw, data):
                value = self._value(selector, text, data)
                if isinstance(value, str) and value:
                    self.refused = True
                    self._take_text(value)
        for selector in self._reasoning.get(data):
            if _matches(selector, name, raw, data):
                value = self._value(selector, text, data)
                if isinstance(value, str) and self.reasoning_chars < MAX_REASONING_CHARS:
                    self.reasoning.append(value[: MAX_REASONING_CHARS - self.reasoning_chars])
                    self.reasoning_chars += len(self.reasoning[-1])
        for selector in protocol.passages:
            if _matches(selector, name, raw, data):
                self._take_passages(selector, self._value(selector, text, data))

    @staticmethod
    def _value(selector: Selector, text: str, data: Any) -> Any:
        if selector.path is None:
            return data if isinstance(data, (str, dict, list)) else text
        return dig(data, selector.path)

    def _take_text(self, value: Any) -> None:
        if isinstance(value, str) and value:
            self.deltas.append(value)
            self.chars += len(value)
            self.first_answer = True

    def _generic_answer(self, sent: str, data: Any) -> None:
        """An undeclared stream with no `answer_delta`: text events are the answer, else the last `answer` sent."""
        if not isinstance(data, (dict, list)):
            text = data if isinstance(data, str) else sent  # a JSON string is its text; anything else as sent
            if text:
                self._text.append(text)
                self.chars += len(text)
                self.first_answer = True
            return
        answer = dig(data, self.mapping.answer or "answer")
        if not is_missing(answer) and answer is not None:
            self._answer = answer
            if isinstance(answer, str) and answer:
                self.first_answer = True
                self.chars = len(answer)

    def _take_passages(self, selector: Selector, value: Any) -> None:
        if is_missing(value) or value is None:
            return  # not carried (a Responses search whose results were not `include`d): unknown, not "none"
        items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        if self._passages is None:
            self._passages = []
        for item in items:
            if selector.id or selector.text or selector.title:
                self._passages.append(passage(selector, item, self.mapping))
            else:
                self._passages.append(item)

    def _failure(self, selector: Selector, event: Event, data: Any) -> str:
        message: Any = None
        if selector.path is not None and data is not _NOT_JSON:
            message = dig(data, selector.path)
            if isinstance(message, dict) and isinstance(message.get("message"), str):
                message = message["message"]
        if _empty(message) and isinstance(data, dict):
            message = next((data[k] for k in _MESSAGE_KEYS if not _empty(data.get(k))), None)
            if isinstance(message, dict) and isinstance(message.get("message"), str):
                message = message["message"]
        if _empty(message):
            message = event.data if data is _NOT_JSON or (selector.path is None and not selector.where) else None
        if message is not None and not isinstance(message, str):
            message = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        shown = ""
        if message:
            shown = clean_text(self._excerpt(message.encode("utf-8")) if self._excerpt else message)
        return f"{selector.reason}: {shown}" if shown else selector.reason

    def take(self, events: list[Event], arrived: float) -> bool:
        """Take events that arrived together at `arrived`, noting when answer text first came; True where reading
        stops (a declared end). Raises StreamFault as `add` does."""
        for event in events:
            stopped = self.add(event)
            if self.first_at is None and self.first_answer:
                self.first_at = arrived
            if stopped:
                return True
        return False

    def check_end(self) -> None:
        """At the stream's close: a protocol whose end was declared and not reached is a cut stream."""
        if self.protocol.end_required and not self.ended:
            raise StreamFault(self.cut())

    def cut(self) -> str:
        """The reason a stream that ended without its end marker gives."""
        return f"stream ended before its end ({self.events} events, {self.chars} characters)"

    def reply(self) -> dict[str, Any]:
        """One reply object: the answer (the text joined, else the last answer sent, else the text) and the rest."""
        out: dict[str, Any] = {}
        for path, value in self._found.items():
            put(out, path, value)
        answer_path = self.mapping.answer or "answer"
        if self.deltas:
            put(out, answer_path, "".join(self.deltas))
        elif self._answer is not None:
            put(out, answer_path, self._answer)
        elif self._text:
            put(out, answer_path, "".join(self._text))
        elif self.protocol.text:
            put(out, answer_path, "")  # a stream that ended normally with no text answered nothing
        if self.protocol.tools or self.tools.seen:  # the protocol exposes tool calls: none called is "none"
            calls = self.tools.calls()
            put(out, self.mapping.tool_calls or "tool_calls", calls)
            if self.mapping.retrieval_tool and self._passages is None:
                self._passages = tool_calls.retrieval_passages(calls, self.mapping)
        if self.refused:
            put(out, self.mapping.refused or "refused", True)
        # The config's own `response.retrieved`, found in the events, wins over the protocol's passage events: a
        # preset pasted from probe (`protocol: ai-sdk`) silently replaced the passages the team had mapped.
        mapped = self.mapping.retrieved
        if self._passages is not None and not (mapped and mapped in self._found):
            put(out, mapped or "retrieved", self._passages)
        mapped_id = self.mapping.conversation_id
        if self._conversation_id is not None and not (mapped_id and mapped_id in self._found):
            put(out, mapped_id or "conversation_id", self._conversation_id)
        # Made safe once joined: a surrogate pair sent in two deltas is one character again.
        cleaned: dict[str, Any] = clean_data(out)
        return cleaned


def notes(assembly: Assembly, header: str | None = None) -> StreamNotes:
    """How a stream was read, and, when no protocol was declared, what it looks like."""
    looks = None
    if assembly.protocol.generic:
        looks = recognise(assembly.seen, header)
    finish = assembly.finish_reason
    return StreamNotes(
        protocol=assembly.protocol.name,
        looks_like=looks.label if looks else None,
        suggestion=looks.name if looks and looks.name in BUILTIN else None,
        finish_reason=clean_text(finish)[:100] if isinstance(finish, str) else None,
        reasoning=clean_text("".join(assembly.reasoning)) or None,
    )
