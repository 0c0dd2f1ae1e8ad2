"""Turning a decoded JSON reply into a `Trace`.

With no `response` mapping the shapes of the seeds are accepted; a mapping of
dotted paths adapts any other shape.
"""

from __future__ import annotations

from typing import Any

from ragjudge.config import ResponseMapping
from ragjudge.endpoint.trace import Passage, Trace


class ReplyShapeError(Exception):
    """The reply decoded but does not carry what ragjudge needs."""


_MISSING = object()


def dig(data: Any, path: str) -> Any:
    """Follow a dotted path (`data.items.0.text`); `_MISSING` when it leads nowhere."""
    node = data
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _first(data: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in data and data[key] is not None:
            return data[key]
    return _MISSING


def _text(value: Any) -> str:
    if value is _MISSING or value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _passage(item: Any, index: int, mapping: ResponseMapping, parallel_ids: list[Any]) -> Passage:
    fallback_id = str(parallel_ids[index]) if index < len(parallel_ids) else f"S{index + 1}"
    if isinstance(item, str):
        return Passage(id=fallback_id, title="(untitled)", text=item.strip())
    if not isinstance(item, dict):
        return Passage(id=fallback_id, title="(untitled)", text=_text(item).strip())
    pid = dig(item, mapping.retrieved_id) if mapping.retrieved_id else _first(item, "id", "source", "doc_id")
    text = dig(item, mapping.retrieved_text) if mapping.retrieved_text else _first(item, "text", "excerpt", "content")
    title = dig(item, mapping.retrieved_title) if mapping.retrieved_title else _first(item, "title")
    return Passage(
        id=fallback_id if pid is _MISSING or pid is None else str(pid),
        title=_text(title) or "(untitled)",
        text=_text(text).strip(),
    )


_RETRIEVED_KEYS = ("retrieved", "sources", "contexts")
_JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", list: "a list", type(None): "null"}


def _check_passages(items: list[Any], field: str) -> None:
    """A passage is an object or a string; a number or a null is a broken reply, not a passage called "1"."""
    for i, item in enumerate(items):
        if not isinstance(item, str | dict):
            kind = _JSON_KINDS.get(type(item), type(item).__name__)
            raise ReplyShapeError(f'reply field "{field}"[{i}] is {kind}, not a passage (an object or a string)')


def parse_reply(data: Any, mapping: ResponseMapping, latency_ms: float) -> Trace:
    """Read a decoded reply; raises ReplyShapeError naming what is missing."""
    if not isinstance(data, dict):
        raise ReplyShapeError(f"reply is a JSON {type(data).__name__}, not an object")

    def get(path: str | None, *defaults: str) -> Any:
        return dig(data, path) if path else _first(data, *defaults)

    answer = get(mapping.answer, "answer")
    refused_raw = get(mapping.refused, "refused")
    # A reply may leave the answer out only when it says it declined.
    if answer is _MISSING and refused_raw is not True:
        where = f'"{mapping.answer}"' if mapping.answer else '"answer"'
        raise ReplyShapeError(
            f"reply has no {where} field (keys: {', '.join(sorted(map(str, data))) or 'none'}); "
            "set endpoint.response.answer to the answer's dotted path"
        )
    answer_text = _text(answer)
    refused = bool(refused_raw) if refused_raw is not _MISSING else not answer_text.strip()

    confidence_raw = get(mapping.confidence, "confidence")
    confidence = None if confidence_raw is _MISSING else _text(confidence_raw).strip().lower() or None

    retrieved = get(mapping.retrieved, *_RETRIEVED_KEYS)
    ids_raw = get(mapping.retrieved_ids, "retrievedIds", "retrieved_ids")
    parallel_ids = ids_raw if isinstance(ids_raw, list) else []
    items = retrieved if isinstance(retrieved, list) else []
    _check_passages(items, mapping.retrieved or next((k for k in _RETRIEVED_KEYS if k in data), "retrieved"))
    passages = [_passage(item, i, mapping, parallel_ids) for i, item in enumerate(items)]
    # Ids reported without passages still count for recall and precision.
    passages += [Passage(str(pid), "(untitled)", "") for pid in parallel_ids[len(items) :]]

    citations_raw = get(mapping.citations, "citations")
    citations: list[str] = []
    if isinstance(citations_raw, list):
        for c in citations_raw:
            if isinstance(c, dict):
                citations.append(_text(_first(c, "source", "id", "title")))
            else:
                citations.append(_text(c))

    return Trace(
        answer=answer_text,
        refused=refused,
        confidence=confidence,
        passages=tuple(passages),
        citations=tuple(citations),
        cost_usd=_number(get(mapping.cost_usd, "cost_usd", "costUsd")),
        server_latency_ms=_number(get(mapping.latency_ms, "latencyMs", "latency_ms")),
        latency_ms=latency_ms,
    )
