"""Turning a decoded JSON reply into a `Trace`.

With no `response` mapping the common flat shapes are read through default keys
(`DEFAULT_KEYS`: `answer`, `retrieved`/`sources`/`contexts`, ...); a mapping of
dotted paths adapts any other shape. Every path is checked on every reply: one
that leads nowhere, or to the wrong type, is an error naming the path, what was
found there and the keys at the deepest level reached, so a mapping mistake is
never read as an empty answer, a Python repr or a pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint import tool_calls
from ragjudge.endpoint.paths import MISSING, deepest, describe, dig, find_named, scalar_text
from ragjudge.endpoint.refusal import RefusalRules, decide
from ragjudge.endpoint.suggestion import ID_NAMES, looks_like_content_hash, suggest
from ragjudge.endpoint.trace import Passage, ReadNotes, Trace
from ragjudge.metrics.names import COST_USD, LATENCY_MS


class ReplyShapeError(Exception):
    """The reply decoded but does not carry what ragjudge needs."""


DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "answer": ("answer",),
    "refused": ("refused",),
    "confidence": ("confidence",),
    "retrieved": ("retrieved", "sources", "contexts"),
    "retrieved_id": ("id", "source", "doc_id"),
    "retrieved_text": ("text", "excerpt", "content", "page_content"),
    "retrieved_title": ("title",),
    "retrieved_ids": ("retrievedIds", "retrieved_ids"),
    "citations": ("citations",),
    COST_USD: (COST_USD, "costUsd"),
    LATENCY_MS: ("latencyMs", LATENCY_MS),
    "conversation_id": ("conversation_id", "conversationId"),
}
"""What each mapping key reads when it is not mapped (the first key present and not null)."""

REPLY_LEVEL_KEYS = (
    "answer",
    "refused",
    "confidence",
    "retrieved",
    "retrieved_ids",
    "citations",
    COST_USD,
    LATENCY_MS,
    "conversation_id",
)
"""The mapping keys read at the reply's top level (`retrieved_id`, `retrieved_text`, `retrieved_title` are read
inside each passage)."""


_WANT_WORDS = {"text": "text", "list": "a list", "passages": "a list of passages", "number": "a number"}


def _where(path: str) -> str:
    return path or "the reply"


def wrong_type(key: str, path: str, node: Any, want: str) -> ReplyShapeError:
    text = f"endpoint.response.{key}: {_where(path)} is {describe(node)}"
    hint = suggest(node, path, "answer" if key == "answer" else want)
    text += f": did you mean {hint}?" if hint else f", not {_WANT_WORDS[want]}"
    return ReplyShapeError(text)


def unresolved(key: str, data: Any, path: str, want: str) -> ReplyShapeError:
    reached, node = deepest(data, path)
    text = f"endpoint.response.{key}: {path} resolves to nothing: {_where(reached)} is {describe(node)}"
    hint = suggest(node, reached, "answer" if key == "answer" else want)
    if hint:
        text += f": did you mean {hint}?"
    return ReplyShapeError(text)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


_TRUE_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def parse_refused(value: Any, path: str) -> bool | None:
    """A boolean, or "true"/"false"/"yes"/"no" (any case); null is "not said"; anything else is an error."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS:
        return _TRUE_WORDS[value.strip().lower()]
    shown = json.dumps(value, ensure_ascii=False)[:60] if isinstance(value, str | int | float) else describe(value)
    raise ReplyShapeError(
        f"endpoint.response.refused: {path} is {shown}, not a boolean (true/false, or the strings "
        '"true", "false", "yes", "no")'
    )


class _Reader:
    """Reads one reply under one mapping; `get` knows whether a key was mapped or defaulted."""

    def __init__(self, data: dict[str, Any], mapping: ResponseMapping) -> None:
        self.data = data
        self.mapping = mapping

    def path(self, key: str) -> str | None:
        mapped: str | None = getattr(self.mapping, key)
        return mapped

    def get(self, key: str) -> tuple[Any, str]:
        return locate(self.data, self.mapping, key)

    def required(self, key: str, want: str, excused: bool) -> tuple[Any, str]:
        """A mapped path must resolve on every reply (unless the reply declined and `excused`)."""
        value, path = self.get(key)
        if value is MISSING and self.path(key) and not excused:
            raise unresolved(key, self.data, path, want)
        return value, path


