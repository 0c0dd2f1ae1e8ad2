"""The service's own spans for a case or a turn, as the report keeps them: the case trace block's `spans`."""

from __future__ import annotations

from pydantic import Field

from ragjudge.report.block import Block


class SpanToolCallBlock(Block):
    """A tool the service called, as its span recorded it."""

    name: str
    """The tool's name (`gen_ai.tool.name`)."""
    arguments: str | None = None
    """The call's arguments as recorded (JSON text), cut to 2,000 characters, secrets masked; null if none."""
    result: str | None = None
    """The call's result as recorded, cut to 2,000 characters, secrets masked; null if none."""


class SpansBlock(Block):
    """With `traces:` set: the trace ragjudge joined with this reply, and what its spans said."""

    trace_id: str
    """The W3C trace id sent in this request's `traceparent` (32 hex digits): search the team's trace store for
    it."""
    parent_span_id: str
    """The parent span id sent: the service's first span names it as its parent."""
    conversation_ids: list[str] = Field(default_factory=list)
    """Conversation ids the request carried, by which a trace that did not continue `traceparent` joins
    (`gen_ai.conversation.id`)."""
    arrived: int = 0
    """Spans that arrived within `traces.settle_s`; 0 when none did (the retrieval metrics then stay unknown)."""
    joined_by: list[str] = Field(default_factory=list)
    """`traceparent` (the trace id sent), `conversation` (a conversation id); empty when nothing arrived."""
    conventions: list[str] = Field(default_factory=list)
    """The conventions whose attributes were found (`gen_ai`, `openinference`, `haystack`)."""
    passages_from: str | None = None
    """The convention the trace's passages were read by; null when no span carried documents."""
    passage_ids: list[str] = Field(default_factory=list)
    """The passages' ids as the trace gave them, in order."""
    passages_used: bool = False
    """True when the trace's passages stood for the reply's (the reply had none): the trace block's `passages`
    are then these, each marked `source: trace`."""
    tool_calls: list[SpanToolCallBlock] = Field(default_factory=list)
    """Tool calls from `execute_tool` spans (or a convention's equivalent), in the order they started."""
    input_tokens: int | None = None
    """The service's model tokens in, summed over its model spans; null when no span recorded them."""
    output_tokens: int | None = None
    """The service's model tokens out, summed over its model spans; null when no span recorded them."""
    cost_usd: float | None = None
    """The service's model cost in USD from these tokens at `traces.price`, apart from the judge's cost (the case's
    `judge.cost_usd`) and from what the reply said it cost (`trace.cost_usd`); null without a price or tokens."""
    server_ms: float | None = None
    """The service's own span for the request, start to end, in ms; null when it did not arrive."""
    retrieval_ms: float | None = None
    """Retrieval spans' durations, summed, in ms; null when there were none."""
    generation_ms: float | None = None
    """Model spans' durations, summed, in ms; null when there were none."""
    ttfc_ms: float | None = None
    """The model's time to first chunk as its span recorded it (`gen_ai.response.time_to_first_chunk`), in ms."""
