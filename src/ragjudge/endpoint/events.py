"""Streamed replies on the wire: Server-Sent Events and NDJSON, bytes in and events out as they arrive.

`SseParser` follows the HTML standard's event-stream rules: lines end in CRLF,
LF or CR; a line starting with `:` is a comment; `field: value` drops one space
after the colon, a line with no colon is a field with an empty value; `data`
lines are joined with "\\n"; `event` names the event; `id` and `retry` are
ignored; a blank line dispatches the event (one with neither data nor a name is
dropped: unlike the standard, a named event without data is kept, for `event: end`).
A byte order mark at the start is dropped. `NdjsonParser` yields one event per
non-blank line. Both are linear in the bytes.

What the events mean is read by `stream.Assembly`, by the stream's protocol.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

SSE_TYPES = ("text/event-stream",)
NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/x-jsonl")


@dataclass(frozen=True)
class Event:
    name: str
    """The `event:` field; "" when the event had none (SSE's `message`) and for NDJSON lines."""
    data: str


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


_BREAK = re.compile(r"\r\n|\r|\n")


class _Lines:
    """Bytes in, complete lines out (CRLF, LF or CR), UTF-8 decoded across chunk boundaries.

    Linear in the bytes: each chunk is scanned once, and a line longer than one chunk is kept in pieces until its
    end arrives (joining the buffer to every chunk made one 4.5 MB event cost tens of seconds)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pieces: list[str] = []
        self._after_cr = False
        self._started = False

    def feed(self, chunk: bytes, final: bool = False) -> list[str]:
        text = self._decoder.decode(chunk, final=final)
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]  # a byte order mark is not part of the first field's name
        if self._after_cr and text:
            self._after_cr = False
            if text.startswith("\n"):
                text = text[1:]  # the LF of a CRLF split across chunks
        lines: list[str] = []
        start = 0
        for found in _BREAK.finditer(text):
            if self._pieces:
                self._pieces.append(text[start : found.start()])
                lines.append("".join(self._pieces))
                self._pieces = []
            else:
                lines.append(text[start : found.start()])
            start = found.end()
        if text.endswith("\r"):
            self._after_cr = True  # a CR at a chunk's end may be the first half of a CRLF
        if start < len(text):
            self._pieces.append(text[start:])
        if final and self._pieces:
            lines.append("".join(self._pieces))  # the standard drops it; a last line with no newline is read here
            self._pieces = []
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
    """One JSON value per line, fed bytes as they arrive; blank lines are skipped."""

    def __init__(self) -> None:
        self._lines = _Lines()

    def feed(self, chunk: bytes) -> list[Event]:
        return [Event("", line) for line in self._lines.feed(chunk) if line.strip()]

    def close(self) -> list[Event]:
        return [Event("", line) for line in self._lines.feed(b"", final=True) if line.strip()]


def parser(kind: str) -> SseParser | NdjsonParser:
    return SseParser() if kind == "sse" else NdjsonParser()
