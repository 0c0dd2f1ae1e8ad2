"""What the endpoint replied for a case or a turn, as the report keeps it: the `trace` block and its passages."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ragjudge.report.block import Block, GivenKeysBlock
from ragjudge.report.spans_block import SpansBlock


class PassageBlock(GivenKeysBlock):
    """A retrieved passage as the report keeps it: the text trimmed to `PASSAGE_CHARS` (for the HTML report).

    When the run did not keep passage text (`run` lets it go once judged, and keeps it only with
    `--bias-check`), `title` and `text` are left out: the block is `{"id": ...}`. Present and empty, they mean the
    reply gave none.
    """

    id: str
    """The passage's id as read from the reply (empty when a mapped id was missing; `S1`, `S2`, ... when the
    reply carried no ids at all)."""
    title: str = ""
    """The passage's title; empty when the reply gave none; left out when the run did not keep passage text."""
    text: str = ""
    """The passage's text, trimmed to `PASSAGE_CHARS` characters; empty when the reply gave none; left out when
    the run did not keep passage text."""
    source: Literal["reply", "trace"] = "reply"
    """`trace` for a passage read from the service's spans (`traces:`); left out for one from the reply."""


PASSAGE_CHARS = 600


class ToolCallBlock(Block):
    """One tool call the service made while answering, as its reply exposed it."""

    name: str
    """The tool's name (empty when the reply named none)."""
    arguments: Any = None
    """Its arguments, their JSON decoded (an object, usually); the text as sent when it was not JSON; null: none."""
    result: Any = None
    """What the tool returned, where the reply carried it (at most 20,000 characters of JSON); null when not."""
    position: int
    """Its place among the reply's tool calls, from 1."""


class TraceBlock(Block):
    """What the endpoint replied for a case, as ragjudge read it. Every reply field is null (or empty) when there
    was no usable reply; `error` then says why."""

    answer: str | None
    """The answer text as read from the reply (may be empty for a decline); null with no usable reply."""
    refused: bool | None
    """Whether the reply was read as a refusal, however it was decided (`refused_by`); null with no usable
    reply."""
    confidence: str | None
    """The confidence the reply stated, lower-cased (`high`, `medium`, `low`, `none`, ...); null when it stated
    none."""
    retrieved_ids: list[str]
    """The retrieved passages' ids, in retrieval order (repeats kept); empty when none were retrieved."""
    latency_ms: float | None
    """The round trip of the successful attempt in ms, to 0.1 ms, measured by ragjudge (with `--traces`: the
    recorded latency); retries and waits are not in it. Null with no usable reply."""
    cost_usd: float | None
    """The call's cost in USD as the endpoint reported it; null when it reported none."""
    error: str | None
    """Why there is no usable reply (`endpoint error: ...`, or why the gate refused to evaluate); null when
    there is one."""
    attempts: int = 0
    """Calls made to the endpoint for this result (1 plus retries); 0 when none was made (recorded traces, a
    run that refused to evaluate, a turn whose request the earlier answers grew past max_request_bytes)."""
    retry_wait_ms: float = 0.0
    """Time waited between attempts in ms (backoff and Retry-After), to 0.1 ms; not part of `latency_ms`."""
    server_latency_ms: float | None = None
    """The latency the endpoint reported itself, in ms (never used by rules); null when it reported none."""
    passages: list[PassageBlock] = Field(default_factory=list)
    """Every retrieved passage, in retrieval order; empty with no usable reply."""
    refused_by: Literal["field", "empty", "pattern", "builtin", "judge"] | None = None
    """How the refusal was decided; null when the reply answered (or there was no reply)."""
    positional_ids: bool = False
    """True when the reply's passages had no ids and ragjudge numbered them S1, S2, ..."""
    warnings: list[str] = Field(default_factory=list)
    """What was odd about the reply without making it unusable (a key repeated in one JSON object)."""
    ttft_ms: float | None = None
    """A streamed reply's time to the first token in ms, to 0.1 ms: from sending the request to the first
    non-empty answer delta (or the first event carrying the answer); `latency_ms` runs to the stream's end.
    Null for a reply that was one JSON body."""
    conversation_id: str | None = None
    """What the service called the conversation in this reply (`endpoint.response.conversation_id`); null when
    it named none."""
    passages_unknown: bool = False
    """True when the reply carried no passages and `endpoint.response.retrieved` is not mapped: what the service
    retrieved is unknown, so retrieval metrics are null, faithfulness and grounding/citations unassessable."""
    protocol: str | None = None
    """A streamed reply: the protocol that read it (`openai-chat`, `openai-responses`, `ai-sdk`, `langserve`,
    `declared` for the team's own, `generic` when none was declared); null for one JSON body."""
    finish_reason: str | None = None
    """A streamed reply: the finish reason its protocol read (`stop`, `completed`, ...); null when none was sent."""
    reasoning: str | None = None
    """A streamed reply: the model's reasoning, kept apart from the answer and the TTFT (up to 20,000
    characters); null when the stream sent none."""
    tool_calls: list[ToolCallBlock] | None = None
    """The tool calls the reply exposed, in order (never part of the answer); null when the service exposes none
    (its protocol reads no tool calls and the reply had no `tool_calls`), so tool conditions are unknown."""
    spans: SpansBlock | None = None
    """With `traces:` set: the service's own spans for this reply (`traces:`), as joined and read; null without
    `traces:`."""
