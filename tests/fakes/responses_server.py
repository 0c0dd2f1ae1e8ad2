"""A loopback RAG service that speaks the OpenAI Responses API (``POST /v1/responses``), read by the real
``openai`` SDK in tests/fakes/test_responses_fake.py.

It answers from a tiny knowledge base: the first document (in `KNOWLEDGE_BASE` order) one of whose keywords
the question contains, as the document's text plus `` [doc_id]``; no match gets a decline in the question's
language (`DECLINE_EN`, `DECLINE_ZH`). The question is the text of the last ``user`` message of ``input``
(a string ``input`` is one user message).

Example::

    with FakeResponsesRag() as rag:
        client = rag.client()  # a real openai.OpenAI pointed at the fake, max_retries=0
        with client.responses.stream(model="gpt-4o-mini", input="How long do refunds take?") as stream:
            final = stream.get_final_response()
        assert final.output_text == "Refunds are issued within 14 days of the return being received. [refund-policy]"

What a reply looks like, as the real API sends it (the shapes are the SDK's ``openai/types/responses/``):

* every reply carries ``x-request-id`` and ``openai-processing-ms``; connections are HTTP/1.1 keep-alive;
* ``stream: true``: ``Content-Type: text/event-stream; charset=utf-8``, chunked, one ``event: <type>`` /
  ``data: <compact JSON>`` block per event, every event with ``type`` and ``sequence_number`` (0, 1, ...),
  no ``data: [DONE]`` (the Responses API has none). The retrieval is a ``file_search_call`` output item
  (output index 0) in every reply, as the real API shows a file_search tool call whenever it searches; its
  ``results`` are ``null`` unless the request's ``include`` holds ``"file_search_call.results"``. The answer
  is a ``message`` item (output index 1) streamed as word-sized ``response.output_text.delta`` events (one
  per CJK character). Each delta carries an ``obfuscation`` padding string, as the real API does by default;
  ``stream_options: {"include_obfuscation": false}`` leaves it out.
* no stream: the Response object; like the real API's JSON it has no ``output_text`` key (that is the SDK's
  property over ``output``).
* usage is counted, not estimated: ``output_tokens`` is the number of text deltas sent (the same pieces when
  not streamed), ``input_tokens`` the pieces of ``instructions`` and of every input message's text.
* ``max_output_tokens`` smaller than the answer's pieces ends the answer there, ``status: "incomplete"``.

`mode` (a constructor argument, assignable later) picks a failure; see `MODES`.
"""

import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tests.fakes._http import Handler, Incoming, LoopbackServer, Outgoing
from tests.fakes.openai_server import default_error

if TYPE_CHECKING:
    import openai

__all__ = [
    "DECLINE_EN",
    "DECLINE_ZH",
    "FAILED_ERROR",
    "KNOWLEDGE_BASE",
    "MODES",
    "STREAM_ERROR",
    "Doc",
    "FakeResponsesRag",
    "pieces",
]


@dataclass(frozen=True)
class Doc:
    """One knowledge-base document; it matches a question that contains one of its `keywords` (any case)."""

    doc_id: str
    text: str
    keywords: tuple[str, ...]

    @property
    def file_id(self) -> str:
        """A stable ``file-...`` id, shaped like the real API's (22 characters after the prefix)."""
        return "file-" + hashlib.sha256(self.doc_id.encode("utf-8")).hexdigest()[:22]

    @property
    def filename(self) -> str:
        return f"{self.doc_id}.md"

    def matches(self, question: str) -> bool:
        folded = question.casefold()
        return any(k.casefold() in folded for k in self.keywords)


KNOWLEDGE_BASE: tuple[Doc, ...] = (
    Doc("refund-policy", "Refunds are issued within 14 days of the return being received.", ("refund", "money back")),
    Doc("shipping-times", "Express shipping takes 2 business days.", ("shipping", "delivery", "express")),
    Doc("warranty", "Every device carries a 12-month limited warranty.", ("warranty", "guarantee")),
    Doc("退款政策", "退款将在收到退货后 14 天内退回。", ("退款", "退货")),
)
DECLINE_EN = "I'm sorry, I don't have information about that."
DECLINE_ZH = "抱歉，暂时无法提供该信息。"

