"""A small bilingual customer-service RAG service to point ragjudge at.

Standard library only. It ranks a JSON corpus with BM25 (lowercase ASCII
words; character bigrams for Chinese), answers extractively from the best
sentences of the top passage, and declines when nothing scores well enough.

It carries deliberate, deterministic flaws so that the example gate has
something to catch:

* retrieval is purely lexical, so an English question about a policy that is
  only written in Chinese (or the reverse) retrieves the wrong documents;
* answers keep only the two sentences with the most word overlap, so a detail
  phrased differently from the question ("expires" for "valid") is dropped;
* a "house note" is appended to English answers drawn from the shipping-fee
  document, and it states a policy no passage supports.

Run it with ``python examples/rag_service.py --port 8765`` and send
``POST /ask`` with ``{"question": "..."}``.

It also holds conversations, two ways, each streamed as Server-Sent Events:

* ``POST /v1/chat/completions``, OpenAI-compatible and stateless: the client sends the whole
  conversation in ``messages``; with ``"stream": true`` the answer comes as chunks
  (``choices.0.delta.content``) ending in ``[DONE]``, and the passages ride in a top-level
  ``references`` list on the first chunk;
* ``POST /chat``, stateful: ``{"message": "...", "conversation_id": null}`` starts a conversation,
  and the service answers with named events (``retrieval``, ``token``..., ``done`` carrying the
  ``conversation_id`` to send next time, then ``end``).

``POST /ask`` also takes an optional ``history`` (the same list of ``{role, content}`` messages).
A follow-up that is too short to find anything alone ("那运费谁出？") is read together with the
conversation's earlier questions.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_CORPUS = Path(__file__).resolve().parent / "corpus" / "docs.json"
DEFAULT_PORT = 8765
TOP_K = 3
ANSWER_SENTENCES = 2
MAX_BODY_BYTES = 64_000

# Best BM25 score bands: below REFUSE_BELOW the service declines.
REFUSE_BELOW = 3.0
MEDIUM_FROM = 6.0
HIGH_FROM = 10.0

K1 = 1.5
B = 0.75

REFUSAL_EN = "Sorry, I don't have information about that."
REFUSAL_ZH = "抱歉，知识库中没有相关信息。"

# The deliberate flaw: an unsupported marketing line bolted onto one topic.
HOUSE_NOTES_EN = {
    "doc-logistics-2": "Shipping is always free, and every parcel is insured up to $500 at no extra charge.",
}

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_TOKEN_SOURCE = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?])\s+")
_STOP_TEXT = """
a an the is are was were be been am to of in on for and or it its this that these with as at by from
your you yours we our us i me my mine if not no do does did can could will would should may might
what when where which who whom why how there here have has had get got so than then too very
about into out up any all some just also s t
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclass(frozen=True)
class Document:
    """One corpus entry."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Hit:
    """A document and its BM25 score for one question."""

    doc: Document
    score: float


def _stem(word: str) -> str:
    """A very light English stemmer: drop a plural `s`."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _cjk_tokens(run: str) -> list[str]:
    """Character bigrams of a CJK run; a lone character stands for itself."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """Lowercase ASCII words (minus stop words) and CJK character bigrams."""
    out: list[str] = []
    for piece in _TOKEN_SOURCE.findall(text.lower()):
        if _ASCII_WORD.fullmatch(piece):
            if piece not in _STOP_WORDS:
                out.append(_stem(piece))
        else:
            out.extend(_cjk_tokens(piece))
    return out


def is_chinese(text: str) -> bool:
    """Whether the text contains any CJK characters."""
    return bool(_CJK_RUN.search(text))


def split_sentences(text: str) -> list[str]:
    """Split on Chinese and English sentence ends, keeping the punctuation."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def load_corpus(path: Path) -> list[Document]:
    """Read a JSON list of {id, title, text} objects."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a JSON list of documents")
    return [Document(str(d["id"]), str(d["title"]), str(d["text"])) for d in raw]


class Bm25Index:
    """Okapi BM25 over title and text of each document."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs = list(docs)
        self.freqs = [Counter(tokenize(f"{d.title} {d.text}")) for d in self.docs]
        self.lengths = [sum(f.values()) for f in self.freqs]
        self.avg_length = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        doc_freq: Counter[str] = Counter()
        for freq in self.freqs:
            doc_freq.update(freq.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in doc_freq.items()}

    def _score(self, query: Sequence[str], index: int) -> float:
        freq, length = self.freqs[index], self.lengths[index]
        norm = K1 * (1 - B + B * length / self.avg_length)
        total = 0.0
        for term in query:
            tf = freq.get(term, 0)
            if tf:
                total += self.idf[term] * tf * (K1 + 1) / (tf + norm)
        return total

    def search(self, question: str, k: int = TOP_K) -> list[Hit]:
        """The top `k` documents that share a term with the question (ties keep corpus order)."""
        query = list(dict.fromkeys(tokenize(question)))
        hits = [Hit(doc, self._score(query, i)) for i, doc in enumerate(self.docs)]
        hits = [h for h in hits if h.score > 0]
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:k]


