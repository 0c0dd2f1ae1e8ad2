"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for use with the real ``openai`` SDK.

Example::

    with FakeOpenAI(responder=queue(Reply(content='{"score": 4}'))) as fake:
        client = OpenAI(base_url=fake.base_url, api_key="sk-test-123")  # or fake.client()
        client.chat.completions.create(model="gpt-4o-mini", messages=[...])
        assert fake.requests[0]["body"]["model"] == "gpt-4o-mini"
"""

import copy
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from tests.fakes._http import Handler, Incoming, LoopbackServer, Outgoing

if TYPE_CHECKING:
    import openai

__all__ = [
    "JSON_SCHEMA_UNSUPPORTED",
    "FakeOpenAI",
    "Reply",
    "Responder",
    "default_error",
    "queue",
    "rate_limited_once",
    "reject_json_schema",
]


@dataclass
class Reply:
    """What the fake answers to one ``POST /v1/chat/completions``.

    ``status != 200`` -> an OpenAI error body: ``error`` if given (the *inner* dict
    ``{"message", "type", "param", "code"}`` or the full ``{"error": {...}}``), else a stock one
    for the status.
    ``choices`` (optional) gives distinct contents per choice when the request has ``n`` > 1 (cycled);
    otherwise every choice gets ``content``.
    ``reasoning`` and ``cut_after_chars`` shape the reply of a reasoning model and of a stream that breaks.
    """

    content: str | None = None
    status: int = 200
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    delay_s: float = 0.0
    usage: tuple[int, int] = (100, 20)  # (prompt_tokens, completion_tokens), reported verbatim
    choices: list[str | None] | None = None
    reasoning: str | None = None
    """The model's thinking, as DeepSeek-style ``reasoning_content``: streamed in word-sized deltas before the
    content's, or on the plain completion's message."""
    cut_after_chars: int | None = None
    """``"stream": true`` only: the stream breaks after this many characters of ``content`` (mid-delta): no
    finish chunk, no usage, no ``[DONE]``, and the chunked body is never terminated (the connection closes)."""
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None
    """``"stream": true`` only: the model calls these tools (name, arguments) instead of answering: each streamed
    as OpenAI does, a ``tool_calls`` delta naming it, then one with its arguments, finish reason ``tool_calls``."""


Responder = Callable[[dict[str, Any], int], Reply]
"""``(request_json_body, call_index) -> Reply``; ``call_index``: 0-based over all chat calls to the server."""

JSON_SCHEMA_UNSUPPORTED: dict[str, Any] = {
    "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
    "type": "invalid_request_error",
    "param": "response_format",
    "code": None,
}

_STOCK_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Bad request.", "invalid_request_error", None),
    401: (
        "Incorrect API key provided: sk-test-***. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
    ),
    403: ("You are not allowed to access this resource.", "invalid_request_error", "unsupported_country"),
    404: (
        "The model does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    429: (
        "Rate limit reached for gpt-4o-mini in organization org-test on requests per min (RPM): "
        "Limit 3, Used 3, Requested 1. Please try again in 1s.",
        "requests",
        "rate_limit_exceeded",
    ),
    500: ("The server had an error while processing your request. Sorry about that!", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}


def default_error(status: int) -> dict[str, Any]:
    """A realistic ``{"error": {...}}`` body for ``status``."""
    message, type_, code = _STOCK_ERRORS.get(status, (HTTPStatus(status).phrase, "api_error", None))
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


@dataclass(frozen=True)
class _BrokenStream:
    """The body of a stream that breaks: its SSE events, each sent as one chunk, and no last chunk."""

    events: list[str]


def _as_responder(r: "Reply | Responder | None") -> Responder:
    if r is None:
        return lambda body, i: Reply(content="ok")
    if isinstance(r, Reply):
        reply = r
        return lambda body, i: copy.deepcopy(reply)
    return r


def queue(*replies: Reply) -> Responder:
    """Answer with ``replies`` in order (counting calls to *this* responder); the last one repeats forever."""
    if not replies:
        raise ValueError("queue() needs at least one Reply")
    lock, state = threading.Lock(), {"n": 0}

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        with lock:
            idx = min(state["n"], len(replies) - 1)
            state["n"] += 1
        return copy.deepcopy(replies[idx])

    return responder


def reject_json_schema(then: "Reply | Responder | None" = None) -> Responder:
    """400 (like models without structured outputs) whenever ``response_format.type == "json_schema"``;
    any other request is delegated to ``then`` (a Reply, a Responder, or the default "ok")."""
    nxt = _as_responder(then)

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        rf = body.get("response_format")
        if isinstance(rf, dict) and rf.get("type") == "json_schema":
            return Reply(status=400, error={"error": dict(JSON_SCHEMA_UNSUPPORTED)})
        return nxt(body, call_index)

    return responder


def rate_limited_once(retry_after: str = "1", then: "Reply | Responder | None" = None) -> Responder:
    """First call to this responder: 429 + ``Retry-After: <retry_after>``; later calls go to ``then``."""
    nxt = _as_responder(then)
    lock, state = threading.Lock(), {"fired": False}

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        with lock:
            fire, state["fired"] = not state["fired"], True
        if fire:
            return Reply(status=429, headers={"Retry-After": retry_after}, error=default_error(429))
        return nxt(body, call_index)

    return responder


class FakeOpenAI(LoopbackServer):
    """Fake ``/v1/chat/completions`` (+ ``GET /v1/models``); ``"stream": true`` gets the reply as SSE chunks.

    ``responder``: a Reply (always returned), a Responder callable, or None (always ``content="ok"``);
    assignable later via ``fake.responder = ...``.
    ``api_key``: if set, requests whose ``Authorization: Bearer`` differs get a 401 ``invalid_api_key``.
    A missing Authorization header always gets 401.
    """

    def __init__(self, responder: "Reply | Responder | None" = None, *, api_key: str | None = None) -> None:
        super().__init__()
        self.responder: Reply | Responder | None = responder
        self.api_key = api_key
        self._requests: list[dict[str, Any]] = []
        self._calls = 0

    @property
    def base_url(self) -> str:
        """``{url}/v1`` — pass as ``OpenAI(base_url=...)``."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of every request: ``{"method", "path", "headers" (lower-cased names), "body" (JSON)}``."""
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[Any]:
        """Just the JSON bodies of the chat-completion requests, in arrival order."""
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    @property
    def call_count(self) -> int:
        with self._lock:
            return self._calls

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._calls = 0

    def client(self, api_key: str = "sk-test-0000", **kwargs: Any) -> "openai.OpenAI":
        """A real ``openai.OpenAI`` pointed at this fake (kwargs passed through, e.g. ``max_retries``)."""
        import openai

        return openai.OpenAI(base_url=self.base_url, api_key=api_key, **kwargs)

    # -- server side ---------------------------------------------------------------------------------
    def respond(self, req: Incoming, handler: Handler) -> None:
        out = self.handle(req)
        if not isinstance(out.body, _BrokenStream):
            handler.send(out)
            return
        # Chunked HTTP/1.1, as OpenAI streams: a client can only tell a cut stream from a finished one because
        # the terminating zero-length chunk never comes.
        handler.protocol_version = "HTTP/1.1"
        handler.send_response(200)
        for name, value in out.headers.items():
            handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        for event in out.body.events:
            data = event.encode("utf-8")
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        handler.wfile.flush()

    def handle(self, req: Incoming) -> Outgoing:
        try:
            body = req.json()
        except ValueError:
            body = None
        with self._lock:
            self._requests.append({"method": req.method, "path": req.raw_path, "headers": req.headers, "body": body})
        base = {"x-request-id": f"req_{uuid.uuid4().hex}", "openai-processing-ms": "7"}
        auth = req.headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        if token is None or (self.api_key is not None and token != self.api_key):
            return Outgoing(401, default_error(401), base)
        if req.method == "GET" and req.path == "/v1/models":
            model = {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"}
            return Outgoing(200, {"object": "list", "data": [model]}, base)
        if req.path != "/v1/chat/completions" or req.method != "POST":
            err = {"message": f"Invalid URL ({req.method} {req.path})", "type": "invalid_request_error"}
            return Outgoing(404, {"error": {**err, "param": None, "code": None}}, base)
        if not isinstance(body, dict):
            return Outgoing(400, default_error(400), base)
        with self._lock:
            call_index, self._calls = self._calls, self._calls + 1
        reply = _as_responder(self.responder)(body, call_index)
        if reply.delay_s > 0:
            time.sleep(reply.delay_s)
        headers = {**base, **reply.headers}
        if reply.status != 200:
            err = reply.error if reply.error is not None else default_error(reply.status)
            return Outgoing(reply.status, err if "error" in err else {"error": err}, headers)
        if body.get("stream") is True:
            events = self._stream(body, reply)
            sse = {**headers, "Content-Type": "text/event-stream"}
            if reply.cut_after_chars is not None:
                return Outgoing(200, _BrokenStream(events), sse)
            return Outgoing(200, "".join(events), sse)
        return Outgoing(200, self._completion(body, reply), headers)

    @staticmethod
    def _stream(body: dict[str, Any], reply: Reply) -> list[str]:
        """``"stream": true``: the reply as SSE ``chat.completion.chunk`` events (a role delta, the reasoning
        then the content in word-sized deltas, the finish reason, a usage chunk if
        ``stream_options.include_usage``), then ``[DONE]``; sent at once, one choice. With
        ``cut_after_chars``, the events stop inside the content."""
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "system_fingerprint": "fp_fake",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "choices": [choice]}

        def words(text: str) -> list[str]:
            return [m.group(0) for m in re.finditer(r"\S+\s*|\s+", text)]

        pieces = words(reply.content or "")
        if reply.cut_after_chars is not None:
            kept: list[str] = []
            left = reply.cut_after_chars
            for piece in pieces:
                if left <= 0:
                    break
                kept.append(piece[:left])
                left -= len(piece)
            pieces = kept
        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"reasoning_content": piece}) for piece in words(reply.reasoning or "")]
        events += [chunk({"content": piece}) for piece in pieces]
        for i, (name, arguments) in enumerate(reply.tool_calls or []):
            opened = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": ""}}
            events.append(chunk({"tool_calls": [opened]}))
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": json.dumps(arguments)}}]}))
        lines = [f"data: {json.dumps(event, ensure_ascii=False)}\n\n" for event in events]
        if reply.cut_after_chars is not None:
            return lines
        tail = [chunk({}, "tool_calls" if reply.tool_calls else reply.finish_reason)]
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            prompt, completion = reply.usage
            usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
            tail.append({**base, "choices": [], "usage": usage})
        lines += [f"data: {json.dumps(event, ensure_ascii=False)}\n\n" for event in tail]
        return [*lines, "data: [DONE]\n\n"]

    @staticmethod
    def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        n = body.get("n") or 1
        contents = reply.choices or [reply.content]
        prompt, completion = reply.usage
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": [
                {
                    "index": i,
                    "message": {
                        "role": "assistant",
                        "content": contents[i % len(contents)],
                        "refusal": None,
                        **({"reasoning_content": reply.reasoning} if reply.reasoning is not None else {}),
                    },
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
                for i in range(int(n))
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
            "system_fingerprint": "fp_fake",
        }
