"""The built-in OTLP/HTTP receiver: `POST /v1/traces` (protobuf or JSON, maybe gzipped) for the run's duration.

It runs on threads of its own and only files spans in the store, so a slow or broken exporter never holds the
run up; a request over `traces.max_body_bytes` is refused unread, one that takes over `READ_TIMEOUT_S` to send is
dropped.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragjudge.traces.otlp import Limits, Undecodable, decode
from ragjudge.traces.store import SpanStore

PATH = "/v1/traces"
READ_TIMEOUT_S = 10.0


MAX_CONNECTIONS = 16
"""Requests read at once; one more is closed unread (an exporter retries), so a flood holds no more threads."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    store: SpanStore
    limits: Limits
    places = threading.BoundedSemaphore(MAX_CONNECTIONS)
    connections: set[socket.socket]
    lock: threading.Lock

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.places.acquire(blocking=False):
            self.shutdown_request(request)
            return
        with self.lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.lock:
                self.connections.discard(request)
            self.places.release()

    def close_connections(self) -> None:
        """End every kept-alive connection. A service's exporter keeps its connection open: left open after the
        receiver stops, a second run in the same process (a test suite, a caller of `main`) on the same port would
        get no spans, the service sending them to this one's threads and a store nobody reads; closed, the
        exporter reconnects to whoever listens now."""
        with self.lock:
            open_now = list(self.connections)
        for connection in open_now:
            with contextlib.suppress(OSError):  # already gone
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = READ_TIMEOUT_S
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        if self.path.split("?")[0] != PATH:
            self._reply(404, "only POST /v1/traces is served here")
            return
        try:
            length = int(self.headers.get("Content-Length") or "-1")
        except ValueError:
            length = -1
        if length < 0:
            self._reply(411, "Content-Length required")
            return
        if length > self.server.limits.max_body_bytes:
            self.close_connection = True  # the body is left unread
            self._reply(413, f"over {self.server.limits.max_body_bytes} bytes (traces.max_body_bytes)")
            return
        try:
            body = self.rfile.read(length)
            spans = decode(
                body,
                self.headers.get("Content-Type", ""),
                self.headers.get("Content-Encoding", ""),
                self.server.limits,
            )
        except Undecodable as exc:
            self._reply(400, str(exc))
            return
        except (OSError, TimeoutError):
            self.close_connection = True
            return
        self.server.store.add(spans)
        json_reply = self.headers.get("Content-Type", "").startswith("application/json")
        # An empty ExportTraceServiceResponse: a full success, in the request's own encoding.
        self._send(200, b"{}" if json_reply else b"", "application/json" if json_reply else "application/x-protobuf")

    def do_GET(self) -> None:
        self._reply(405, "POST OTLP spans to /v1/traces")

    def _reply(self, status: int, message: str) -> None:
        self._send(status, message.encode("utf-8"), "text/plain; charset=utf-8")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # the run's output is the report, not an access log


class Receiver:
    """The receiver: bound and serving from `start` (OSError when the address is taken) until `stop`."""

    def __init__(self, host: str, port: int, store: SpanStore, limits: Limits) -> None:
        self._where = (host, port)
        self._store = store
        self._limits = limits
        self._server: _Server | None = None

    @property
    def address(self) -> str:
        """HOST:PORT it listens on (the port picked, when 0 was asked); as asked before it started."""
        if self._server is None:
            return f"{self._where[0]}:{self._where[1]}"
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}" if isinstance(host, str) else f"{host.decode()}:{port}"

    def start(self) -> Receiver:
        server = _Server(self._where, _Handler)
        server.places = threading.BoundedSemaphore(MAX_CONNECTIONS)  # each receiver its own
        server.connections, server.lock = set(), threading.Lock()
        server.store = self._store
        server.limits = self._limits
        self._server = server
        threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.close_connections()