FAILED_ERROR: dict[str, str] = {
    "code": "server_error",
    "message": "An error occurred while processing your request. You can retry your request, or contact us "
    "through our help center at help.openai.com if the error persists.",
}
"""`response.error` of a ``failed`` response."""

STREAM_ERROR: dict[str, Any] = {
    "type": "server_error",
    "code": "server_error",
    "message": "The server had an error processing your request. Sorry about that! You can retry your request, "
    "or contact us through our help center at help.openai.com if you keep seeing this error.",
    "param": None,
}
"""The error an ``error`` / ``error_nested`` stream reports (the flat event leaves out ``type``)."""

MODES: dict[str, str] = {
    "healthy": "the answer (streamed or not)",
    "failed": "stream: created, in_progress, response.failed (status failed, error FAILED_ERROR, output []); "
    "no stream: 200 with that Response",
    "incomplete": "stream: the answer cut after `partial_deltas` deltas (or max_output_tokens), its item "
    "'incomplete', then response.incomplete (incomplete_details.reason max_output_tokens); "
    "no stream: 200 with that Response",
    "error": "stream: created, in_progress, then an `error` event in the documented flat shape "
    "{type, sequence_number, code, message, param}; no stream: HTTP 500 with STREAM_ERROR",
    "error_nested": "as `error`, but the event nests its fields as the live API sends them: "
    "{type, sequence_number, error: {type, code, message, param}}",
    "cut": "stream: up to `partial_deltas` deltas, then the connection closes mid-body (no terminating chunk, "
    "no response.completed); no stream: half the announced JSON body, then the close",
    "http500": "HTTP 500 with an OpenAI error body, streamed or not",
}
"""Every `mode`, and what it sends."""

_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_PIECE = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+\s*|\s+")


def pieces(text: str) -> list[str]:
    """The fake's tokens: words with their trailing space, and single CJK characters; they join to `text`."""
    return _PIECE.findall(text)


def _compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _texts(content: Any) -> list[str]:
    """The text of one message's ``content``: a string, or a list of ``input_text`` / ``output_text`` parts."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def _messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    """``(role, text)`` for each message of ``input`` (a string is one user message); other items are skipped."""
    raw = body.get("input")
    if isinstance(raw, str):
        return [("user", raw)]
    out: list[tuple[str, str]] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("type", "message") == "message" and isinstance(item.get("role"), str):
            out.append((item["role"], "".join(_texts(item.get("content")))))
    return out


@dataclass
class _Turn:
    """Everything one request's reply is made of."""

    body: dict[str, Any]
    n: int
    created_at: int
    question: str
    answer: str
    found: list[Doc]
    input_tokens: int
    include_results: bool
    obfuscate: bool

    def ident(self, prefix: str) -> str:
        """A stable id for this request, shaped like the real API's (``resp_`` / ``msg_`` / ``fs_`` + 48 hex)."""
        return prefix + "_" + hashlib.sha256(f"{prefix}:{self.n}:{self.question}".encode()).hexdigest()[:48]


