"""An OTLP/HTTP trace export request (protobuf or JSON, maybe gzipped) into spans, within bounds.

Decoded by the official `opentelemetry-proto` classes (the `traces` extra): no protobuf is parsed by hand here.
OTLP/JSON writes trace and span ids as hex where protobuf's JSON mapping expects base64: they are turned into
base64 before `json_format` reads the request.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 8
"""A structured attribute nested deeper is cut there: attributes are values, not documents."""
MAX_ITEMS = 1000
"""Items kept of a structured array or map attribute."""


class Undecodable(ValueError):
    """The request is not an OTLP trace export ragjudge can read; the message says why (for the HTTP 400)."""


@dataclass(frozen=True)
class Span:
    """One span, as much of it as ragjudge reads."""

    trace_id: str
    """32 lower-case hex digits."""
    span_id: str
    parent_span_id: str
    """Empty for a root span."""
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    """Scalar values as they are; arrays as lists and maps as dicts (bounded); strings cut to the run's limit."""

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int
    max_attribute_chars: int


def decode(body: bytes, content_type: str, content_encoding: str, limits: Limits) -> list[Span]:
    """Every span in the request; Undecodable when it is not one."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    raw = _gunzip(body, limits.max_body_bytes) if content_encoding.strip().lower() == "gzip" else body
    request = ExportTraceServiceRequest()
    kind = content_type.split(";")[0].strip().lower()
    try:
        if kind == "application/json":
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise Undecodable("the JSON body is not an object")
            json_format.ParseDict(_hex_ids_to_base64(data), request, ignore_unknown_fields=True)
        elif kind in ("application/x-protobuf", "application/protobuf"):
            request.ParseFromString(raw)
        else:
            raise Undecodable(f"unsupported content type {kind or '(none)'}: send application/x-protobuf or JSON")
    except (json_format.ParseError, DecodeError, ValueError, RecursionError) as exc:
        if isinstance(exc, Undecodable):
            raise
        raise Undecodable(f"not an OTLP trace export: {type(exc).__name__}") from None
    return list(_spans(request, limits.max_attribute_chars))


def _gunzip(body: bytes, cap: int) -> bytes:
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, cap + 1)
    except zlib.error:
        raise Undecodable("Content-Encoding gzip but the body is not gzip") from None
    if len(out) > cap:
        raise Undecodable(f"the body inflates past {cap} bytes (traces.max_body_bytes)")
    return out


_ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _hex_ids_to_base64(node: Any, depth: int = 0) -> Any:
    if depth > 64:
        raise Undecodable("the JSON body nests too deeply")
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                try:
                    value = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                except ValueError:
                    raise Undecodable(f"{key} is not hex") from None
            out[key] = _hex_ids_to_base64(value, depth + 1)
        return out
    if isinstance(node, list):
        return [_hex_ids_to_base64(item, depth + 1) for item in node]
    return node


def _spans(request: Any, max_chars: int) -> Iterator[Span]:
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield Span(
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex(),
                    name=span.name[:max_chars],
                    start_ns=int(span.start_time_unix_nano),
                    end_ns=int(span.end_time_unix_nano),
                    attributes={kv.key[:max_chars]: _value(kv.value, max_chars, 0) for kv in span.attributes},
                )


def _value(value: Any, max_chars: int, depth: int) -> Any:
    """An OTLP AnyValue as a plain value."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return str(value.string_value)[:max_chars]
    if kind in ("bool_value", "int_value", "double_value"):
        return getattr(value, kind)
    if kind == "bytes_value":
        return bytes(value.bytes_value[:max_chars]).hex()
    if depth >= MAX_DEPTH:
        return None
    if kind == "array_value":
        return [_value(v, max_chars, depth + 1) for v in value.array_value.values[:MAX_ITEMS]]
    if kind == "kvlist_value":
        pairs = value.kvlist_value.values[:MAX_ITEMS]
        return {kv.key[:max_chars]: _value(kv.value, max_chars, depth + 1) for kv in pairs}
    return None