class RagService:
    """Retrieval, extractive answering and refusal, without any HTTP."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.index = Bm25Index(docs)

    def _sentence_score(self, query: set[str], sentence: str) -> float:
        return sum(self.index.idf.get(t, 0.0) for t in query & set(tokenize(sentence)))

    def extract(self, question: str, doc: Document) -> str:
        """The best-matching sentences of `doc`, in their original order."""
        query = set(tokenize(question))
        sentences = split_sentences(doc.text)
        scored = [(self._sentence_score(query, s), i) for i, s in enumerate(sentences)]
        best = sorted((pair for pair in scored if pair[0] > 0), key=lambda p: (-p[0], p[1]))
        chosen = sorted(i for _, i in best[:ANSWER_SENTENCES]) or [0]
        joiner = "" if is_chinese(doc.text) else " "
        return joiner.join(sentences[i] for i in chosen)

    def answer(self, question: str, earlier: Sequence[str] = ()) -> dict[str, Any]:
        """The reply body for one question (without timing); `earlier`: the conversation's earlier questions."""
        hits = self.index.search(question)
        if earlier and hits and hits[0].score < REFUSE_BELOW:
            # A follow-up that finds something, but too little alone, is read with what was asked before it.
            question = " ".join([*earlier[-2:], question])
            hits = self.index.search(question)
        top = hits[0] if hits else None
        retrieved = [{"id": h.doc.id, "title": h.doc.title, "text": h.doc.text} for h in hits]
        best = top.score if top else 0.0
        if top is None or best < REFUSE_BELOW:
            decline = REFUSAL_ZH if is_chinese(question) else REFUSAL_EN
            return _reply(decline, True, "none", retrieved, [])
        text = self.extract(question, top.doc)
        if not is_chinese(question) and top.doc.id in HOUSE_NOTES_EN:
            text = f"{text} {HOUSE_NOTES_EN[top.doc.id]}"
        citations = [{"source": top.doc.id, "title": top.doc.title}]
        return _reply(text, False, confidence_for(best), retrieved, citations)


def confidence_for(score: float) -> str:
    """Confidence band for the best BM25 score."""
    if score >= HIGH_FROM:
        return "high"
    if score >= MEDIUM_FROM:
        return "medium"
    if score >= REFUSE_BELOW:
        return "low"
    return "none"


def _reply(
    answer: str,
    refused: bool,
    confidence: str,
    retrieved: list[dict[str, str]],
    citations: list[dict[str, str]],
) -> dict[str, Any]:
    chars = len(answer) + sum(len(r["text"]) for r in retrieved)
    return {
        "answer": answer,
        "refused": refused,
        "confidence": confidence,
        "retrieved": retrieved,
        "citations": citations,
        "costUsd": round(chars * 2e-7, 6),
    }


MAX_CONVERSATIONS = 10_000
"""Conversations `/chat` remembers; the oldest is forgotten first."""


class Conversations:
    """The questions asked so far in each `/chat` conversation, by id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: OrderedDict[str, list[str]] = OrderedDict()

    def earlier(self, conversation_id: str | None) -> tuple[str, list[str]]:
        """The conversation's id (a new one for None or an unknown id) and its questions so far."""
        with self._lock:
            if conversation_id is None or conversation_id not in self._asked:
                conversation_id = uuid.uuid4().hex[:16]
                self._asked[conversation_id] = []
                while len(self._asked) > MAX_CONVERSATIONS:
                    self._asked.popitem(last=False)
            self._asked.move_to_end(conversation_id)
            return conversation_id, list(self._asked[conversation_id])

    def add(self, conversation_id: str, question: str) -> None:
        with self._lock:
            if conversation_id in self._asked:
                self._asked[conversation_id].append(question)


def pieces(text: str) -> list[str]:
    """The answer as a stream sends it: words (with their space) for English, a few characters for Chinese."""
    if is_chinese(text):
        return [text[i : i + 4] for i in range(0, len(text), 4)]
    return re.findall(r"\S+\s*", text) or [text]