def locate(data: dict[str, Any], mapping: ResponseMapping, key: str) -> tuple[Any, str]:
    """A reply-level key's value and the path it came from; `MISSING` (and the mapped path, or "") when absent."""
    path: str | None = getattr(mapping, key)
    if path:
        return dig(data, path), path
    for name in DEFAULT_KEYS[key]:
        if name in data and data[name] is not None:
            return data[name], name
    return MISSING, ""


def _answer_text(value: Any, path: str) -> str:
    text = scalar_text(value)
    if text is None:
        raise wrong_type("answer", path, value, "text")
    return text


def _list(reader: _Reader, key: str, excused: bool) -> tuple[list[Any], str]:
    want = "passages" if key == "retrieved" else "list"
    value, path = reader.required(key, want, excused)
    if value is MISSING or value is None:
        return [], path
    if not isinstance(value, list):
        raise wrong_type(key, path, value, want)
    return value, path


class _Passages:
    """Reads the passage list, counting per-passage keys found and missed."""

    def __init__(self, mapping: ResponseMapping) -> None:
        self.mapping = mapping
        self.resolved: set[str] = set()
        self.missed: dict[str, int] = {}
        self.positional = 0
        self.objects = 0
        self.hashed = 0
        self.stable_at: str | None = None

    def _field(self, item: dict[str, Any], key: str, where: str) -> str | None:
        path: str | None = getattr(self.mapping, key)
        if path:
            value = dig(item, path)
            if value is MISSING:
                self.missed[key] = self.missed.get(key, 0) + 1
                return None
        else:
            path = next((k for k in DEFAULT_KEYS[key] if item.get(k) is not None), None)
            if path is None:
                return None
            value = item[path]
        self.resolved.add(key)
        if value is None:
            return ""
        text = scalar_text(value)
        if text is None:
            raise wrong_type(key, f"{where}.{path}", value, "text")
        return text

    def read(self, item: Any, where: str, index: int, parallel_ids: Sequence[Any]) -> Passage:
        parallel = scalar_text(parallel_ids[index]) if index < len(parallel_ids) else None
        per_passage = self.mapping.retrieved_id or self.mapping.retrieved_text or self.mapping.retrieved_title
        if isinstance(item, str) and not per_passage:
            return Passage(self._fallback_id(parallel, index), "(untitled)", item.strip())
        if not isinstance(item, dict):
            expected = "an object (retrieved_id/retrieved_text/retrieved_title are paths inside one)"
            if not per_passage:
                expected = "an object or text"
            raise ReplyShapeError(
                f"endpoint.response.retrieved: {where} is {describe(item)}, not a passage: each passage must be "
                f"{expected}"
            )
        self.objects += 1
        pid = self._field(item, "retrieved_id", where)
        if pid and not self.mapping.retrieved_id and looks_like_content_hash(pid):
            self._hashed(item, pid)
        text = self._field(item, "retrieved_text", where)
        title = self._field(item, "retrieved_title", where)
        if pid is None:
            # A mapped id that is missing stays empty (warned about once per run): inventing one would hide it.
            pid = "" if self.mapping.retrieved_id else self._fallback_id(parallel, index)
        return Passage(id=pid, title=title or "(untitled)", text=(text or "").strip())

    def _hashed(self, item: dict[str, Any], pid: str) -> None:
        """A default-read id that is a content hash: golden ids never match it; note where a stable one is."""
        self.hashed += 1
        if self.stable_at is None:
            rest = {k: v for k, v in item.items() if v != pid}
            self.stable_at = find_named(rest, ID_NAMES)

    def _fallback_id(self, parallel: str | None, index: int) -> str:
        if parallel is not None:
            return parallel
        self.positional += 1
        return f"S{index + 1}"


