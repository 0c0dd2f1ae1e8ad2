"""Streamed replies: Server-Sent Events and NDJSON, read as the bytes arrive.

`SseParser` follows the HTML standard's event-stream rules: lines end in CRLF,
LF or CR; a line starting with `:` is a comment; `field: value` drops one space
after the colon, a line with no colon is a field with an empty value; `data`
lines are joined with "\\n"; `event` names the event; `id` and `retry` are
ignored; a blank line dispatches the event (one with neither data nor a name is
dropped: unlike the standard, a named event without data is kept, for `event: end`).
`NdjsonParser` yields one event per non-blank line; a line that is an object
with a non-empty `error` (what Ollama-style services send when they fail
mid-stream) is an `error` event, as SSE's `event: error` is.

`Assembly` turns the events into the one JSON object the ordinary reply reader
(`parse_reply`) expects: the `answer_delta` values appended in order, and every
other mapped path taken from the last event where it resolves.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from typing import Any

from ragjudge.config.model import ResponseMapping
from ragjudge.endpoint.reply import DEFAULT_KEYS, REPLY_LEVEL_KEYS, dig, is_missing
from ragjudge.safetext import clean_data, clean_text

SSE_TYPES = ("text/event-stream",)
NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/x-jsonl")
DONE = "[DONE]"
"""OpenAI's last `data:`: a stream that has sent it once must end with it."""
END_EVENT = "end"
"""LangServe's last event: a stream with named events must end with it."""
ERROR_EVENT = "error"

_LOOKED_UP = tuple(key for key in REPLY_LEVEL_KEYS if key != "answer")
"""The reply-level mapping keys looked up in every event (the last event where one resolves wins); the answer is
gathered on its own (deltas, or the last answer sent)."""


@dataclass(frozen=True)
class Event:
    name: str
    """The `event:` field; "" when the event had none (SSE's `message`) and for NDJSON lines."""
    data: str


class StreamFault(Exception):
    """The stream cannot give a reply: its error event, a cut, a bad event."""


def stream_kind(setting: str, content_type: str | None) -> str | None:
    """`sse`, `ndjson`, or None for an ordinary JSON body, by `endpoint.stream` and the reply's Content-Type."""
    if setting in ("sse", "ndjson"):
        return setting
    if setting == "none":
        return None
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind in SSE_TYPES:
        return "sse"
    if kind in NDJSON_TYPES:
        return "ndjson"
    return None


class _Lines:
    """Bytes in, complete lines out (CRLF, LF or CR), UTF-8 decoded across chunk boundaries."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._after_cr = False

    def feed(self, chunk: bytes, final: bool = False) -> list[str]:
        text = self._decoder.decode(chunk, final=final)
        if self._after_cr and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF split across chunks
        self._after_cr = False
        text = self._buffer + text
        lines: list[str] = []
        start = 0
        i = 0
        n = len(text)
        while i < n:
            ch = text[i]
            if ch == "\n" or ch == "\r":
                lines.append(text[start:i])
                if ch == "\r":
                    if i + 1 < n:
                        if text[i + 1] == "\n":
                            i += 1
                    else:
                        self._after_cr = True
                start = i + 1
            i += 1
        self._buffer = text[start:]
        if final and self._buffer:
            lines.append(self._buffer)  # the standard drops it; a last line with no newline is read here
            self._buffer = ""
        return lines


class SseParser:
    """Server-Sent Events, fed bytes as they arrive."""

    def __init__(self) -> None:
        self._lines = _Lines()
        self._data: list[str] = []
        self._name = ""
        self._has_data = False

    def feed(self, chunk: bytes) -> list[Event]:
        return self._read(self._lines.feed(chunk))

    def close(self) -> list[Event]:
        """Whatever the last bytes complete; an event not followed by a blank line is dispatched too."""
        events = self._read(self._lines.feed(b"", final=True))
        if self._has_data:
            events.append(self._dispatch())
        return events

    def _read(self, lines: list[str]) -> list[Event]:
        events: list[Event] = []
        for line in lines:
            if line == "":
                if self._has_data or self._name:
                    # A named event without data is dispatched too (the standard drops it): LangServe's
                    # `event: end` carries none, and it is the stream's end.
                    events.append(self._dispatch())
                continue
            if line.startswith(":"):
                continue
            field, colon, value = line.partition(":")
            if colon and value.startswith(" "):
                value = value[1:]
            if field == "data":
                self._data.append(value)
                self._has_data = True
            elif field == "event":
                self._name = value
            # `id`, `retry` and unknown fields are ignored
        return events

    def _dispatch(self) -> Event:
        event = Event(self._name, "\n".join(self._data))
        self._data, self._name, self._has_data = [], "", False
        return event


class NdjsonParser:
    """One JSON value per line, fed bytes as they arrive."""

    def __init__(self) -> None:
        self._lines = _Lines()

    def feed(self, chunk: bytes) -> list[Event]:
        return [_ndjson_event(line) for line in self._lines.feed(chunk) if line.strip()]

    def close(self) -> list[Event]:
        return [_ndjson_event(line) for line in self._lines.feed(b"", final=True) if line.strip()]


def _ndjson_event(line: str) -> Event:
    """A line `{"error": ...}` is the stream's failure, never answer text; `"error": null` beside data is not."""
    if '"error"' in line:  # parse twice only the lines that may be an error
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            return Event("", line)
        if isinstance(data, dict) and data.get("error") not in (None, "", False, {}, []):
            return Event(ERROR_EVENT, line)
    return Event("", line)


