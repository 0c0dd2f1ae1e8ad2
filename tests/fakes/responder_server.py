"""A loopback HTTP server that misbehaves on purpose, as a test's responder says.

A responder is a function called once per request with an `Exchange`; it answers through it
(`ex.json(...)`, `ex.send(...)`, `ex.chunked(...)`, `ex.trickle(...)`, `ex.truncate(...)`,
`ex.hang(...)`, `ex.drop()`). Every request is recorded on the server. HTTP/1.1, one request per
connection; a stop cuts short whatever a responder is waiting for.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes._http import Handler, Incoming, LoopbackServer


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


class Exchange:
    """One request to answer: `n` is its 0-based position among the server's requests."""

    def __init__(self, handler: Handler, seen: Seen, n: int, stop: threading.Event) -> None:
        self._h = handler
        self.request = seen
        self.n = n
        self._stop = stop

    def send(
        self,
        status: int = 200,
        body: bytes | str = b"",
        content_type: str | None = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        payload = body.encode("utf-8") if isinstance(body, str) else body
        self._h.send_response(status)
        if content_type is not None:
            self._h.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self._h.send_header(name, value)
        self._h.send_header("Content-Length", str(len(payload)))
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        self._h.wfile.write(payload)

    def json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.send(status, json.dumps(data, ensure_ascii=False), "application/json; charset=utf-8", headers)

    def chunked(self, chunks: list[bytes], content_type: str = "application/json") -> None:
        """A body with `Transfer-Encoding: chunked` and no Content-Length."""
        self._h.send_response(200)
        self._h.send_header("Content-Type", content_type)
        self._h.send_header("Transfer-Encoding", "chunked")
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        for chunk in chunks:
            self._h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self._h.wfile.flush()
        self._h.wfile.write(b"0\r\n\r\n")

    def trickle(self, body: bytes, every_s: float) -> None:
        """Headers at once, then the body one byte every `every_s` seconds."""
        self._h.send_response(200)
        self._h.send_header("Content-Type", "application/json")
        self._h.send_header("Content-Length", str(len(body)))
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        self._h.wfile.flush()
        for i in range(len(body)):
            if self._stop.wait(every_s):
                return
            self._h.wfile.write(body[i : i + 1])
            self._h.wfile.flush()

    def truncate(self, declared: int, body: bytes) -> None:
        """Promise `declared` bytes, send `body` (fewer), then close the connection."""
        self._h.send_response(200)
        self._h.send_header("Content-Type", "application/json")
        self._h.send_header("Content-Length", str(declared))
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        self._h.wfile.write(body)
        self._h.wfile.flush()

    def stream(self, pieces: list[bytes | float], content_type: str = "text/event-stream") -> None:
        """A streamed reply: headers at once (no Content-Length, the connection closed after), then each
        piece of bytes as it comes; a number waits that many seconds first (cut short when the server stops)."""
        self._h.send_response(200)
        self._h.send_header("Content-Type", content_type)
        self._h.send_header("Cache-Control", "no-cache")
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        self._h.wfile.flush()
        self._h.close_connection = True
        for piece in pieces:
            if isinstance(piece, float | int):
                if self._stop.wait(piece):
                    return
                continue
            self._h.wfile.write(piece)
            self._h.wfile.flush()

    def hang(self, seconds: float) -> None:
        """Wait before answering (cut short when the server stops)."""
        self._stop.wait(seconds)

    def drop(self) -> None:
        """Close the connection without a reply."""
        self._h.close_connection = True


Responder = Callable[[Exchange], None]


class ResponderServer(LoopbackServer):
    """A started test server: `url` (its `/ask`), `port`, and the `requests` it received."""

    protocol_version = "HTTP/1.1"
    url_path = "/ask"
    keeps_url = True

    def __init__(self, responder: Responder) -> None:
        super().__init__()
        self.responder = responder
        self.requests: list[Seen] = []
        self.stopping = threading.Event()
        self.start()

    def record(self, seen: Seen) -> int:
        with self._lock:
            self.requests.append(seen)
            return len(self.requests) - 1

    def respond(self, req: Incoming, handler: Handler) -> None:
        seen = Seen(req.method, req.raw_path, req.headers, req.raw_body)
        n = self.record(seen)
        handler.close_connection = True
        self.responder(Exchange(handler, seen, n, self.stopping))

    def stop(self) -> None:
        self.stopping.set()
        super().stop()
