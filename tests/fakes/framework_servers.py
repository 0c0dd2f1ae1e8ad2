"""Loopback stand-ins for RAG services built on popular frameworks, with their real reply shapes.

One small support knowledge base answers through four shapes:

* hayhooks (a Haystack pipeline behind `POST /<pipeline>/run`): the pipeline's output under
  `result`, answers at `result.answer_builder.answers.N` as serialised `GeneratedAnswer`s
  (`data`, `query`, `documents`, `meta`), documents with content-hash `id`s and the stable
  id in `meta.doc_id`; a body without `query` gets FastAPI's 422 `{"detail": [...]}`;
* LangServe (`POST /<path>/invoke`): `{"output": {...}, "metadata": {"run_id": ...}}`, the
  chain's documents as LangChain `Document`s (`page_content`, `metadata`);
* LlamaIndex served with FastAPI: `{"response": ..., "source_nodes": [{"node": {"id_", "text",
  "metadata"}, "score"}]}`;
* a plain FastAPI service: `{"answer": ..., "sources": [{"id", "title", "text"}]}`.

None of them has a boolean refusal field: they decline in sentences, English and Chinese, the
way LLM generators do. Each records the JSON bodies it was sent.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes._http import Incoming, LoopbackServer, Outgoing

DOCS: dict[str, tuple[str, str]] = {
    "doc-refund-1": (
        "Refunds",
        "Refunds are paid back to the original card within 5 working days of the return arriving.",
    ),
    "doc-refund-3": ("Damaged goods", "Refunds for damaged goods need a photo of the damage."),
    "doc-ship-2": ("Shipping", "Shipping is free for orders over 99 yuan."),
    "doc-zh-refund": ("退款", "退款将在5个工作日内退回原支付卡。"),
}


@dataclass(frozen=True)
class Scripted:
    """What the service answers to one question, and which documents it retrieved."""

    answer: str
    doc_ids: tuple[str, ...]


SCRIPT: dict[str, Scripted] = {
    "How long do refunds take?": Scripted(
        "Refunds are paid back to the original card within 5 working days.", ("doc-refund-1", "doc-ship-2")
    ),
    "Do refunds for damaged goods need anything?": Scripted(
        "Sorry for the delay! Refunds for damaged goods need a photo of the damage, and the money is paid back "
        "to the original card within 5 working days.",
        ("doc-refund-3", "doc-refund-1"),
    ),
    "退款多久到账？": Scripted("抱歉让您久等了。退款将在5个工作日内退回原支付卡。", ("doc-zh-refund",)),
    "What is the weather in Paris?": Scripted(
        "I'm sorry, but I don't have information about the weather in our documentation.", ()
    ),
    "明天股市会涨吗？": Scripted("抱歉，暂时无法提供该信息。", ()),
    "Can I get a refund after 5 days?": Scripted("I can't help with that question.", ("doc-refund-1",)),
    "Who won the 1998 World Cup?": Scripted("France won the 1998 World Cup.", ()),
    # Declines no phrase list catches: only a judge can tell (`endpoint.refusal.judge`).
    "Is there a refund after a year?": Scripted("Let me connect you with a human agent for that.", ("doc-refund-1",)),
    "Will it rain tomorrow?": Scripted("Let me connect you with a human agent for that.", ()),
}
"""Answers keyed by question; an unknown question gets the English decline."""

UNKNOWN = Scripted("I don't have information about that.", ())


def doc_hash(doc_id: str) -> str:
    """A content hash, as Haystack gives documents: 64 hex characters, not the team's id."""
    return hashlib.sha256(DOCS[doc_id][1].encode("utf-8")).hexdigest()


def lookup(question: str) -> Scripted:
    return SCRIPT.get(question.strip(), UNKNOWN)


# --- the four reply shapes -------------------------------------------------------------------------


def hayhooks_reply(question: str) -> dict[str, Any]:
    got = lookup(question)
    documents = [
        {
            "id": doc_hash(d),
            "content": DOCS[d][1],
            "meta": {"doc_id": d, "title": DOCS[d][0], "file_path": f"kb/{d}.md"},
            "score": round(0.9 - i * 0.1, 2),
        }
        for i, d in enumerate(got.doc_ids)
    ]
    answer = {
        "data": got.answer,
        "query": question,
        "documents": documents,
        "meta": {"model": "gpt-4o-mini", "finish_reason": "stop"},
    }
    return {"result": {"answer_builder": {"answers": [answer]}}}


def langserve_reply(question: str) -> dict[str, Any]:
    got = lookup(question)
    context = [
        {"page_content": DOCS[d][1], "metadata": {"source": d, "title": DOCS[d][0]}, "type": "Document", "id": None}
        for d in got.doc_ids
    ]
    return {
        "output": {"answer": got.answer, "context": context},
        "metadata": {"run_id": str(uuid.UUID(int=7)), "feedback_tokens": []},
    }


