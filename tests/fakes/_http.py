"""The one base of every loopback server in the tests (stdlib only, 127.0.0.1, a free port, a daemon thread).

A fake subclasses `LoopbackServer` and answers in one of three ways:

* `handle(req) -> Outgoing`: the usual way, one parsed request in, one reply out;
* `respond(req, handler)`: writes the reply itself through the `BaseHTTPRequestHandler` (chunked,
  trickled, truncated, dropped replies);
* `handler = RawHandler` and `answer(conn, request)`: below HTTP, for servers that send any bytes at all.

Use it as `with Fake() as f:` (or `start()` / `stop()`); `f.url` is `http://127.0.0.1:PORT` plus the
class's `url_path`.
"""

import contextlib
import json
import socket
import socketserver
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


def free_port() -> int:
    """A loopback port that nothing listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Incoming:
    """One parsed HTTP request as seen by a fake."""

    method: str
    path: str  # path only, no query string
    raw_path: str  # path plus query string, exactly as received
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    raw_body: bytes

    def json(self) -> Any:
        return json.loads(self.raw_body.decode("utf-8")) if self.raw_body else None


@dataclass
class Outgoing:
    status: int
    body: Any = None  # dict/list -> JSON; str -> text; bytes -> as is; None -> empty
    headers: dict[str, str] = field(default_factory=dict)  # a header given as "" is not sent


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # default 5 overflows under concurrent clients -> 1 s SYN retransmits

    def __init__(self, owner: "LoopbackServer") -> None:
        self.owner = owner
        super().__init__((owner.bind_host, 0), owner.handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out / hang up mid-response are expected in tests; stay quiet.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    """Parses each request into an `Incoming` and hands it to the owning server's `respond`."""

    server: _Server

    def setup(self) -> None:
        # HTTP/1.0 by default: one request per connection, nothing lingers after stop().
        self.protocol_version = self.server.owner.protocol_version
        self.server.owner.connected()
        super().setup()

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        parts = urlsplit(self.path)
        incoming = Incoming(
            method=self.command,
            path=parts.path,
            raw_path=self.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            raw_body=raw,
        )
        self.server.owner.respond(incoming, self)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _dispatch

    def send(self, out: Outgoing) -> None:
        """Write `out`: its status, a Content-Type from its body unless it names one, and a Content-Length."""
        if isinstance(out.body, bytes):
            payload, ctype = out.body, "application/octet-stream"
        elif isinstance(out.body, str):
            payload, ctype = out.body.encode("utf-8"), "text/plain; charset=utf-8"
        elif out.body is None:
            payload, ctype = b"", ""
        else:
            payload, ctype = json.dumps(out.body).encode("utf-8"), "application/json; charset=utf-8"
        self.send_response(out.status)
        names = {k.lower() for k in out.headers}
        if ctype and "content-type" not in names:
            self.send_header("Content-Type", ctype)
        for name, value in out.headers.items():
            if value:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload and self.command != "HEAD":
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


class RawHandler(socketserver.BaseRequestHandler):
    """Below HTTP: reads one request (its head, then `Content-Length` bytes) and hands the connection and
    those bytes to the owning server's `answer`; the connection is closed afterwards."""

    server: _Server
    request: socket.socket

    def handle(self) -> None:
        self.server.owner.connected()
        self.request.settimeout(5)
        with contextlib.suppress(OSError):  # the client hung up
            self.server.owner.answer(self.request, read_request(self.request))


def read_request(conn: socket.socket) -> bytes:
    """One HTTP request's bytes as received: the head, then as many body bytes as its Content-Length says."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class LoopbackServer:
    """Base class: subclasses implement ``handle`` (or ``respond``, or ``answer`` with ``RawHandler``).

    Use ``with Fake() as f:`` or ``start()``/``stop()``.
    """

    handler: type[socketserver.BaseRequestHandler] = Handler
    protocol_version = "HTTP/1.0"
    """`HTTP/1.1` keeps connections alive (unless a reply closes them)."""
    url_path = ""
    """Appended to the origin in `url` (`/ask` for a RAG endpoint)."""
    keeps_url = False
    """True: `url` and `port` still name the address once stopped (for a message asserted after `with`)."""
    bind_host = "127.0.0.1"
    """The loopback address listened on: `127.0.0.2` is a second host on the same machine (a decoy)."""

    def __init__(self) -> None:
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._lock = threading.RLock()
        self.connections = 0
        """TCP connections accepted so far."""

    def handle(self, req: Incoming) -> Outgoing:  # pragma: no cover - abstract
        raise NotImplementedError

    def respond(self, req: Incoming, handler: Handler) -> None:
        """Answer `req` through `handler`; by default, what `handle` returns."""
        handler.send(self.handle(req))

    def answer(self, conn: socket.socket, request: bytes) -> None:  # pragma: no cover - abstract
        """With `handler = RawHandler`: answer the raw `request` on `conn`."""
        raise NotImplementedError

    def connected(self) -> None:
        with self._lock:
            self.connections += 1

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash; `bind_host` in place of 127.0.0.1). Only valid once
        started (see `keeps_url`)."""
        return f"http://{self.bind_host}:{self.port}"

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self._port

    @property
    def url(self) -> str:
        """The origin plus `url_path`. Only valid once started (see `keeps_url`)."""
        return self.origin + self.url_path

    def start(self) -> Self:
        if self._httpd is None:
            self._httpd = _Server(self)
            self._port = int(self._httpd.server_address[1])
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if not self.keeps_url:
            self._port = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