def parser(kind: str) -> SseParser | NdjsonParser:
    return SseParser() if kind == "sse" else NdjsonParser()


def _put(target: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at a dotted path, making objects on the way (`dig` reads `choices.0` from {"0": ...} too)."""
    parts = path.split(".")
    node = target
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[parts[-1]] = value


class Assembly:
    """The events of one stream, gathered into the reply object the ordinary reader reads."""

    def __init__(self, mapping: ResponseMapping, excerpt: Any = None) -> None:
        self.mapping = mapping
        self.events = 0
        self.deltas: list[str] = []
        self.chars = 0
        self.first_answer: bool = False
        """True once an event carried answer text (a non-empty delta, or the answer itself)."""
        self.done = False
        self.finished = False
        """An OpenAI chunk gave its `finish_reason`: the answer is complete, `[DONE]` or not."""
        self.wants_done = False
        self.wants_end = False
        self.ended = False
        self._excerpt = excerpt
        self._found: dict[str, Any] = {}
        self._answer: Any = None
        self._text: list[str] = []

    def _paths(self, key: str) -> tuple[str, ...]:
        mapped = getattr(self.mapping, key)
        return (mapped,) if mapped else DEFAULT_KEYS[key]

    def add(self, event: Event) -> bool:
        """Take one event; True when it was the stream's end. Raises StreamFault for an error or bad event."""
        if event.name:
            self.wants_end = True
        if event.name == ERROR_EVENT:
            shown = clean_text(self._excerpt(event.data.encode("utf-8")) if self._excerpt else event.data)
            raise StreamFault(f"the stream sent an error event: {shown}" if shown else "the stream sent an error event")
        if event.name == END_EVENT:
            self.ended = True
            return True
        if event.data.strip() == DONE:
            self.done = self.wants_done = True
            return True
        if not event.data.strip():
            return False  # a keep-alive or a named event without data: nothing to read
        self.events += 1
        if self.events == 1 and (self.mapping.answer_delta or "").startswith("choices."):
            self.wants_done = True  # OpenAI chunks: `[DONE]` closes them
        try:
            data: Any = json.loads(event.data)
        except (json.JSONDecodeError, RecursionError):
            if self.mapping.answer_delta:
                raise StreamFault(f"stream event {self.events} is not valid JSON") from None
            if event.data:
                self._text.append(event.data)  # a text stream: its data is the answer
                self.chars += len(event.data)
                self.first_answer = True
            return False
        if self.mapping.answer_delta:
            delta = dig(data, self.mapping.answer_delta)
            if isinstance(delta, str) and delta:
                self.deltas.append(delta)
                self.chars += len(delta)
                self.first_answer = True
        if not isinstance(data, dict):
            return False
        if data.get("object") == "chat.completion.chunk":
            self.wants_done = True
        if _finished(data):
            # Some OpenAI-compatible servers (hayhooks 2.1) close after the chunk that gives its finish_reason and
            # send no `[DONE]`: that chunk is an end too. A stream cut mid-answer has neither.
            self.finished = True
        answer_path = self.mapping.answer or "answer"
        answer = dig(data, answer_path)
        if not is_missing(answer) and answer is not None:
            self._answer = answer
            if not self.mapping.answer_delta and isinstance(answer, str) and answer:
                self.first_answer = True
                self.chars = len(answer)
        for key in _LOOKED_UP:
            for path in self._paths(key):
                value = dig(data, path)
                if not is_missing(value):
                    self._found[path] = value
        return False

    def check_end(self) -> None:
        """At the stream's close: a format with an end marker that did not send it is a cut stream."""
        if (self.wants_done and not (self.done or self.finished)) or (
            self.wants_end and not self.ended and not self.done
        ):
            raise StreamFault(self.cut())

    def cut(self) -> str:
        """The reason a stream that ended without its end marker gives."""
        return f"stream ended before its end ({self.events} events, {self.chars} characters)"

    def reply(self) -> dict[str, Any]:
        """One reply object: the answer (deltas joined, else the last answer sent, else the text) and the rest."""
        out: dict[str, Any] = {}
        for path, value in self._found.items():
            _put(out, path, value)
        answer_path = self.mapping.answer or "answer"
        if self.deltas:
            _put(out, answer_path, "".join(self.deltas))
        elif self._answer is not None:
            _put(out, answer_path, self._answer)
        elif self._text:
            _put(out, answer_path, "".join(self._text))
        elif self.mapping.answer_delta:
            _put(out, answer_path, "")  # a stream of empty deltas answered nothing
        # Made safe once joined: a surrogate pair sent in two deltas is one character again.
        cleaned: dict[str, Any] = clean_data(out)
        return cleaned


def _finished(data: dict[str, Any]) -> bool:
    """An OpenAI chunk whose first choice says why it finished (`stop`, `length`, ...)."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    reason = choices[0].get("finish_reason")
    return isinstance(reason, str) and bool(reason)
