"""One run's tracing: the receiver up for the run (or, with `traces.store`, the team's trace store asked after
each reply), a trace context per request, each reply joined with its spans, and the run's warnings about what did
not arrive."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from types import TracebackType

from ragjudge.cases.case import Case
from ragjudge.config.traces_config import TracesConfig
from ragjudge.endpoint.spans import SpansSeen
from ragjudge.endpoint.trace import Trace
from ragjudge.errors import ConfigError
from ragjudge.traces.context import TraceContext, new_context
from ragjudge.traces.conventions import BY_NAME, CONVENTIONS, Convention, retrieval_tools
from ragjudge.traces.findings import read_spans
from ragjudge.traces.joining import join
from ragjudge.traces.redaction import redact_text
from ragjudge.traces.sources import Received, Stored
from ragjudge.traces.store import Counts
from ragjudge.transport import urls

EXTRA_TIP = "install the extra: pip install 'ragjudge[traces]'"


def check_installed(key: str) -> None:
    """Exit 2, naming the extra, when the OTLP classes are missing."""
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"{key}: reading OpenTelemetry spans needs the `traces` extra (opentelemetry-proto), not installed",
            tip=EXTRA_TIP,
        ) from None


def conventions_of(config: TracesConfig, key: str) -> tuple[Convention, ...]:
    """The conventions read, the declared retrieval tools' first: a team that names one means its documents."""
    tools = (retrieval_tools(tuple(config.retrieval_tools)),) if config.retrieval_tools else ()
    if config.conventions is None:
        return (*tools, *CONVENTIONS)
    unknown = [name for name in config.conventions if name not in BY_NAME]
    if unknown:
        raise ConfigError(
            f"{key}.conventions: unknown convention {unknown[0]!r}", tip=f"use some of: {', '.join(BY_NAME)}"
        )
    return (*tools, *(c for c in CONVENTIONS if c.name in config.conventions))


class TraceSession:
    """The `TraceHook` the endpoint client calls; a context manager that holds the receiver open (with a store,
    there is none to hold)."""

    def __init__(self, config: TracesConfig, key: str = "traces", concurrency: int = 1) -> None:
        """`concurrency`: the endpoint's (requests in flight), for `waiting_threads`."""
        if config.store is None or config.export is not None:
            check_installed(key)  # reading a store needs no protobuf; receiving and exporting do
        if config.export is not None:
            try:
                urls.check_http_url(config.export.url)
            except ValueError as exc:
                raise ConfigError(f"{key}.export.url: {exc}") from None
        self.config = config
        self._concurrency = concurrency
        self._conventions = conventions_of(config, key)
        self._lock = threading.Lock()
        self._sent: dict[int, tuple[Case, TraceContext, tuple[str, ...]]] = {}
        conversation_keys = tuple(k for c in self._conventions for k in c.conversation_id)
        self._source: Received | Stored = (
            Stored(config, key) if config.store is not None else Received(config, key, conversation_keys)
        )

    @property
    def waiting_threads(self) -> int:
        """Threads the run adds to wait for spans while others send: 3 a place, up to 256. Spans that come up to
        3 replies' time after their reply (an exporter's batch delay) then cost the run no throughput."""
        return min(256, 3 * self._concurrency)

    @property
    def address(self) -> str:
        """Where the receiver listens (HOST:PORT), the port picked when `receive` asked for 0; with a store, the
        store's URL as messages show it."""
        return self._source.address

    def unread(self, trace_id: str) -> str | None:
        """Why the store could not give this trace; None when it could, or without a store."""
        return self._source.unread(trace_id)

    def __enter__(self) -> TraceSession:
        """The receiver bound and serving (just before the first request): exit 2 when the port is taken."""
        self._source.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._source.stop()

    def headers(self, case: Case, body: str | None) -> dict[str, str]:
        context = new_context()
        conversations = _conversation_ids(case, body)
        self._source.expect(context, conversations)
        with self._lock:
            # The case is held with its context: an id() is unique only while its object lives.
            self._sent[id(case)] = (case, context, conversations)
        return {"traceparent": context.traceparent}

    def joined(self, case: Case, trace: Trace) -> Trace:
        with self._lock:
            sent = self._sent.pop(id(case), None)
        if sent is None or sent[0] is not case:
            return trace
        _, context, conversations = sent
        collected = self._source.collect(context, self.config.settle_s)
        # The service's own span for the request: the one that continues ragjudge's (its parent is ours).
        served = [s.duration_ms for s in collected.spans if s.parent_span_id == context.span_id]
        seen = SpansSeen(
            trace_id=context.trace_id,
            span_id=context.span_id,
            conversation_ids=conversations,
            arrived=len(collected.spans),
            joined_by=collected.joined_by,
            server_ms=round(max(served), 1) if served else None,
        )
        reading = read_spans(
            collected.spans,
            self._conventions,
            documents=self.config.documents,
            id_key=self.config.id_key,
            redact=redact_text,
        )
        return join(trace, seen, reading, self.config.price)

    def abandoned(self, case: Case) -> None:
        with self._lock:
            sent = self._sent.pop(id(case), None)
        if sent is not None and sent[0] is case:
            self._source.abandon(sent[1])

    def counts(self) -> Counts:
        return self._source.counts()


