"""Loopback HTTP servers that misbehave on purpose, and a client wired to them.

A test gives `serve` a responder, a function called once per request with an
`Exchange`; the responder answers through it (`ex.json(...)`, `ex.send(...)`,
`ex.chunked(...)`, `ex.trickle(...)`, `ex.hang(...)`, `ex.drop()`). Every
request is recorded on the returned server. Servers listen on 127.0.0.1 on a
free port, in daemon threads, and are stopped when the test ends.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragjudge.cases import Case
from ragjudge.config.model import EndpointConfig
from ragjudge.endpoint.client import EndpointClient


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

    def __init__(self, handler: _Handler, seen: Seen, n: int, stop: threading.Event) -> None:
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

    def hang(self, seconds: float) -> None:
        """Wait before answering (cut short when the server stops)."""
        self._stop.wait(seconds)

    def drop(self) -> None:
        """Close the connection without a reply."""
        self._h.close_connection = True


Responder = Callable[[Exchange], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, loopback: Loopback) -> None:
        self.loopback = loopback
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hang up on slow and oversized replies on purpose: stay quiet.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        loopback = self.server.loopback
        n = loopback.record(seen)
        self.close_connection = True
        loopback.responder(Exchange(self, seen, n, loopback.stop))

    do_GET = do_POST = do_PUT = _any


class Loopback:
    """A started test server: `url`, `port`, and the `requests` it received."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[Seen] = []
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(self)
        self.port: int = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/ask"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def record(self, seen: Seen) -> int:
        with self._lock:
            self.requests.append(seen)
            return len(self.requests) - 1

    def close(self) -> None:
        self.stop.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], Loopback]]:
    """`serve(responder)` starts a loopback server; all are stopped after the test."""
    started: list[Loopback] = []

    def start(responder: Responder) -> Loopback:
        server = Loopback(responder)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class SleepRecorder:
    """Stands in for time.sleep: records each delay, waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def make_client(sleeps: SleepRecorder) -> Callable[..., EndpointClient]:
    """`make_client(url, **endpoint_config)`; retries sleep through `sleeps` unless `sleep=` is given."""

    def build(url: str, *, sleep: Callable[[float], None] | None = None, **config: Any) -> EndpointClient:
        return EndpointClient(EndpointConfig(**config), url, sleep=sleep or sleeps)

    return build


@pytest.fixture
def make_case() -> Callable[..., Case]:
    """`make_case(id=..., question=..., ...)`: a Case with the rest left at neutral values."""

    def build(id: str = "c-1", question: str = "How do I get a refund?", **fields: Any) -> Case:
        values: dict[str, Any] = {
            "expected": None,
            "golden_context_ids": (),
            "category": None,
            "should_answer": True,
            "must_mention": (),
            "must_not_mention": (),
            "source": None,
            "difficulty": None,
            "tags": (),
            "origin": "test.yaml:1",
        }
        values.update(fields)
        return Case(id=id, question=question, **values)

    return build
