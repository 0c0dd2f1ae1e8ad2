"""The HTTP service's requests: routing, the bearer token and body limits (`server.py` holds the connections).

| route | answer |
|---|---|
| `GET /healthz` | 200 (no token needed) |
| `GET /metrics` | Prometheus text (no token needed) |
| `POST /v1/analyses` | 202 with the new analysis, 200 with the one already running for that name |
| `GET /v1/analyses/{name}` | 200 with the latest analysis for that name, 404 when there is none |
| `POST /flagger/{hook}` | Flagger's webhooks (`flagger.py`) |

Errors are JSON `{"error": "..."}` (plain text for Flagger, which shows the body in its events).
"""

from __future__ import annotations

import hmac
import io
import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ragjudge.errors import RagjudgeError
from ragjudge.serve import flagger
from ragjudge.serve.analyses import Busy, NamesFull, Registry
from ragjudge.serve.bodies import MAX_BODY_BYTES, AnalysisBody, BadRequest, FlaggerPayload, parse_json, validate
from ragjudge.serve.exposition import CONTENT_TYPE, exposition
from ragjudge.serve.state import view

if TYPE_CHECKING:
    from ragjudge.serve.server import ServeServer


# A body over the limit is still read (up to this much) before the 400, so the client sees the answer
# instead of a connection reset.
_DRAIN_BYTES = 1024 * 1024
_PUBLIC = ("/healthz", "/metrics")


class _Deadline(io.RawIOBase):
    """A connection's reads, each bounded by what is left of one deadline for the whole request.

    A socket timeout alone bounds each read, so a client dripping a byte a second would hold its
    thread for ever; here the head and body together get `serve.read_timeout_s`.
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("read deadline")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _Reply(Exception):
    """Stop handling and answer with this."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