def user_questions(messages: Any) -> list[str]:
    """The user's questions, in order, from an OpenAI-style list of messages; BadRequest if it is not one."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest('"messages" must be a non-empty list of {role, content} objects')
    questions = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise BadRequest('every message must be an object with a "content" string')
        if message.get("role") == "user":
            questions.append(message["content"])
    if not questions:
        raise BadRequest("messages hold no user message")
    return questions


class BadRequest(Exception):
    """A request body the service cannot use (answered with 400)."""


class RagServer(ThreadingHTTPServer):
    """A threading HTTP server that owns a RagService."""

    daemon_threads = True
    # The default backlog of 5 drops connections when a client opens 8 at once,
    # and the kernel's SYN retry then adds a full second to that request's latency.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: RagService) -> None:
        self.service = service
        self.conversations = Conversations()
        super().__init__(address, RagHandler)


class RagHandler(BaseHTTPRequestHandler):
    """`POST /ask`, `POST /v1/chat/completions`, `POST /chat` and `GET /healthz`."""

    server_version = "ragjudge-example/0.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request logging."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/healthz":
            self._send(200, b"ok", "text/plain; charset=utf-8")
        else:
            self._send_json(404, {"error": f"no route for GET {self.path}"})

    def do_POST(self) -> None:
        route = self.path.split("?", 1)[0]
        handlers = {"/ask": self._ask, "/v1/chat/completions": self._chat_completions, "/chat": self._chat}
        if route not in handlers:
            self._send_json(404, {"error": f"no route for POST {self.path}"})
            return
        try:
            handlers[route]()
        except BadRequest as exc:
            self._send_json(400, {"error": str(exc)})

    def _ask(self) -> None:
        started = time.perf_counter()
        shape = 'body must be a JSON object with a non-empty "question" string'
        data = self._read_body(shape)
        question = data.get("question")
        if not isinstance(question, str) or not question.strip():
            raise BadRequest(shape)
        history = data.get("history")
        earlier = user_questions([*history, {"role": "user", "content": question}])[:-1] if history else []
        assert isinstance(self.server, RagServer)
        reply = self.server.service.answer(question, earlier)
        reply["latencyMs"] = round((time.perf_counter() - started) * 1000)
        self._send_json(200, reply)

    def _chat_completions(self) -> None:
        data = self._read_body()
        questions = user_questions(data.get("messages"))
        assert isinstance(self.server, RagServer)
        reply = self.server.service.answer(questions[-1], questions[:-1])
        model = str(data.get("model") or "example-rag")
        ident, created = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time())
        if not data.get("stream"):
            message = {"role": "assistant", "content": reply["answer"]}
            self._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "references": reply["retrieved"],
                },
            )
            return
        head = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
        chunks: list[dict[str, Any]] = [
            {**head, "choices": [{"index": 0, "delta": {"role": "assistant"}}], "references": reply["retrieved"]}
        ]
        chunks += [{**head, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces(reply["answer"])]
        chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self._send_events([(None, chunk) for chunk in chunks] + [(None, "[DONE]")])

    def _chat(self) -> None:
        data = self._read_body()
        message, asked_id = data.get("message"), data.get("conversation_id")
        if not isinstance(message, str) or not message.strip():
            raise BadRequest('body must be a JSON object with a non-empty "message" string')
        if asked_id is not None and not isinstance(asked_id, str):
            raise BadRequest('"conversation_id" must be a string or null')
        assert isinstance(self.server, RagServer)
        conversation_id, earlier = self.server.conversations.earlier(asked_id)
        reply = self.server.service.answer(message, earlier)
        self.server.conversations.add(conversation_id, message)
        events: list[tuple[str | None, Any]] = [("retrieval", {"passages": reply["retrieved"]})]
        events += [("token", {"text": p}) for p in pieces(reply["answer"])]
        # Its last event is `done`, as hand-written and Dify-style services end theirs (not LangServe's `end`).
        events.append(("done", {"conversation_id": conversation_id, "refused": reply["refused"]}))
        self._send_events(events)

    def _send_events(self, events: Sequence[tuple[str | None, Any]]) -> None:
        """A Server-Sent Events reply: each event's name (None: unnamed) and its data (JSON, or text as is)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            self.wfile.write(frame.encode("utf-8"))
            self.wfile.flush()

    def _read_body(self, shape: str = "body must be a JSON object") -> dict[str, Any]:
        """The JSON object in the body; raises BadRequest (`shape` when it is not an object) when unusable."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise BadRequest("invalid Content-Length") from None
        if length <= 0 or length > MAX_BODY_BYTES:
            raise BadRequest(f"body must be 1 to {MAX_BODY_BYTES} bytes of JSON")
        try:
            data = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise BadRequest("body is not valid UTF-8 JSON") from None
        if not isinstance(data, dict):
            raise BadRequest(shape)
        return data


def make_server(host: str = "127.0.0.1", port: int = 0, corpus: Path | None = None) -> ThreadingHTTPServer:
    """A ready (not yet serving) server; port 0 picks a free port."""
    service = RagService(load_corpus(corpus or DEFAULT_CORPUS))
    return RagServer((host, port), service)


def serve_in_thread(host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread; returns it and its `/ask` URL.

    Stop it with ``server.shutdown(); server.server_close()``.
    """
    server = make_server(host, port)
    thread = threading.Thread(target=server.serve_forever, name="rag-service", daemon=True)
    thread.start()
    bound_host, bound_port = server.server_address[:2]
    return server, f"http://{_url_host(str(bound_host))}:{bound_port}/ask"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry: serve until interrupted."""
    parser = argparse.ArgumentParser(description="Example bilingual customer-service RAG service.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    args = parser.parse_args(argv)
    server = make_server(args.host, args.port)
    host, port = server.server_address[:2]
    print(f"serving on http://{_url_host(str(host))}:{port}/ask (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
