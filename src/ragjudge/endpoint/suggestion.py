"""Which path in a reply the user most likely meant: one guess, shared by `probe`'s suggestions and `run`'s
"did you mean".

Every candidate under the starting point is collected and ranked, so the guess never depends on the order of a
reply's keys (hayhooks lists `retriever` before or after `answer_builder` as the pipeline was built). An answer
is never guessed from a string inside a passage list (a retrieved document's text), from an id (a UUID, a hex
hash, a completion id such as `chatcmpl-...`), from a field that names metadata (`model`, `role`, `query`) or
from an echo of the question. The common frameworks' answer paths rank first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

KNOWN_ANSWER_PATHS = (
    re.compile(r"choices\.0\.message\.content"),  # OpenAI chat completion (and hayhooks' chat route)
    re.compile(r"(result\.)?[^.]+\.answers\.0\.data"),  # hayhooks: an AnswerBuilder's GeneratedAnswer
    re.compile(r"output(\.answer)?"),  # LangServe /invoke: the chain's output, or its `answer` key
    re.compile(r"response"),  # LlamaIndex's Response behind FastAPI
    re.compile(r"(result\.)?answer"),
)
"""Answer paths of the common frameworks, in the order they are preferred."""

TEXT_KEYS = ("answer", "data", "text", "content", "output", "response", "result", "message", "completion")
"""Preferred key names for an answer, best first."""
LIST_KEYS = ("documents", "sources", "source_nodes", "retrieved", "contexts", "context", "docs", "results")
"""Preferred key names for a passage list, best first."""
PASSAGE_TEXT_KEYS = ("text", "content", "page_content", "excerpt", "chunk", "node")
"""A list of objects carrying one of these is a passage list."""
ID_NAMES = ("doc_id", "document_id", "docId", "source_id", "id_", "file_name", "source", "id")
"""Names under which a passage's own id is usually kept, best first."""
_PASSAGE_LIST_NAMES = frozenset({*LIST_KEYS[:-1], "chunks", "passages", "references", "citations", "nodes"})
_NOT_ANSWER_NAMES = frozenset(
    {
        "id",
        "object",
        "model",
        "role",
        "type",
        "finish_reason",
        "stop_reason",
        "system_fingerprint",
        "run_id",
        "query",
        "question",
        "prompt",
        "input",
        "status",
        "lang",
        "language",
        "file_path",
        "url",
        "title",
        "name",
        "confidence",
        "refused",
    }
)
"""Fields that hold metadata or the request, never the answer."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_HEX_HASH = re.compile(r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}", re.IGNORECASE)
_PREFIXED_ID = re.compile(r"[A-Za-z]{2,16}[-_](?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}")
_CONTENT_HASH = re.compile(r"[0-9a-f]{64}", re.IGNORECASE)

MAX_DEPTH = 8
MAX_NODES = 5000
"""Bounds on the walk: a hostile reply costs at most this many nodes."""


def looks_like_id(text: str) -> bool:
    """A UUID, a 32/40/64-hex hash, or a prefixed id such as `chatcmpl-9x...`: not an answer."""
    value = text.strip()
    return bool(_UUID.fullmatch(value) or _HEX_HASH.fullmatch(value) or _PREFIXED_ID.fullmatch(value))


def looks_like_content_hash(text: str) -> bool:
    """64 hex characters, as Haystack gives each document (a hash of its content, not the team's id)."""
    return bool(_CONTENT_HASH.fullmatch(text.strip()))


def same_text(a: str, b: str) -> bool:
    """Equal once whitespace and case are set aside (an echo may be re-spaced)."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def through_passages(data: Any, path: str) -> bool:
    """Whether `path` runs through a passage list of `data` (`retriever.documents.0.content`)."""
    node = data
    for part in path.split(".")[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
        if is_passage_list(node):
            return True
    return False


def is_passage_list(node: Any) -> bool:
    """A list of objects that carry text, as retrievers return them (not any list, e.g. `answers`)."""
    first = node[0] if isinstance(node, list) and node else None
    return isinstance(first, dict) and any(k in first for k in PASSAGE_TEXT_KEYS)


@dataclass(frozen=True)
class _Seen:
    path: str
    value: Any
    name: str
    depth: int
    in_passages: bool


def _walk(node: Any, path: str) -> list[_Seen]:
    """Every value under `node` (lists by their first item), breadth first, bounded."""
    seen: list[_Seen] = []
    level: list[tuple[str, Any, bool]] = [(path, node, False)]
    for depth in range(1, MAX_DEPTH + 1):
        nxt: list[tuple[str, Any, bool]] = []
        for where, item, inside in level:
            if isinstance(item, list):
                children: list[tuple[str, Any]] = [("0", item[0])] if item else []
            elif isinstance(item, dict):
                children = [(str(k), v) for k, v in item.items()]
            else:
                continue
            for key, value in children:
                child = f"{where}.{key}" if where else key
                name = where.rsplit(".", 1)[-1] if key == "0" else key
                passages = inside or (
                    isinstance(value, list) and (is_passage_list(value) or name in _PASSAGE_LIST_NAMES)
                )
                seen.append(_Seen(child, value, name, depth, inside))
                nxt.append((child, value, passages))
                if len(seen) >= MAX_NODES:
                    return seen
        level = nxt
    return seen


def _known_rank(path: str) -> int:
    for rank, pattern in enumerate(KNOWN_ANSWER_PATHS):
        if pattern.fullmatch(path):
            return rank
    return len(KNOWN_ANSWER_PATHS)


def _name_rank(name: str, names: tuple[str, ...]) -> int:
    return names.index(name) if name in names else len(names)


def answer_candidates(node: Any, path: str = "", question: str | None = None) -> list[str]:
    """Paths under `path` that may hold the answer, best first."""
    seen = _walk(node, path)
    good: list[tuple[tuple[int, int, int, int, str], str]] = []
    for s in seen:
        if s.in_passages or not isinstance(s.value, str) or not s.value.strip():
            continue
        if s.name in _NOT_ANSWER_NAMES or looks_like_id(s.value):
            continue
        if question is not None and same_text(s.value, question):
            continue
        rank = (_known_rank(s.path), _name_rank(s.name, TEXT_KEYS), s.depth, -min(len(s.value), 1000), s.path)
        good.append((rank, s.path))
    return [p for _, p in sorted(good)]


def _shared(a: str, b: str | None) -> int:
    if not b:
        return 0
    n = 0
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            break
        n += 1
    return n


def suggest(node: Any, path: str, want: str, question: str | None = None) -> str | None:
    """A path under `path` holding what is wanted (`answer`, `text`, `list`, `passages`, `number`), or None.

    `answer` is text that may be the generated answer (see the module's docstring); `text` is any text.

    A passage list is preferred beside the guessed answer (hayhooks' `answers.0.documents`, not the
    retriever's own copy), then by its name.
    """
    if want == "answer":
        found = answer_candidates(node, path, question)
        return found[0] if found else None
    if want == "text":
        texts = [
            (_name_rank(s.name, TEXT_KEYS), s.depth, s.path)
            for s in _walk(node, path)
            if isinstance(s.value, str) and not s.in_passages
        ]
        return min(texts)[2] if texts else None
    if want == "number":
        numbers = [
            (s.depth, s.path)
            for s in _walk(node, path)
            if isinstance(s.value, int | float) and not isinstance(s.value, bool) and not s.in_passages
        ]
        return min(numbers)[1] if numbers else None
    answer = suggest(node, path, "answer", question)
    lists = [
        (not s.value, -_shared(s.path, answer), _name_rank(s.name, LIST_KEYS), s.depth, s.path)
        for s in _walk(node, path)
        if not s.in_passages and (_document_list(s) if want == "passages" else isinstance(s.value, list))
    ]
    return min(lists)[4] if lists else None


_DOCUMENT_KEYS = frozenset({"id", "id_", "doc_id", "meta", "metadata", "score", "source", "page_content", "node"})


def _document_list(seen: _Seen) -> bool:
    """Passages as retrievers return them: objects with text and an id, metadata or score (not chat messages'
    `{"text"}` parts), or an empty list under a passage list's name (nothing was retrieved this time)."""
    if isinstance(seen.value, list) and not seen.value:
        return seen.name in LIST_KEYS
    first = seen.value[0] if isinstance(seen.value, list) else None
    if not is_passage_list(seen.value) or not isinstance(first, dict):
        return False
    return seen.name in _PASSAGE_LIST_NAMES or any(k in first for k in _DOCUMENT_KEYS)
