"""What the service's own spans said about a reply (issue 41): values only, read by `ragjudge.traces`.

Kept beside `trace.py` so a `Trace` can hold them without the endpoint package knowing how spans are received
or read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Joined = Literal["traceparent", "conversation"]


@dataclass(frozen=True)
class ToolCallSeen:
    """A tool the service called, as an `execute_tool` span (or a framework's equivalent) recorded it."""

    name: str
    arguments: str | None
    """The arguments as the span recorded them (JSON text, cut and masked); None when not recorded."""
    result: str | None
    """The result as the span recorded it (cut and masked); None when not recorded."""


@dataclass(frozen=True)
class SpansSeen:
    """One case's (or turn's) trace, as ragjudge joined and read it."""

    trace_id: str
    """The W3C trace id ragjudge sent in `traceparent` (32 hex digits)."""
    span_id: str
    """The parent span id ragjudge sent: the service's first span names it as its parent."""
    conversation_ids: tuple[str, ...] = ()
    """Conversation ids the request carried, by which a trace that did not continue `traceparent` joins."""
    arrived: int = 0
    """Spans that arrived for this case within `traces.settle_s`."""
    joined_by: tuple[Joined, ...] = ()
    """How the spans joined: `traceparent` (the trace id sent), `conversation` (a `gen_ai.conversation.id`)."""
    conventions: tuple[str, ...] = ()
    """The conventions whose attributes were found (`gen_ai`, `openinference`, `haystack`)."""
    passages_from: str | None = None
    """The convention the trace's passages were read by; None when the spans carried none."""
    passage_ids: tuple[str, ...] = ()
    """The passages' ids as the trace gave them, whether or not they were used."""
    passages_used: bool = False
    """True when the trace's passages stand for the reply's (the reply had none)."""
    tool_calls: tuple[ToolCallSeen, ...] = ()
    input_tokens: int | None = None
    """The service's model tokens in, over its model spans; None when no span recorded them."""
    output_tokens: int | None = None
    cost_usd: float | None = None
    """The service's model cost from its tokens at `traces.price`; None without a price or tokens."""
    server_ms: float | None = None
    """The service's own span for the request, start to end."""
    retrieval_ms: float | None = None
    """Retrieval spans, summed."""
    generation_ms: float | None = None
    """Model spans, summed."""
    ttfc_ms: float | None = None
    """The model's time to first chunk as its span recorded it (`gen_ai.response.time_to_first_chunk`)."""