class FakeResponsesRag(LoopbackServer):
    """A RAG service behind ``POST /v1/responses`` that the real ``openai`` SDK reads.

    ``mode``: one of `MODES` (default ``"healthy"``), assignable later (``rag.mode = "cut"``).
    ``docs``: the knowledge base (default `KNOWLEDGE_BASE`).
    ``api_key``: if set, a request whose ``Authorization: Bearer`` differs gets 401; a missing one always does.
    ``partial_deltas``: how many text deltas ``incomplete`` and ``cut`` send (default 3).
    ``event_delay_s``: a pause after each streamed event (for time-to-first-token and timeout tests).
    ``clock``: the time source for ``created_at`` / ``completed_at`` (pin it for byte-exact streams).
    """

    protocol_version = "HTTP/1.1"

    def __init__(
        self,
        mode: str = "healthy",
        *,
        docs: Sequence[Doc] = KNOWLEDGE_BASE,
        api_key: str | None = None,
        partial_deltas: int = 3,
        event_delay_s: float = 0.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.docs = tuple(docs)
        self.api_key = api_key
        self.partial_deltas = partial_deltas
        self.event_delay_s = event_delay_s
        self.clock = clock
        self._requests: list[dict[str, Any]] = []
        self._calls = 0

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise ValueError(f"unknown mode {value!r}; one of {', '.join(MODES)}")
        self._mode = value

    @property
    def base_url(self) -> str:
        """``{url}/v1``: pass as ``OpenAI(base_url=...)``."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of every request: ``{"method", "path", "headers" (lower-cased names), "body" (JSON)}``."""
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[Any]:
        """Just the JSON bodies of the ``/v1/responses`` requests, in arrival order."""
        return [r["body"] for r in self.requests if r["path"] == "/v1/responses"]

    @property
    def call_count(self) -> int:
        """``POST /v1/responses`` requests past the key, path and body checks (so no 401, 404 or 400)."""
        with self._lock:
            return self._calls

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._calls = 0

    def client(self, api_key: str = "sk-test-0000", **kwargs: Any) -> "openai.OpenAI":
        """A real ``openai.OpenAI`` pointed at this fake; ``max_retries=0`` unless given (the SDK's default 2
        retries every 5xx and dropped connection)."""
        import openai

        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.base_url, api_key=api_key, **kwargs)

    def reply_to(self, question: str) -> tuple[str, list[Doc]]:
        """The reply text for `question` and the documents that matched it (the first one answers)."""
        found = [d for d in self.docs if d.matches(question)]
        if found:
            return f"{found[0].text} [{found[0].doc_id}]", found
        return (DECLINE_ZH if re.search(f"[{_CJK}]", question) else DECLINE_EN), []

    # -- server side ---------------------------------------------------------------------------------
    def respond(self, req: Incoming, handler: Handler) -> None:
        try:
            body = req.json()
        except ValueError:
            body = None
        with self._lock:
            self._requests.append({"method": req.method, "path": req.raw_path, "headers": req.headers, "body": body})
        headers = {"x-request-id": f"req_{uuid.uuid4().hex}", "openai-processing-ms": "12"}
        early = self._reject(req, body)
        if early is not None:
            handler.send(Outgoing(early.status, early.body, {**headers, **early.headers}))
            return
        assert isinstance(body, dict)
        with self._lock:
            n, self._calls = self._calls, self._calls + 1
        mode, stream = self.mode, body.get("stream") is True
        if mode == "http500" or (mode in ("error", "error_nested") and not stream):
            err = default_error(500) if mode == "http500" else {"error": dict(STREAM_ERROR)}
            handler.send(Outgoing(500, err, headers))
            return
        turn = self._turn(body, n)
        if stream:
            events, cut = self._events(turn, mode)
            self._write_stream(handler, events, cut, headers)
            return
        # Pretty-printed, as the real API sends a non-streamed body.
        payload = json.dumps(self._final(turn, mode), ensure_ascii=False, indent=2).encode("utf-8")
        if mode == "cut":
            handler.send_response(200)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload[: len(payload) // 2])
            handler.close_connection = True
            return
        handler.send(Outgoing(200, payload, {"Content-Type": "application/json", **headers}))

    def _reject(self, req: Incoming, body: Any) -> Outgoing | None:
        """A 401 / 404 / 400 as the real API words it, or None for a request to answer."""
        auth = req.headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else None
        if token is None or (self.api_key is not None and token != self.api_key):
            return Outgoing(401, default_error(401))
        if req.path != "/v1/responses" or req.method != "POST":
            err = {"message": f"Invalid URL ({req.method} {req.path})", "type": "invalid_request_error"}
            return Outgoing(404, {"error": {**err, "param": None, "code": None}})
        if not isinstance(body, dict):
            return Outgoing(400, default_error(400))
        for name, ok in (
            ("model", isinstance(body.get("model"), str)),
            ("input", isinstance(body.get("input"), str | list)),
        ):
            if not ok:
                message = f"Missing required parameter: '{name}'."
                err = {"message": message, "type": "invalid_request_error", "param": name}
                return Outgoing(400, {"error": {**err, "code": "missing_required_parameter"}})
        return None

    def _turn(self, body: dict[str, Any], n: int) -> _Turn:
        messages = _messages(body)
        question = next((text for role, text in reversed(messages) if role == "user"), "")
        answer, found = self.reply_to(question)
        instructions = body.get("instructions")
        texts = [instructions] if isinstance(instructions, str) else []
        include = body.get("include")
        options = body.get("stream_options")
        return _Turn(
            body=body,
            n=n,
            created_at=int(self.clock()),
            question=question,
            answer=answer,
            found=found,
            input_tokens=sum(len(pieces(t)) for t in texts + [text for _, text in messages]),
            include_results=isinstance(include, list) and "file_search_call.results" in include,
            obfuscate=not (isinstance(options, dict) and options.get("include_obfuscation") is False),
        )

    def _limit(self, turn: _Turn, mode: str) -> int | None:
        """How many of the answer's pieces are sent before the reply ends ``incomplete`` (None: all of them)."""
        cap = turn.body.get("max_output_tokens")
        limit = cap if isinstance(cap, int) and not isinstance(cap, bool) else None
        if mode in ("incomplete", "cut") and limit is None:
            limit = self.partial_deltas
        total = len(pieces(turn.answer))
        return limit if limit is not None and limit < total else None

    # -- the objects ------------------------------------------------------------------------------------
    def _response(
        self,
        turn: _Turn,
        status: str,
        output: list[dict[str, Any]],
        *,
        usage: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        incomplete: str | None = None,
        max_output_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The Response object, its fields in the real API's order."""
        body = turn.body
        return {
            "id": turn.ident("resp"),
            "object": "response",
            "created_at": turn.created_at,
            "status": status,
            "background": False,
            "completed_at": int(self.clock()) if status == "completed" else None,
            "error": error,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens", max_output_tokens),
            "max_tool_calls": body.get("max_tool_calls"),
            "model": body["model"],
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "prompt_cache_key": body.get("prompt_cache_key"),
            "reasoning": {"effort": None, "summary": None},
            "safety_identifier": body.get("safety_identifier"),
            "service_tier": "default",
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_logprobs": body.get("top_logprobs", 0),
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": body.get("user"),
            "metadata": body.get("metadata") or {},
        }

    @staticmethod
    def _usage(turn: _Turn, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": turn.input_tokens,
            "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": turn.input_tokens + output_tokens,
        }

    def _search_item(self, turn: _Turn, status: str) -> dict[str, Any]:
        """The ``file_search_call`` item: in progress (no queries yet), or completed with its results."""
        item: dict[str, Any] = {"id": turn.ident("fs"), "type": "file_search_call", "status": status}
        if status != "completed":
            return {**item, "queries": [], "results": None}
        results = [
            {
                "attributes": {"doc_id": d.doc_id},
                "file_id": d.file_id,
                "filename": d.filename,
                "score": round(0.9 - 0.1 * i, 4),
                "text": d.text,
            }
            for i, d in enumerate(turn.found)
        ]
        return {**item, "queries": [turn.question], "results": results if turn.include_results else None}

    @staticmethod
    def _part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}

    def _message(self, turn: _Turn, status: str, text: str | None) -> dict[str, Any]:
        content = [] if text is None else [self._part(text)]
        return {"id": turn.ident("msg"), "type": "message", "status": status, "content": content, "role": "assistant"}

    def _final(self, turn: _Turn, mode: str) -> dict[str, Any]:
        """The non-streamed Response for `mode` (``healthy``, ``failed``, ``incomplete`` or ``cut``)."""
        if mode == "failed":
            return self._response(turn, "failed", [], error=dict(FAILED_ERROR))
        parts = pieces(turn.answer)
        limit = self._limit(turn, "healthy" if mode == "cut" else mode)
        sent = parts if limit is None else parts[:limit]
        status = "completed" if limit is None else "incomplete"
        output = [self._search_item(turn, "completed"), self._message(turn, status, "".join(sent))]
        reason = None if limit is None else "max_output_tokens"
        usage = self._usage(turn, len(sent))
        return self._response(turn, status, output, usage=usage, incomplete=reason, max_output_tokens=limit)

    # -- the stream -------------------------------------------------------------------------------------
    def _events(self, turn: _Turn, mode: str) -> tuple[list[dict[str, Any]], bool]:
        """The events of a streamed reply in `mode`, and whether the connection is then cut mid-body."""
        events: list[dict[str, Any]] = []

        def emit(type_: str, **fields: Any) -> None:
            events.append({"type": type_, "sequence_number": len(events), **fields})

        emit("response.created", response=self._response(turn, "in_progress", []))
        emit("response.in_progress", response=self._response(turn, "in_progress", []))
        if mode == "failed":
            emit("response.failed", response=self._response(turn, "failed", [], error=dict(FAILED_ERROR)))
            return events, False
        if mode == "error":
            flat = {k: v for k, v in STREAM_ERROR.items() if k != "type"}
            emit("error", **flat)
            return events, False
        if mode == "error_nested":
            emit("error", error=dict(STREAM_ERROR))
            return events, False

        fs_id, msg_id = turn.ident("fs"), turn.ident("msg")
        emit("response.output_item.added", output_index=0, item=self._search_item(turn, "in_progress"))
        for phase in ("in_progress", "searching", "completed"):
            emit(f"response.file_search_call.{phase}", output_index=0, item_id=fs_id)
        search = self._search_item(turn, "completed")
        emit("response.output_item.done", output_index=0, item=search)
        emit("response.output_item.added", output_index=1, item=self._message(turn, "in_progress", None))
        at = {"item_id": msg_id, "output_index": 1, "content_index": 0}
        emit("response.content_part.added", **at, part=self._part(""))

        parts = pieces(turn.answer)
        limit = self._limit(turn, mode)
        sent = parts if limit is None else parts[:limit]
        for piece in sent:
            extra = {"obfuscation": self._padding(turn, len(events), piece)} if turn.obfuscate else {}
            emit("response.output_text.delta", **at, delta=piece, logprobs=[], **extra)
        if mode == "cut":
            return events, True

        text = "".join(sent)
        status = "completed" if limit is None else "incomplete"
        emit("response.output_text.done", **at, text=text, logprobs=[])
        emit("response.content_part.done", **at, part=self._part(text))
        message = self._message(turn, status, text)
        emit("response.output_item.done", output_index=1, item=message)
        usage = self._usage(turn, len(sent))
        if limit is None:
            emit("response.completed", response=self._response(turn, "completed", [search, message], usage=usage))
        else:
            final = self._response(
                turn,
                "incomplete",
                [search, message],
                usage=usage,
                incomplete="max_output_tokens",
                max_output_tokens=limit,
            )
            emit("response.incomplete", response=final)
        return events, False

    @staticmethod
    def _padding(turn: _Turn, seq: int, delta: str) -> str:
        """A stable stand-in for the real API's random ``obfuscation`` padding (pads the delta toward 16 chars)."""
        digest = hashlib.sha256(f"{turn.n}:{seq}".encode()).hexdigest()
        return digest[: max(2, 16 - len(delta))]

    def _write_stream(self, handler: Handler, events: list[dict[str, Any]], cut: bool, headers: dict[str, str]) -> None:
        """Send `events` as SSE in HTTP/1.1 chunks, one per event; `cut`: close without the last chunk."""
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for event in events:
            block = f"event: {event['type']}\ndata: {_compact(event)}\n\n".encode()
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            handler.wfile.flush()
            if self.event_delay_s > 0:
                time.sleep(self.event_delay_s)
        if cut:
            handler.close_connection = True
            return
        handler.wfile.write(b"0\r\n\r\n")
