"""One run's tracing: the receiver up for the run, a trace context per request, each reply joined with its
spans, and the run's warnings about what did not arrive."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from types import TracebackType

from ragjudge.cases.case import Case
from ragjudge.config.traces_config import TracesConfig
from ragjudge.endpoint.spans import SpansSeen
from ragjudge.endpoint.trace import Trace
from ragjudge.errors import ConfigError
from ragjudge.traces.context import TraceContext, new_context
from ragjudge.traces.conventions import BY_NAME, CONVENTIONS, Convention
from ragjudge.traces.findings import read_spans
from ragjudge.traces.joining import join
from ragjudge.traces.otlp import Limits
from ragjudge.traces.receiver import Receiver
from ragjudge.traces.redaction import redact_text
from ragjudge.traces.store import Counts, SpanStore
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
    if config.conventions is None:
        return CONVENTIONS
    unknown = [name for name in config.conventions if name not in BY_NAME]
    if unknown:
        raise ConfigError(
            f"{key}.conventions: unknown convention {unknown[0]!r}", tip=f"use some of: {', '.join(BY_NAME)}"
        )
    return tuple(c for c in CONVENTIONS if c.name in config.conventions)


class TraceSession:
    """The `TraceHook` the endpoint client calls; a context manager that holds the receiver open."""

    def __init__(self, config: TracesConfig, key: str = "traces", concurrency: int = 1) -> None:
        """`concurrency`: the endpoint's (requests in flight), for `waiting_threads`."""
        check_installed(key)
        if config.store is not None:
            raise ConfigError(
                f"{key}.store: reading traces from a trace store is not built yet",
                tip="leave traces.store out and point the service's exporter at traces.receive",
            )
        if not config.is_loopback() and not config.allow_remote:
            raise ConfigError(
                f"{key}.receive: {config.receive} is not a loopback address: spans would come from the network",
                tip="bind 127.0.0.1, or set traces.allow_remote: true",
            )
        if config.export is not None:
            try:
                urls.check_http_url(config.export.url)
            except ValueError as exc:
                raise ConfigError(f"{key}.export.url: {exc}") from None
        self.config = config
        self._concurrency = concurrency
        self._conventions = conventions_of(config, key)
        self._conversation_keys = tuple(k for c in self._conventions for k in c.conversation_id)
        self.store = SpanStore(config.max_spans, self._conversation_keys)
        host, port = config.bind()
        self._key = key
        self._receiver = Receiver(host, port, self.store, Limits(config.max_body_bytes, config.max_attribute_chars))
        self._lock = threading.Lock()
        self._sent: dict[int, tuple[Case, TraceContext, tuple[str, ...]]] = {}

    @property
    def waiting_threads(self) -> int:
        """Threads the run adds to wait for spans while others send: 3 a place, up to 256. Spans that come up to
        3 replies' time after their reply (an exporter's batch delay) then cost the run no throughput."""
        return min(256, 3 * self._concurrency)

    @property
    def address(self) -> str:
        """Where the receiver listens (HOST:PORT), the port picked when `receive` asked for 0."""
        return self._receiver.address

    def __enter__(self) -> TraceSession:
        """The receiver bound and serving (just before the first request): exit 2 when the port is taken."""
        try:
            self._receiver.start()
        except OSError as exc:
            raise ConfigError(
                f"{self._key}.receive: cannot listen on {self.config.receive}: {exc.strerror or exc}",
                tip="choose a free port (0 picks one), or stop what listens there",
            ) from None
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._receiver.stop()

    def headers(self, case: Case, body: str | None) -> dict[str, str]:
        context = new_context()
        conversations = _conversation_ids(case, body)
        self.store.expect(context, conversations)
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
        collected = self.store.take(context, time.monotonic() + self.config.settle_s)
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
            self.store.take(sent[1], until=0.0)  # what came is let go; what comes later is counted late

    def counts(self) -> Counts:
        return self.store.counts()


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
    missing = sum(s.arrived == 0 for s in traced)
    if missing:
        out.append(
            f"no spans arrived for {missing} of {len(traced)} cases within {config.settle_s:g} s (traces.settle_s): "
            f"is the service exporting to http://{address} (OTEL_EXPORTER_OTLP_ENDPOINT)? does it continue the "
            "`traceparent` ragjudge sends? is it sampling? Their retrieval metrics stay unknown"
        )
    bare = [t for t in replies if t is not None and t.spans is not None and t.spans.arrived and t.passages_unknown]
    if bare:
        out.append(
            f"spans arrived for {len(bare)} case(s) but none carried retrieved documents: is content tracing on "
            "(HAYSTACK_CONTENT_TRACING_ENABLED=true), or do its retriever spans use another convention?"
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
