"""The built-in OTLP/HTTP receiver (`traces/receiver.py`, `traces/otlp.py`, `traces/store.py`) over real loopback
HTTP: protobuf from the real SDK exporter (plain and gzipped), OTLP/JSON with hex ids, and its bounds: body size,
span count, attribute length; spans of traces never sent dropped and counted; a request it cannot read refused
without stopping it."""

from __future__ import annotations

import gzip
import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from ragjudge.traces.context import TraceContext, new_context
from ragjudge.traces.otlp import Limits
from ragjudge.traces.receiver import Receiver
from ragjudge.traces.store import SpanStore

LIMITS = Limits(max_body_bytes=200_000, max_attribute_chars=100)


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, SpanStore]]:
    store = SpanStore(max_spans=5, conversation_keys=("gen_ai.conversation.id",))
    running = Receiver("127.0.0.1", 0, store, LIMITS).start()
    try:
        yield running, store
    finally:
        running.stop()


def export(
    address: str, context: TraceContext | None, names: list[str], *, gzipped: bool = False, **attrs: str
) -> None:
    """Spans sent by the real SDK exporter, as children of `context` (a trace of their own when None)."""
    provider = TracerProvider()
    compression = Compression.Gzip if gzipped else Compression.NoCompression
    exporter = OTLPSpanExporter(endpoint=f"http://{address}/v1/traces", compression=compression)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    parent = None
    if context is not None:
        remote = SpanContext(
            int(context.trace_id, 16), int(context.span_id, 16), is_remote=True, trace_flags=TraceFlags(1)
        )
        parent = set_span_in_context(NonRecordingSpan(remote))
    for name in names:
        with tracer.start_as_current_span(name, context=parent, attributes=attrs):
            pass
    provider.shutdown()