def parse_reply(data: Any, mapping: ResponseMapping, latency_ms: float, rules: RefusalRules | None = None) -> Trace:
    """Read a decoded reply; raises ReplyShapeError naming what is missing or mistyped."""
    if not isinstance(data, dict):
        raise ReplyShapeError(f"reply is a JSON {type(data).__name__}, not an object")
    rules = rules if rules is not None else RefusalRules()
    reader = _Reader(data, mapping)
    resolved: set[str] = set()

    refused_raw, refused_path = reader.get("refused")
    field = None if refused_raw is MISSING else parse_refused(refused_raw, refused_path)
    if refused_raw is not MISSING:
        resolved.add("refused")
    answer, answer_path = reader.get("answer")
    # A reply may leave the answer out only when it says it declined.
    if answer is MISSING or answer is None:
        if field is not True:
            if mapping.answer:
                if answer is None:
                    raise wrong_type("answer", answer_path, None, "text")
                raise unresolved("answer", data, mapping.answer, "text")
            hint = suggest(data, "", "answer")
            raise ReplyShapeError(
                f'reply has no "answer" field (keys: {", ".join(sorted(map(str, data))) or "none"}); '
                "set endpoint.response.answer to the answer's dotted path"
                + (f" (did you mean {hint}?)" if hint else "")
            )
        answer_text = ""
    else:
        answer_text = _answer_text(answer, answer_path)
    refused_by = decide(answer_text, field, rules)
    declined = refused_by is not None

    confidence_raw, confidence_path = reader.required("confidence", "text", declined)
    confidence = None
    if confidence_raw is not MISSING and confidence_raw is not None:
        text = scalar_text(confidence_raw)
        if text is None:
            raise wrong_type("confidence", confidence_path, confidence_raw, "text")
        confidence = text.strip().lower() or None

    items, items_path = _list(reader, "retrieved", declined)
    parallel_ids, ids_path = _list(reader, "retrieved_ids", declined)
    for i, pid in enumerate(parallel_ids):
        if scalar_text(pid) is None:
            raise wrong_type("retrieved_ids", f"{ids_path}.{i}", pid, "text")
    reading = _Passages(mapping)
    passages = [reading.read(item, f"{items_path}.{i}", i, parallel_ids) for i, item in enumerate(items)]
    # Ids reported without passages still count for recall and precision.
    passages += [Passage(str(scalar_text(pid)), "(untitled)", "") for pid in parallel_ids[len(items) :]]

    citations_raw, citations_path = _list(reader, "citations", declined)
    citations: list[str] = []
    for i, c in enumerate(citations_raw):
        if isinstance(c, dict):
            value = next((c[k] for k in ("source", "id", "title") if c.get(k) is not None), None)
            text = scalar_text(value)
        else:
            text = scalar_text(c)
        if text is None:
            raise wrong_type("citations", f"{citations_path}.{i}", c, "text")
        citations.append(text)

    # No passage key mapped and none of the default ones in the reply: what was retrieved is unknown. A mapped
    # `retrieved` (or a default key present) that is empty stays what it says: nothing was retrieved.
    unknown = not (mapping.retrieved or mapping.retrieved_ids or items_path or ids_path)
    return Trace(
        answer=answer_text,
        refused=declined,
        confidence=confidence,
        passages=tuple(passages),
        citations=tuple(citations),
        cost_usd=_numeric(reader, COST_USD),
        server_latency_ms=_numeric(reader, LATENCY_MS),
        latency_ms=latency_ms,
        conversation_id=_conversation_id(reader),
        tool_calls=tool_calls.read(data, mapping),
        refused_by=refused_by,
        read=ReadNotes(
            resolved=frozenset(resolved | reading.resolved),
            missed=tuple(sorted(reading.missed.items())),
            positional_ids=reading.positional,
            passage_objects=reading.objects,
            hashed_ids=reading.hashed,
            stable_id_at=reading.stable_at,
        ),
        passages_unknown=unknown,
    )


MAX_CONVERSATION_ID_CHARS = 8192
"""The longest conversation id ragjudge carries to the next turn, whole (a session token of a few kB fits); a
reply naming a longer one is that turn's error. An id is never cut: a cut id names another conversation."""


def _conversation_id(reader: _Reader) -> str | None:
    """The service's name for the conversation: text or a number, else nothing (a mapped one may be absent: a
    service often names the conversation in its first reply only). Over `MAX_CONVERSATION_ID_CHARS` it is an
    error naming the bound."""
    value, path = reader.get("conversation_id")
    if value is MISSING or value is None:
        return None
    text = scalar_text(value)
    if text is None:
        if reader.path("conversation_id"):
            raise wrong_type("conversation_id", path, value, "text")
        return None  # a default key holding something else is not the service's conversation id
    if len(text) > MAX_CONVERSATION_ID_CHARS:
        raise ReplyShapeError(
            f"the conversation id is {len(text):,} characters, over the {MAX_CONVERSATION_ID_CHARS:,} ragjudge "
            f"carries (endpoint.response.conversation_id, read at {path}): an id is never cut, a cut one names "
            "another conversation"
        )
    return text


def _numeric(reader: _Reader, key: str) -> float | None:
    """A mapped number must be there and be a number; the default keys are read when they are numbers."""
    value, path = reader.required(key, "number", False)
    if value is MISSING or value is None:
        return None
    number = _number(value)
    if number is None and reader.path(key):
        raise wrong_type(key, path, value, "number")
    return number
