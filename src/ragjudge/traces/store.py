"""The spans received in a run, filed by the case they belong to; the rest dropped and counted.

A trace joins a case by the trace id ragjudge sent in its `traceparent`, or by a conversation id the request
carried (a framework that starts a new trace per request still names the conversation). Bounded: at most
`max_spans` are held at once, and a case's spans are let go once its reply has been joined with them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragjudge.endpoint.spans import Joined
from ragjudge.traces.context import TraceContext
from ragjudge.traces.otlp import Span


@dataclass(frozen=True)
class Collected:
    spans: tuple[Span, ...]
    joined_by: tuple[Joined, ...]


@dataclass(frozen=True)
class Counts:
    received: int
    """Spans received in the run, kept or not."""
    foreign: int
    """Spans of trace ids ragjudge never sent (nor joined by a conversation id): dropped."""
    over: int
    """Spans dropped because `traces.max_spans` were held already."""
    late: int
    """Spans that arrived after their case's reply was joined (past `traces.settle_s`, or after the service's own
    span had ended)."""
    unread: tuple[tuple[str, int], ...] = ()
    """With `traces.store`: why the store could not give a case's trace, with how many cases (or turns) each."""


class SpanStore:
    """Thread-safe: the receiver's threads add, the endpoint's threads wait and take."""

    def __init__(self, max_spans: int, conversation_keys: Sequence[str]) -> None:
        self._max = max_spans
        self._conversation_keys = tuple(conversation_keys)
        self._changed = threading.Condition()
        self._expected: dict[str, TraceContext] = {}
        """Sent trace id (or a trace joined by conversation) -> the context sent."""
        self._by_conversation: dict[str, TraceContext] = {}
        self._joined: dict[str, set[Joined]] = {}
        self._spans: dict[str, list[Span]] = {}
        """By the sent trace id."""
        self._taken: set[str] = set()
        self._held = 0
        self._received = self._foreign = self._over = self._late = 0

    def expect(self, context: TraceContext, conversation_ids: Iterable[str] = ()) -> None:
        with self._changed:
            self._expected[context.trace_id] = context
            self._spans.setdefault(context.trace_id, [])
            for conversation in conversation_ids:
                self._by_conversation[conversation] = context

    def add(self, spans: Sequence[Span]) -> None:
        with self._changed:
            self._received += len(spans)
            # A batch first names the traces its conversation ids join: their other spans may come first in it.
            for span in spans:
                if span.trace_id in self._expected:
                    continue
                for key in self._conversation_keys:
                    value = span.attributes.get(key)
                    ours = self._by_conversation.get(value) if isinstance(value, str) else None
                    if ours is not None:
                        self._expected[span.trace_id] = ours
                        self._joined.setdefault(ours.trace_id, set()).add("conversation")
            for span in spans:
                ours = self._expected.get(span.trace_id)
                if ours is None:
                    self._foreign += 1
                elif ours.trace_id in self._taken:
                    self._late += 1
                elif self._held >= self._max:
                    self._over += 1
                else:
                    if span.trace_id == ours.trace_id:
                        self._joined.setdefault(ours.trace_id, set()).add("traceparent")
                    self._spans[ours.trace_id].append(span)
                    self._held += 1
            self._changed.notify_all()

    def take(self, context: TraceContext, until: float) -> Collected:
        """The case's spans, once the service's own span for the request has arrived or at `until` (monotonic);
        then let go."""
        with self._changed:
            while not self._complete(context) and (left := until - time.monotonic()) > 0:
                self._changed.wait(left)
            spans = tuple(self._spans.pop(context.trace_id, ()))
            self._held -= len(spans)
            self._taken.add(context.trace_id)
            order: tuple[Joined, ...] = ("traceparent", "conversation")
            joined = self._joined.pop(context.trace_id, set())
            return Collected(spans, tuple(j for j in order if j in joined))

    def _complete(self, context: TraceContext) -> bool:
        # A span's children end (and are exported) before it: once the service's first span is here, the
        # request's spans are too. That span continues ours, or starts a trace of its own (joined by conversation).
        return any(
            s.parent_span_id == context.span_id or (not s.parent_span_id and s.trace_id != context.trace_id)
            for s in self._spans.get(context.trace_id, ())
        )

    def counts(self) -> Counts:
        with self._changed:
            return Counts(self._received, self._foreign, self._over, self._late)
