"""The trace stores ragjudge reads a case's trace from (`traces.store.kind`): one row each, read by code written
once (`traces.store_reader`).

A row says where one trace's spans are asked for and how its JSON reply lays a span out, so that each becomes
the same `otlp.Span` the receiver would have made of it: the conventions then read the same passages, tool
calls and tokens whichever way the spans came. A store of another kind (Tempo, Jaeger) is read through an
adapter that answers as a row here does (docs/traces.md, "The shape other stores need").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from ragjudge.safetext import clean_text
from ragjudge.traces.otlp import MAX_DEPTH, MAX_ITEMS, Span


class BadReply(ValueError):
    """The store's reply is not a list of spans as its row lays them out; the message says what is wrong."""


@dataclass(frozen=True)
class StoreKind:
    """One kind of trace store: its request for one trace's spans, and its reply's layout."""

    name: str
    spans_path: str
    """Appended to `traces.store.url`; `{project}` is the project, URL-quoted."""
    trace_id_param: str
    """The query parameter that names the trace (32 hex digits)."""
    limit_param: str
    max_limit: int
    """The most spans the store gives in one page."""
    cursor_param: str
    """The query parameter that asks for the page after the one a reply ended."""
    spans_key: str
    """The reply's list of spans."""
    next_key: str
    """The reply's cursor to the next page: null or absent on the last."""
    trace_id: str
    span_id: str
    parent_id: str
    """Dotted paths, inside a span, to its ids (hex); a null or absent parent: a root span."""
    start: str
    end: str
    """Dotted paths to its start and end, ISO 8601 with a time zone."""
    attributes: str
    """The path to its attributes: one flat object of dotted keys, as OTLP attributes are."""
    kind_field: str | None = None
    """Where the store keeps, apart from the attributes, what a span's `kind_attribute` said."""
    kind_attribute: str = "openinference.span.kind"
    kind_unknown: str = "UNKNOWN"
    """The value `kind_field` has when the span said nothing: nothing is put back."""
    kind_derived_from: str | None = None
    """An attribute prefix from which the store derives the kind (and attributes of the kind's convention) of a
    span that carries it: on such a span the kind is not put back, so the span is read by its own convention
    alone, once, as from the receiver."""
    auth_header: str = "Authorization"
    auth_prefix: str = "Bearer "
    """The API key (`traces.store.api_key_env`) goes in `auth_header`, after this."""


PHOENIX = StoreKind(
    # Arize Phoenix's REST API (measured on 20.26.1): attributes come back flat and dotted, OpenInference's span
    # kind apart from them (`span_kind`); Phoenix adds OpenInference attributes to a span with `gen_ai.*` ones.
    name="phoenix",
    spans_path="/v1/projects/{project}/spans",
    trace_id_param="trace_id",
    limit_param="limit",
    max_limit=1000,
    cursor_param="cursor",
    spans_key="data",
    next_key="next_cursor",
    trace_id="context.trace_id",
    span_id="context.span_id",
    parent_id="parent_id",
    start="start_time",
    end="end_time",
    attributes="attributes",
    kind_field="span_kind",
    kind_derived_from="gen_ai.",
)

STORES: tuple[StoreKind, ...] = (PHOENIX,)
BY_NAME = {s.name: s for s in STORES}


def spans_url(kind: StoreKind, base: str, project: str) -> str:
    return base.rstrip("/") + kind.spans_path.format(project=quote(project, safe=""))


def read_reply(kind: StoreKind, data: Any, max_chars: int) -> tuple[list[Span], str | None]:
    """The spans in one page of the store's reply, and the cursor to the next page (None on the last)."""
    if not isinstance(data, dict):
        raise BadReply("the reply is not a JSON object")
    listed = data.get(kind.spans_key)
    if not isinstance(listed, list):
        raise BadReply(f"the reply has no `{kind.spans_key}` list")
    spans = [_span(kind, item, max_chars) for item in listed]
    cursor = data.get(kind.next_key)
    return spans, (cursor if isinstance(cursor, str) and cursor else None)


def _span(kind: StoreKind, item: Any, max_chars: int) -> Span:
    if not isinstance(item, dict):
        raise BadReply("a span is not a JSON object")
    raw = _at(item, kind.attributes)
    if raw is not None and not isinstance(raw, dict):
        raise BadReply(f"a span's `{kind.attributes}` is not an object")
    attributes = dict(_attributes(raw or {}, max_chars))
    if kind.kind_field is not None:
        said = _at(item, kind.kind_field)
        derived = kind.kind_derived_from is not None and any(k.startswith(kind.kind_derived_from) for k in attributes)
        if isinstance(said, str) and said != kind.kind_unknown and not derived:
            attributes[kind.kind_attribute] = clean_text(said[:max_chars])
    parent = _at(item, kind.parent_id)
    return Span(
        trace_id=_hex(_at(item, kind.trace_id), 32, kind.trace_id),
        span_id=_hex(_at(item, kind.span_id), 16, kind.span_id),
        parent_span_id=_hex(parent, 16, kind.parent_id) if parent else "",
        name=clean_text(str(item.get("name") or "")[:max_chars]),
        start_ns=_ns(_at(item, kind.start), kind.start),
        end_ns=_ns(_at(item, kind.end), kind.end),
        attributes=attributes,
    )


def _at(node: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _hex(value: Any, digits: int, where: str) -> str:
    text = value.lower() if isinstance(value, str) else ""
    if len(text) != digits or any(c not in "0123456789abcdef" for c in text):
        raise BadReply(f"a span's `{where}` is not {digits} hex digits")
    return text


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ns(value: Any, where: str) -> int:
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise BadReply(f"a span's `{where}` is not an ISO 8601 time with a zone")
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000


def _attributes(raw: Mapping[Any, Any], max_chars: int) -> Iterator[tuple[str, Any]]:
    for key, value in list(raw.items())[: MAX_ITEMS * 10]:
        yield clean_text(str(key)[:max_chars]), _value(value, max_chars, 0)


def _value(value: Any, max_chars: int, depth: int) -> Any:
    """A JSON value as the receiver keeps an OTLP one: strings cut, arrays and maps bounded."""
    if isinstance(value, str):
        return clean_text(value[:max_chars])
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, list):
        return [_value(v, max_chars, depth + 1) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        pairs = list(value.items())[:MAX_ITEMS]
        return {clean_text(str(k)[:max_chars]): _value(v, max_chars, depth + 1) for k, v in pairs}
    return None