def _conversation_ids(case: Case, body: str | None) -> tuple[str, ...]:
    """The conversation ids this request carries (what a service may name its conversation by): the one the
    service gave before, or the case's id when the body sends it (the AG-UI preset's `threadId`)."""
    if not body:
        return ()
    found = [c for c in (case.conversation_id, case.id) if c and json.dumps(c) in body]
    return tuple(dict.fromkeys(found))


def trace_warnings(replies: Sequence[Trace | None], config: TracesConfig, address: str, counts: Counts) -> list[str]:
    """The run's warnings: cases whose spans never came (the likely causes named), spans that came without
    passages, spans of traces ragjudge never sent."""
    traced = [t.spans for t in replies if t is not None and t.spans is not None]
    out = []
    unread = sum(n for _, n in counts.unread)
    for reason, n in counts.unread:
        out.append(f"{reason}: the trace of {n} of {len(traced)} cases was not read; their trace metrics stay unknown")
    missing = sum(s.arrived == 0 for s in traced) - unread
    if missing and config.store is not None:
        out.append(
            f"no spans came from the trace store {address} (project {config.store.project}) for {missing} of "
            f"{len(traced)} cases within {config.settle_s:g} s (traces.settle_s): does the service export to it? "
            "does it continue the `traceparent` ragjudge sends? is it sampling? Their retrieval metrics stay unknown"
        )
    elif missing:
        out.append(
            f"no spans arrived for {missing} of {len(traced)} cases within {config.settle_s:g} s (traces.settle_s): "
            f"is the service exporting to http://{address} (OTEL_EXPORTER_OTLP_ENDPOINT)? does it continue the "
            "`traceparent` ragjudge sends? is it sampling? Their retrieval metrics stay unknown"
        )
    bare = [t for t in replies if t is not None and t.spans is not None and t.spans.arrived and t.passages_unknown]
    if bare:
        out.append(
            f"spans arrived for {len(bare)} case(s) but none carried retrieved documents: is content tracing on "
            "(HAYSTACK_CONTENT_TRACING_ENABLED=true), do its retriever spans use another convention, or does it "
            "retrieve with a tool (name it in traces.retrieval_tools)?"
        )
    if counts.foreign:
        out.append(f"{counts.foreign} span(s) of traces ragjudge never sent were dropped")
    if counts.over:
        out.append(f"{counts.over} span(s) past traces.max_spans ({config.max_spans}) were dropped")
    if counts.late:
        out.append(
            f"{counts.late} span(s) arrived after their case was read, or for a call that gave no reply (raise "
            "traces.settle_s?)"
        )
    return out