def post(address: str, body: bytes, content_type: str, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"http://{address}/v1/traces", data=body, headers={"Content-Type": content_type, **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.parametrize("gzipped", [False, True])
def test_protobuf_from_the_real_exporter_is_filed_under_the_trace_sent(
    receiver: tuple[Receiver, SpanStore], gzipped: bool
) -> None:
    running, store = receiver
    context = new_context()
    store.expect(context)
    export(running.address, context, ["POST /ask"], gzipped=gzipped, **{"gen_ai.operation.name": "chat"})
    collected = store.take(context, time.monotonic() + 2)
    assert [s.name for s in collected.spans] == ["POST /ask"]
    span = collected.spans[0]
    assert (span.trace_id, span.parent_span_id) == (context.trace_id, context.span_id)
    assert span.attributes == {"gen_ai.operation.name": "chat"}
    assert collected.joined_by == ("traceparent",)


def test_otlp_json_with_hex_ids_and_gzip(receiver: tuple[Receiver, SpanStore]) -> None:
    running, store = receiver
    context = new_context()
    store.expect(context)
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": context.trace_id,
                                "spanId": "00f067aa0ba902b7",
                                "parentSpanId": context.span_id,
                                "name": "retrieve",
                                "startTimeUnixNano": "1000000",
                                "endTimeUnixNano": "3000000",
                                "attributes": [
                                    {"key": "long", "value": {"stringValue": "x" * 500}},
                                    {"key": "n", "value": {"intValue": "7"}},
                                    {
                                        "key": "docs",
                                        "value": {
                                            "arrayValue": {
                                                "values": [
                                                    {
                                                        "kvlistValue": {
                                                            "values": [{"key": "id", "value": {"stringValue": "d1"}}]
                                                        }
                                                    }
                                                ]
                                            }
                                        },
                                    },
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    status, reply = post(
        running.address, gzip.compress(json.dumps(body).encode()), "application/json", **{"Content-Encoding": "gzip"}
    )
    assert (status, reply) == (200, b"{}")
    (span,) = store.take(context, time.monotonic() + 1).spans
    assert span.span_id == "00f067aa0ba902b7" and span.duration_ms == 2.0
    # Cut at traces.max_attribute_chars; structured values kept as data.
    assert span.attributes == {"long": "x" * 100, "n": 7, "docs": [{"id": "d1"}]}


def test_spans_of_traces_never_sent_are_dropped_and_counted(receiver: tuple[Receiver, SpanStore]) -> None:
    running, store = receiver
    export(running.address, None, ["elsewhere", "elsewhere too"])
    counts = store.counts()
    assert (counts.received, counts.foreign, counts.over, counts.late) == (2, 2, 0, 0)


def test_a_new_trace_joins_by_the_conversation_id_the_request_sent(receiver: tuple[Receiver, SpanStore]) -> None:
    running, store = receiver
    context = new_context()
    store.expect(context, ["thread-42"])
    # A framework that does not continue traceparent: a trace of its own, naming the conversation.
    export(running.address, None, ["invoke_agent"], **{"gen_ai.conversation.id": "thread-42"})
    collected = store.take(context, time.monotonic() + 2)
    assert [s.name for s in collected.spans] == ["invoke_agent"]
    assert collected.spans[0].trace_id != context.trace_id
    assert collected.joined_by == ("conversation",)
    assert store.counts().foreign == 0


def test_span_count_is_bounded_and_late_spans_are_counted(receiver: tuple[Receiver, SpanStore]) -> None:
    running, store = receiver
    context = new_context()
    store.expect(context)
    export(running.address, context, [f"s{i}" for i in range(7)])
    assert store.counts().over == 2  # max_spans 5
    assert len(store.take(context, time.monotonic()).spans) == 5
    export(running.address, context, ["after"])
    assert store.counts().late == 1


def test_what_it_cannot_read_is_refused_and_it_keeps_serving(receiver: tuple[Receiver, SpanStore]) -> None:
    running, store = receiver
    assert post(running.address, b"x" * 200_001, "application/x-protobuf")[0] == 413
    assert post(running.address, b"\xff\x00garbage", "application/x-protobuf") == (
        400,
        b"not an OTLP trace export: DecodeError",
    )
    assert post(running.address, b"{}", "text/plain")[0] == 400
    assert post(running.address, b"[1]", "application/json") == (400, b"the JSON body is not an object")
    bomb = gzip.compress(b"\x00" * 300_000)
    assert post(running.address, bomb, "application/x-protobuf", **{"Content-Encoding": "gzip"}) == (
        400,
        b"the body inflates past 200000 bytes (traces.max_body_bytes)",
    )
    context = new_context()
    store.expect(context)
    export(running.address, context, ["still here"])
    assert [s.name for s in store.take(context, time.monotonic() + 1).spans] == ["still here"]


def test_connections_past_the_cap_are_closed_and_the_receiver_recovers(receiver: tuple[Receiver, SpanStore]) -> None:
    import http.client
    import socket

    from ragjudge.traces.receiver import MAX_CONNECTIONS

    running, _ = receiver
    host, port = running.address.split(":")
    idle = [socket.create_connection((host, int(port))) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.2)  # each has taken its place
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
            post(running.address, b"{}", "application/json")
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.2)
    assert post(running.address, b"{}", "application/json") == (200, b"{}")


def test_stopping_ends_kept_alive_connections_so_the_next_receiver_on_the_port_gets_the_spans() -> None:
    # A service outlives the run (probe, then run, on one port): its exporter keeps its connection open. Once the
    # run's receiver stops, that connection is closed, and the exporter's next batch reaches the next receiver.
    keys = ("gen_ai.conversation.id",)
    first, second = SpanStore(max_spans=50, conversation_keys=keys), SpanStore(max_spans=50, conversation_keys=keys)
    context = new_context()
    first.expect(context)
    second.expect(context)
    running = Receiver("127.0.0.1", 0, first, LIMITS).start()
    host, port = running.address.split(":")
    kept = http.client.HTTPConnection(host, int(port), timeout=5)
    kept.request("POST", "/v1/traces", body=b"", headers={"Content-Type": "application/x-protobuf"})
    assert kept.getresponse().read() == b""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"http://{running.address}/v1/traces")))
    remote = set_span_in_context(
        NonRecordingSpan(SpanContext(int(context.trace_id, 16), int(context.span_id, 16), True, TraceFlags(1)))
    )
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("first run", context=remote):
        pass
    running.stop()
    assert kept.sock is not None and kept.sock.recv(1) == b""  # closed by the receiver, not left to linger
    kept.close()
    after = Receiver(host, int(port), second, LIMITS).start()
    try:
        with tracer.start_as_current_span("second run", context=remote):
            pass
        provider.shutdown()
        assert [s.name for s in first.take(context, 0.0).spans] == ["first run"]
        assert [s.name for s in second.take(context, time.monotonic() + 2).spans] == ["second run"]
    finally:
        after.stop()
