"""Shared plumbing for the loopback fake servers (stdlib only, 127.0.0.1, ephemeral port)."""

import json
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


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
    headers: dict[str, str] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # default 5 overflows under concurrent clients -> 1 s SYN retransmits

    def __init__(self, owner: "LoopbackServer") -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out / hang up mid-response are expected in tests; stay quiet.
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers after stop()

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
        out = self.server.owner.handle(incoming)
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
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload and self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _dispatch

    def log_message(self, format: str, *args: Any) -> None:
        return


class LoopbackServer:
    """Base class: subclasses implement ``handle``. Use ``with Fake() as f:`` or ``start()``/``stop()``."""

    def __init__(self) -> None:
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.RLock()

    def handle(self, req: Incoming) -> Outgoing:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash). Only valid after ``start()``."""
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        if self._httpd is None:
            self._httpd = _Server(self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
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
