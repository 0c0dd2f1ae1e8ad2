"""Spans read back from a real Arize Phoenix say what the same spans said to ragjudge's receiver, for each
convention ragjudge reads: the real SDK exports one set of spans to both at once, and `read_spans` gives the same
reading of either (`traces/stores.py`'s Phoenix row puts back the OpenInference span kind Phoenix keeps apart,
reads the metadata JSON Phoenix has unpacked, and leaves the attributes Phoenix derives from `gen_ai.*` unread)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from ragjudge.traces.context import TraceContext, new_context
from ragjudge.traces.conventions import CONVENTIONS
from ragjudge.traces.findings import Reading, read_spans
from ragjudge.traces.otlp import Limits, Span
from ragjudge.traces.receiver import Receiver
from ragjudge.traces.redaction import redact_text
from ragjudge.traces.store import SpanStore
from ragjudge.traces.store_reader import StoreReader
from ragjudge.traces.stores import PHOENIX
from tests.fakes.phoenix_server import PHOENIX_VERSION, RunningPhoenix

Attrs = dict[str, Any]

OPENINFERENCE: list[tuple[str, Attrs]] = [
    (
        "retrieve",
        {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.id": "hash-0",
            "retrieval.documents.0.document.content": "Returns within 7 days.",
            "retrieval.documents.0.document.metadata": json.dumps({"doc_id": "policy-returns", "page": 3}),
            "retrieval.documents.1.document.id": "hash-1",
            "retrieval.documents.1.document.content": "Shipping is free.",
            "retrieval.documents.1.document.score": 0.5,
        },
    ),
    (
        "search",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "search",
            "input.value": json.dumps({"q": "refunds"}),
            "output.value": "3 found",
        },
    ),
    ("llm", {"openinference.span.kind": "LLM", "llm.token_count.prompt": 50, "llm.token_count.completion": 9}),
]
HAYSTACK: list[tuple[str, Attrs]] = [
    (
        "haystack.component.run",
        {
            "haystack.component.type": "InMemoryBM25Retriever",
            "haystack.component.output": json.dumps(
                {"documents": [{"id": "h1", "content": "Seven days.", "doc_id": "policy-returns"}]}
            ),
        },
    ),
    (
        "haystack.component.run",
        {
            "haystack.component.type": "OpenAIChatGenerator",
            "haystack.component.output": json.dumps(
                {"replies": [{"meta": {"usage": {"prompt_tokens": 40, "completion_tokens": 8}}}]}
            ),
        },
    ),
]
GEN_AI: list[tuple[str, Attrs]] = [
    (
        "retrieval",
        {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.retrieval.documents": json.dumps(
                [{"id": "d1", "content": "One."}, {"id": "d2", "content": "Two."}]
            ),
        },
    ),
    (
        "execute_tool lookup",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.arguments": json.dumps({"id": 7}),
            "gen_ai.tool.call.result": "found",
        },
    ),
    (
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 11,
            "gen_ai.usage.output_tokens": 3,
            "gen_ai.response.time_to_first_chunk": 0.2,
        },
    ),
]


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, SpanStore]]:
    store = SpanStore(max_spans=1000, conversation_keys=())
    running = Receiver("127.0.0.1", 0, store, Limits(4_000_000, 20_000)).start()
    try:
        yield running, store
    finally:
        running.stop()


def export_to_both(receiver: Receiver, phoenix: RunningPhoenix, context: TraceContext, spans: list[tuple[str, Attrs]]):
    """The spans as children of `context`'s span (a server span around them), to the receiver and Phoenix."""
    provider = TracerProvider()
    for url in (f"http://{receiver.address}", phoenix.url):
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("test")
    remote = SpanContext(int(context.trace_id, 16), int(context.span_id, 16), is_remote=True, trace_flags=TraceFlags(1))
    with tracer.start_as_current_span("POST /ask", context=set_span_in_context(NonRecordingSpan(remote))):
        for name, attributes in spans:
            with tracer.start_as_current_span(name, attributes=attributes):
                pass
    provider.shutdown()


def read(spans: tuple[Span, ...], id_key: str | None) -> Reading:
    return read_spans(spans, CONVENTIONS, documents=None, id_key=id_key, redact=redact_text)


def untimed(reading: Reading) -> Reading:
    # Phoenix keeps times to the microsecond, the receiver to the nanosecond: a duration's last 0.1 ms may round
    # the other way.
    return dataclasses.replace(reading, retrieval_ms=None, generation_ms=None)


@pytest.mark.parametrize(
    ("spans", "convention", "id_key"),
    [
        (OPENINFERENCE, "openinference", "doc_id"),
        (OPENINFERENCE, "openinference", None),
        (HAYSTACK, "haystack", None),
        (GEN_AI, "gen_ai", None),
    ],
    ids=["openinference-id-key", "openinference", "haystack", "gen_ai"],
)
def test_phoenix_gives_the_reading_the_receiver_gives(
    receiver: tuple[Receiver, SpanStore],
    phoenix_server: RunningPhoenix,
    spans: list[tuple[str, Attrs]],
    convention: str,
    id_key: str | None,
) -> None:
    running, store = receiver
    context = new_context()
    store.expect(context)
    export_to_both(running, phoenix_server, context, spans)
    received = store.take(context, until=0.0).spans
    reader = StoreReader(
        PHOENIX,
        phoenix_server.url,
        "default",
        api_key=None,
        max_body_bytes=4_000_000,
        max_spans=1000,
        max_attribute_chars=20_000,
    )
    stored = reader.settled(context, settle_s=10.0).spans
    assert len(stored) == len(received) == len(spans) + 1
    expected, got = read(received, id_key), read(stored, id_key)
    assert untimed(got) == untimed(expected)
    assert got.conventions == (convention,)
    assert got.passages and got.passages_from == convention
    for a, b in ((got.retrieval_ms, expected.retrieval_ms), (got.generation_ms, expected.generation_ms)):
        assert a is not None and b is not None and abs(a - b) <= 0.1
    # The service's span, as the receiver saw it: it continues ragjudge's.
    (top,) = [s for s in stored if s.parent_span_id == context.span_id]
    assert top.name == "POST /ask"


def test_ci_installs_the_phoenix_the_row_was_measured_on() -> None:
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    assert re.findall(r"^PHOENIX_VERSION=(\S+)$", ci, re.MULTILINE) == [PHOENIX_VERSION]