def llamaindex_reply(question: str) -> dict[str, Any]:
    got = lookup(question)
    nodes = [
        {
            "node": {"id_": doc_hash(d), "text": DOCS[d][1], "metadata": {"doc_id": d, "title": DOCS[d][0]}},
            "score": round(0.8 - i * 0.1, 2),
        }
        for i, d in enumerate(got.doc_ids)
    ]
    return {"response": got.answer, "source_nodes": nodes, "metadata": {}}


def fastapi_reply(question: str) -> dict[str, Any]:
    got = lookup(question)
    sources = [{"id": d, "title": DOCS[d][0], "text": DOCS[d][1]} for d in got.doc_ids]
    return {"answer": got.answer, "sources": sources}


def _missing(field: str, body: Any) -> dict[str, Any]:
    """FastAPI's 422 body for a missing field."""
    return {"detail": [{"type": "missing", "loc": ["body", field], "msg": "Field required", "input": body}]}


def _langserve_422(body: Any) -> dict[str, Any]:
    """LangServe 0.3's 422s, as a real server (langserve 0.3.3, pydantic 2) sends them: it validates the body
    itself, so `loc` is relative to the body (`["input"]`) or to the chain's input (`["question"]`, and `[]`
    when the input is not an object)."""
    if not isinstance(body, dict) or "input" not in body:
        return {"detail": [{"type": "missing", "loc": ["input"], "msg": "Field required", "input": body}]}
    given = body["input"]
    if not isinstance(given, dict):
        error = {
            "type": "model_type",
            "loc": [],
            "msg": "Input should be a valid dictionary or instance of Question",
            "input": given,
            "ctx": {"class_name": "Question"},
        }
        return {"detail": [error]}
    return {"detail": [{"type": "missing", "loc": ["question"], "msg": "Field required", "input": given}]}


LANGSERVE_INPUT_SCHEMA = {
    "properties": {"question": {"title": "Question", "type": "string"}},
    "required": ["question"],
    "title": "Question",
    "type": "object",
}
"""What a real LangServe route answers on `GET /rag/input_schema` for a chain typed `input_type=Question`."""


@dataclass(frozen=True)
class Shape:
    """One framework: its path, where the question sits in the body, and its reply."""

    path: str
    question: Callable[[Any], str | None]
    field: str
    reply: Callable[[str], dict[str, Any]]


def _key(name: str) -> Callable[[Any], str | None]:
    return lambda body: body.get(name) if isinstance(body, dict) and isinstance(body.get(name), str) else None


def _langserve_question(body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("input"), dict):
        value = body["input"].get("question")
        return value if isinstance(value, str) else None
    return None


SHAPES = {
    "hayhooks": Shape("/support_rag/run", _key("query"), "query", hayhooks_reply),
    "langserve": Shape("/rag/invoke", _langserve_question, "input", langserve_reply),
    "llamaindex": Shape("/query", _key("query"), "query", llamaindex_reply),
    "fastapi": Shape("/ask", _key("question"), "question", fastapi_reply),
}


def _json(status: int, data: Any) -> Outgoing:
    payload = json.dumps(data, ensure_ascii=False).encode("utf-8")
    return Outgoing(status, payload, {"Content-Type": "application/json"})


class FrameworkServer(LoopbackServer):
    """`with FrameworkServer("hayhooks") as s:` serves that shape on 127.0.0.1; `s.url` is its endpoint."""

    keeps_url = True

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.shape = SHAPES[kind]
        self.url_path = self.shape.path
        self._bodies: list[Any] = []

    @property
    def base(self) -> str:
        return self.origin

    @property
    def bodies(self) -> list[Any]:
        with self._lock:
            return list(self._bodies)

    def handle(self, req: Incoming) -> Outgoing:
        if self.kind == "langserve" and req.method == "GET" and req.raw_path == "/rag/input_schema":
            return _json(200, LANGSERVE_INPUT_SCHEMA)
        if req.method != "POST":
            return Outgoing(501, f"Unsupported method ({req.method!r})")
        if req.raw_path != self.shape.path:
            return _json(404, {"detail": "Not Found"})
        try:
            body = json.loads(req.raw_body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return _json(422, {"detail": [{"type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error"}]})
        with self._lock:
            self._bodies.append(body)
        question = self.shape.question(body)
        if question is None:
            return _json(
                422, _langserve_422(body) if self.shape is SHAPES["langserve"] else _missing(self.shape.field, body)
            )
        return _json(200, self.shape.reply(question))
