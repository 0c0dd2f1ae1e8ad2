"""What one case's spans say, read by the conventions' tables (`traces.conventions`): written once for all.

Passages come from the first convention (in the registry's order) whose spans carry documents; tokens, tool
calls and timings are gathered from every convention, each span counted once.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.endpoint.spans import ToolCallSeen
from ragjudge.endpoint.trace import Passage
from ragjudge.traces.conventions import Convention, DocumentsRow, SpanMatch
from ragjudge.traces.otlp import MAX_ITEMS, Span

TOOL_TEXT_CHARS = 2000
"""A tool call's arguments and result are kept to this many characters for the report."""


@dataclass(frozen=True)
class Reading:
    passages: tuple[Passage, ...] = ()
    passages_from: str | None = None
    tool_calls: tuple[ToolCallSeen, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    retrieval_ms: float | None = None
    generation_ms: float | None = None
    ttfc_ms: float | None = None
    conventions: tuple[str, ...] = ()


def matches(span: Span, match: SpanMatch) -> bool:
    if match.name is not None and span.name != match.name:
        return False
    if match.name_prefix is not None and not span.name.startswith(match.name_prefix):
        return False
    if match.attribute is None:
        return True
    value = span.attributes.get(match.attribute)
    if value is None:
        return False
    if match.contains is not None:
        return match.contains in str(value)
    return not match.values or str(value) in match.values


def read_spans(
    spans: Sequence[Span],
    conventions: Sequence[Convention],
    *,
    documents: str | None,
    id_key: str | None,
    redact: Callable[[str], str],
) -> Reading:
    ordered = sorted(spans, key=lambda s: (s.end_ns, s.start_ns))
    seen: list[str] = []
    passages: tuple[Passage, ...] = ()
    passages_from = None
    for convention in conventions:
        found = False
        if not passages:
            for row in convention.documents:
                listed = _documents(ordered, row, documents or row.which, id_key)
                if listed is None:
                    continue
                found = True
                # A retriever span that lists no document said "nothing retrieved": known, not unknown. A later
                # convention's documents still win over it.
                if listed or passages_from is None:
                    passages, passages_from = listed, convention.name
                if listed:
                    break
        input_tokens, output_tokens = _tokens(ordered, convention)
        tools = _tools(ordered, convention, redact)
        if found or input_tokens is not None or output_tokens is not None or tools or _names(ordered, convention):
            seen.append(convention.name)
    used = [c for c in conventions if c.name in seen]
    inputs = [t for c in used if (t := _tokens(ordered, c)[0]) is not None]
    outputs = [t for c in used if (t := _tokens(ordered, c)[1]) is not None]
    return Reading(
        passages=passages,
        passages_from=passages_from,
        tool_calls=tuple(call for c in used for call in _tools(ordered, c, redact)),
        input_tokens=sum(inputs) if inputs else None,
        output_tokens=sum(outputs) if outputs else None,
        retrieval_ms=_time(ordered, [m for c in conventions for m in c.retrieval_spans]),
        generation_ms=_time(ordered, [m for c in conventions for m in c.generation_spans]),
        ttfc_ms=_ttfc(ordered, conventions),
        conventions=tuple(seen),
    )


def _names(spans: Sequence[Span], convention: Convention) -> bool:
    """Any attribute of the convention's on any span (a conversation id, a span kind)."""
    keys = {m.attribute for m in (*convention.retrieval_spans, *convention.generation_spans) if m.attribute}
    keys |= set(convention.conversation_id) | set(convention.ttfc_seconds)
    names = {m.name for m in (*convention.retrieval_spans, *convention.generation_spans) if m.name}
    return any(s.name in names or keys & s.attributes.keys() for s in spans)


def _documents(spans: Sequence[Span], row: DocumentsRow, which: str, id_key: str | None) -> tuple[Passage, ...] | None:
    """The documents the row's spans list (empty when the last lists none); None when no span lists any."""
    lists = [docs for s in spans if matches(s, row.spans) and (docs := _document_list(s, row)) is not None]
    if not lists:
        return None
    chosen = lists[-1:] if which == "last" else lists
    key = id_key or row.default_id_key
    out: list[Passage] = []
    for docs in chosen:
        for doc in docs[:MAX_ITEMS]:
            ident = _first_text(doc, [f"{m}.{key}" if m else key for m in row.meta_paths] if key else [])
            ident = ident or _first_text(doc, row.id_paths) or f"S{len(out) + 1}"
            out.append(Passage(ident, _first_text(doc, row.title_paths), _first_text(doc, row.text_paths), True))
    return tuple(out)


def _document_list(span: Span, row: DocumentsRow) -> list[Any] | None:
    """The span's documents; None when it lays none out (a Haystack component whose output has no `documents`)."""
    if row.layout == "flattened":
        prefix = row.attribute + "."
        docs: dict[int, dict[str, Any]] = {}
        for key, value in span.attributes.items():
            if not key.startswith(prefix):
                continue
            index, _, rest = key[len(prefix) :].partition(".")
            if index.isdigit() and int(index) < MAX_ITEMS and rest:
                _put(docs.setdefault(int(index), {}), rest.split("."), value)
        return [docs[i] for i in sorted(docs)] if docs else None
    value = _structured(span.attributes.get(row.attribute))
    for path in (row.path, *row.also_paths):
        found = _dig(value, path) if path else value
        if isinstance(found, list):
            return [d for d in found if isinstance(d, dict)]
    return None


def _put(node: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            return
        node = child
    node[parts[-1]] = value


def _structured(value: Any) -> Any:
    """A JSON (or, as some Haystack values are, Python literal) text read as data; anything else as it is."""
    if not isinstance(value, str) or value.strip()[:1] not in ("{", "["):
        return value
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        return ast.literal_eval(value)  # literals only: no name is looked up, nothing is called
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _dig(node: Any, path: str) -> Any:
    for part in path.split("."):
        node = _structured(node)
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _first_text(doc: Any, paths: Iterable[str]) -> str:
    for path in paths:
        value = _dig(doc, path)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return ""


def _tokens(spans: Sequence[Span], convention: Convention) -> tuple[int | None, int | None]:
    ins: list[int] = []
    outs: list[int] = []
    for row in convention.tokens:
        for span in spans:
            if matches(span, row.spans):
                ins += _counts(span, row.input, row.inside)
                outs += _counts(span, row.output, row.inside)
    return (sum(ins) if ins else None), (sum(outs) if outs else None)


def _counts(span: Span, key: str, inside: str | None) -> list[int]:
    found = [span.attributes.get(key)] if inside is None else _dig_all(span.attributes.get(inside), key.split("."))
    return [v for v in found if isinstance(v, int) and not isinstance(v, bool)]


def _dig_all(node: Any, parts: list[str]) -> list[Any]:
    """Every value at the dotted path, `*` standing for each item of a list (a null usage gives nothing)."""
    node = _structured(node)
    if not parts:
        return [node]
    head, rest = parts[0], parts[1:]
    if head == "*":
        return [v for item in node[:MAX_ITEMS] for v in _dig_all(item, rest)] if isinstance(node, list) else []
    return _dig_all(node.get(head), rest) if isinstance(node, dict) else []


def _tools(spans: Sequence[Span], convention: Convention, redact: Callable[[str], str]) -> list[ToolCallSeen]:
    calls = []
    for row in convention.tools:
        for span in sorted(spans, key=lambda s: s.start_ns):
            if matches(span, row.spans):
                name = span.attributes.get(row.name)
                calls.append(
                    ToolCallSeen(
                        name=str(name) if name is not None else span.name,
                        arguments=_text(span.attributes.get(row.arguments), redact),
                        result=_text(span.attributes.get(row.result), redact),
                    )
                )
    return calls


def _text(value: Any, redact: Callable[[str], str]) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return redact(text)[:TOOL_TEXT_CHARS]


def _time(spans: Sequence[Span], which: Sequence[SpanMatch]) -> float | None:
    counted = {s.span_id: s.duration_ms for s in spans for m in which if matches(s, m)}
    return round(sum(counted.values()), 1) if counted else None


def _ttfc(spans: Sequence[Span], conventions: Sequence[Convention]) -> float | None:
    for span in spans:
        for key in (k for c in conventions for k in c.ttfc_seconds):
            value = span.attributes.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return round(float(value) * 1000, 1)
    return None