class Handler(BaseHTTPRequestHandler):
    server: ServeServer
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers at shutdown
    server_version = "ragjudge-serve"

    # ------------------------------------------------------------------ plumbing

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        # The deadline counts from the connection's arrival, its time in the lobby included.
        self.rfile = io.BufferedReader(_Deadline(self.connection, self.server.read_deadline()))

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def log_message(self, format: str, *args: Any) -> None:
        return  # our own access log is in _handle; the default one writes to stderr unstructured

    def _handle(self, method: str) -> None:
        started = time.monotonic()
        path = urlsplit(self.path).path
        try:
            status, body, headers = self._route(method, path)
        except _Reply as reply:
            status, body, headers = reply.status, reply.body, reply.headers
        except Exception as exc:  # the last line of defence: an answer, never a dropped connection
            status, body, headers = 500, {"error": f"internal error: {type(exc).__name__}"}, {}
        self._send(status, body, headers)
        self.server.log({"event": "request", "method": method, "path": path, "status": status, "ms": _ms(started)})

    def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
        if isinstance(body, str):
            payload, ctype = body.encode("utf-8", "replace"), "text/plain; charset=utf-8"
        else:
            payload, ctype = json.dumps(body, ensure_ascii=False).encode("utf-8", "replace"), "application/json"
        # Writing is bounded too: a client that stops reading does not keep the thread.
        self.connection.settimeout(self.server.read_timeout_s)
        self.send_response(status)
        headers = {"Content-Type": ctype, **headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _body(self, as_text: bool) -> Any:
        if self.headers.get("Transfer-Encoding"):
            raise _Reply(400, _error("send the body with a Content-Length, not chunked", as_text))
        given = self.headers.get_all("Content-Length") or ["0"]
        # Plain ASCII digits only: int() also takes "1_0", "+10", " 10" and "²" would fail it.
        if len(given) > 1 or not (given[0].isascii() and given[0].isdigit()):
            raise _Reply(400, _error("Content-Length is not a number (plain digits, given once)", as_text))
        length = int(given[0])
        if length > MAX_BODY_BYTES:
            if length <= _DRAIN_BYTES:
                self._read(length, as_text)
            raise _Reply(400, _error(f"the body is {length} bytes; the limit is {MAX_BODY_BYTES} (64 kB)", as_text))
        raw = self._read(length, as_text) if length > 0 else b""
        try:
            return parse_json(raw)
        except BadRequest as exc:
            raise _Reply(400, _error(str(exc), as_text)) from None

    def _read(self, length: int, as_text: bool) -> bytes:
        try:
            return self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            seconds = f"{self.server.read_timeout_s:g}"
            raise _Reply(
                408, _error(f"the body did not arrive within {seconds} s (serve.read_timeout_s)", as_text)
            ) from None

    def _authorised(self, extra: str | None = None) -> bool:
        """The bearer token (or, for Flagger, `metadata.token`), compared in constant time."""
        token = self.server.token
        if token is None:
            return True
        given = self.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        header_ok = _same_secret(value.strip(), token) and scheme.lower() == "bearer"
        extra_ok = extra is not None and _same_secret(extra, token)
        return header_ok or extra_ok

    def _require_token(self, as_text: bool = False, extra: str | None = None) -> None:
        if not self._authorised(extra):
            raise _Reply(
                401,
                _error("missing or wrong bearer token (Authorization: Bearer <token>)", as_text),
                {"WWW-Authenticate": 'Bearer realm="ragjudge"'},
            )

    # ------------------------------------------------------------------ routes

    def _route(self, method: str, path: str) -> tuple[int, Any, dict[str, str]]:
        registry = self.server.registry
        if path == "/healthz":
            _allow(method, "GET")
            return 200, {"status": "ok"}, {}
        if path == "/metrics":
            _allow(method, "GET")
            return 200, exposition(registry), {"Content-Type": CONTENT_TYPE}
        if path == "/v1/analyses":
            _allow(method, "POST")
            self._require_token()
            return self._post_analysis(registry)
        if path.startswith("/v1/analyses/"):
            _allow(method, "GET")
            self._require_token()
            name = unquote(path.removeprefix("/v1/analyses/"))
            latest = registry.latest(name)
            if latest is None:
                return 404, {"error": f"no analysis for {name!r}"}, {}
            return 200, view(latest), {}
        if path.startswith("/flagger/"):
            _allow(method, "POST", as_text=True)
            return self._flagger(registry, path.removeprefix("/flagger/"))
        raise _Reply(404, {"error": f"no such endpoint: {path}"})

    def _post_analysis(self, registry: Registry) -> tuple[int, Any, dict[str, str]]:
        data = self._body(as_text=False)
        try:
            body = validate(AnalysisBody, data)
        except BadRequest as exc:
            raise _Reply(400, {"error": str(exc)}) from None
        try:
            started = registry.start(body.spec())
        except Busy as busy:
            return 429, _busy(busy, as_text=False), {"Retry-After": str(busy.retry_after_s)}
        except NamesFull as full:
            return 503, {"error": str(full)}, {}
        except RagjudgeError as exc:
            return 400, {"error": _message(exc)}, {}
        return (202 if started.created else 200), view(started.analysis), {}

    def _flagger(self, registry: Registry, hook: str) -> tuple[int, Any, dict[str, str]]:
        if hook not in flagger.HOOKS:
            # Before the token: an unknown hook is a wiring mistake worth naming to anyone.
            raise _Reply(404, f"unknown hook {hook!r}; ragjudge answers {', '.join(flagger.HOOKS)}")
        data = self._body(as_text=True)
        # Flagger cannot send headers: its token comes in the webhook's metadata.
        meta = data.get("metadata") if isinstance(data, dict) else None
        meta_token = meta.get("token") if isinstance(meta, dict) else None
        self._require_token(as_text=True, extra=meta_token if isinstance(meta_token, str) else None)
        try:
            payload = validate(FlaggerPayload, data)
            answer = flagger.answer(hook, registry, payload.spec())
        except BadRequest as exc:
            return 400, str(exc), {}
        except RagjudgeError as exc:
            return 400, _message(exc), {}
        headers = {"Retry-After": str(answer.retry_after_s)} if answer.retry_after_s is not None else {}
        self.server.log(
            {
                "event": "flagger",
                "hook": hook,
                "name": payload.name,
                "checksum": payload.checksum,
                "status": answer.status,
                "answer": answer.text,
            }
        )
        return answer.status, answer.text, headers


def _same_secret(given: str, expected: str) -> bool:
    """Constant-time; any text compares (a lone surrogate cannot be encoded strictly: it was a 500)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8", "replace"))


def _allow(method: str, allowed: str, as_text: bool = False) -> None:
    if method != allowed:
        raise _Reply(405, _error(f"use {allowed}", as_text), {"Allow": allowed})


def _error(message: str, as_text: bool) -> Any:
    return message if as_text else {"error": message}


def _message(exc: RagjudgeError) -> str:
    return f"{exc.message} (tip: {exc.tip})" if exc.tip else exc.message


def _busy(busy: Busy, as_text: bool) -> Any:
    return _error(f"too many analyses running; retry after {busy.retry_after_s} s", as_text)


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
