"""The RAG side of a run: a loopback RAG server whose every reply the test controls, and the values it
stands for (a case asked, a trace, an endpoint result).

`RagServer` answers `POST` (or `GET ?question=`) from a dict question -> reply. A reply is
either a JSON-able dict (sent as `application/json`) or a `Raw` for errors, garbage, slow or
oversized bodies. It records every request so tests can check what ragjudge sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ragjudge.cases.case import Case
from ragjudge.endpoint.result import EndpointResult
from ragjudge.endpoint.trace import Passage, Trace
from tests.fakes._http import Incoming, LoopbackServer, Outgoing, free_port


@dataclass(frozen=True)
class Raw:
    """A reply sent exactly as given."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay_s: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    question: str | None


Reply = Mapping[str, Any] | Raw


class RagServer(LoopbackServer):
    """`with RagServer({"q": {...}}) as rag:` then point ragjudge at `rag.url`."""

    url_path = "/ask"
    keeps_url = True

    def __init__(self, replies: Mapping[str, Reply], default: Reply | None = None) -> None:
        super().__init__()
        self.replies = dict(replies)
        self.default: Reply = default if default is not None else Raw(404, b'{"error": "unknown question"}')
        self.seen: list[Seen] = []

    def record_and_lookup(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
        if seen.question is not None and seen.question in self.replies:
            return self.replies[seen.question]
        return self.default

    def handle(self, req: Incoming) -> Outgoing:
        question: str | None = None
        if req.raw_body:
            try:
                data = json.loads(req.raw_body.decode("utf-8"))
                if isinstance(data, dict) and isinstance(data.get("question"), str):
                    question = data["question"]
            except (UnicodeDecodeError, json.JSONDecodeError):
                question = None
        if question is None:
            values = parse_qs(urlsplit(req.raw_path).query).get("question")
            question = values[0] if values else None
        reply = self.record_and_lookup(Seen(req.method, req.path, req.headers, req.raw_body, question))
        if isinstance(reply, Raw):
            if reply.delay_s:
                time.sleep(reply.delay_s)
            return Outgoing(reply.status, reply.body, {"Content-Type": reply.content_type, **reply.headers})
        return Outgoing(200, json.dumps(reply).encode("utf-8"), {"Content-Type": "application/json"})


def closed_port_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/ask"


def answer(
    text: str,
    ids: Sequence[str] = (),
    passages: Mapping[str, str] | None = None,
    *,
    refused: bool = False,
    confidence: str | None = "high",
    cost_usd: float | None = None,
) -> dict[str, Any]:
    """A reply in the seeds' shape: `retrieved` objects with id and text."""
    texts = dict(passages or {})
    reply: dict[str, Any] = {
        "answer": text,
        "refused": refused,
        "retrieved": [{"id": i, "title": i, "text": texts.get(i, "")} for i in ids],
    }
    if confidence is not None:
        reply["confidence"] = confidence
    if cost_usd is not None:
        reply["cost_usd"] = cost_usd
    return reply


def make_case(
    case_id: str = "c1",
    question: str = "How long do refunds take?",
    *,
    golden: Sequence[str] = (),
    category: str | None = "refund",
    should_answer: bool = True,
    must_mention: Sequence[str] = (),
    must_not_mention: Sequence[str] = (),
) -> Case:
    return Case(
        id=case_id,
        question=question,
        expected=None,
        golden_context_ids=tuple(golden),
        category=category,
        should_answer=should_answer,
        must_mention=tuple(must_mention),
        must_not_mention=tuple(must_not_mention),
        source=None,
        difficulty=None,
        tags=(),
        origin="test",
    )


def make_trace(
    text: str = "Refunds take 5 days.",
    ids: Sequence[str] = (),
    passages: Mapping[str, str] | None = None,
    *,
    refused: bool = False,
    confidence: str | None = "high",
    latency_ms: float = 100.0,
    cost_usd: float | None = None,
) -> Trace:
    texts = dict(passages or {})
    return Trace(
        answer=text,
        refused=refused,
        confidence=confidence,
        passages=tuple(Passage(i, i, texts.get(i, "")) for i in ids),
        citations=(),
        cost_usd=cost_usd,
        server_latency_ms=None,
        latency_ms=latency_ms,
    )


def ok_result(trace: Trace, attempts: int = 1) -> EndpointResult:
    return EndpointResult(
        trace=trace, error=None, attempts=attempts, retry_wait_ms=0.0, total_ms=trace.latency_ms, status=200
    )


def error_result(reason: str, attempts: int = 3) -> EndpointResult:
    return EndpointResult(trace=None, error=reason, attempts=attempts, retry_wait_ms=0.0, total_ms=1.0, status=500)
