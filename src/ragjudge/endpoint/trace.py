"""What one endpoint reply means to ragjudge, whatever shape it came in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ragjudge.endpoint.spans import SpansSeen

RefusedBy = Literal["field", "empty", "pattern", "builtin", "judge"]


@dataclass(frozen=True)
class Passage:
    """One retrieved passage."""

    id: str
    title: str
    text: str
    """Empty when the endpoint reported only an id: such a passage is not evidence."""
    from_trace: bool = False
    """Read from the service's OpenTelemetry spans (`traces:`), not from its reply."""


AnswerFlagKind = Literal["question", "passage", "id"]


@dataclass(frozen=True)
class AnswerFlag:
    """The mapped answer looks like something else: a mapping mistake that would otherwise score as an answer."""

    kind: AnswerFlagKind
    """`question` (the question echoed back), `passage` (a retrieved passage's text verbatim), `id` (a UUID, a hex
    hash, a completion id)."""
    path: str
    """Where the answer was read (the mapped path, or the default key)."""
    hint: str | None
    """The path that more likely holds the answer, when the reply has one."""
    from_passages: bool = False
    """The answer's path runs through the passage list itself (`retriever.documents.0.content`): certainly a
    mapping mistake, where a passage's text alone may be an extractive service quoting it."""


@dataclass(frozen=True)
class ReadNotes:
    """How a reply was read, for the suite-level mapping check (a key that resolves in no reply is warned about)."""

    resolved: frozenset[str] = frozenset()
    """Keys checked across replies (`refused`, `retrieved_id`, `retrieved_text`, `retrieved_title`) found here."""
    missed: tuple[tuple[str, int], ...] = ()
    """Per-passage mapped keys that resolved to nothing, with the number of passages they missed in."""
    positional_ids: int = 0
    """Passages numbered S1, S2, ... because the reply carried no id for them at all."""
    passage_objects: int = 0
    """Passages that were objects (where an id, text or title path could resolve)."""
    hashed_ids: int = 0
    """Passages whose id, read by a default key, is a content hash (64 hex characters)."""
    stable_id_at: str | None = None
    """Where, inside such a passage, an id that is not a hash was found (`meta.doc_id`)."""
    answer_flag: AnswerFlag | None = None
    """Set when the answer read is the question, a passage's text or an id."""


@dataclass(frozen=True)
class StreamNotes:
    """How a streamed reply was read."""

    protocol: str
    """The protocol that read it: a built-in name, `declared`, or `generic` (none was declared)."""
    looks_like: str | None = None
    """For `generic`: what the stream's events look like (`protocols.recognise`), for the run's warning."""
    suggestion: str | None = None
    """For `generic`: the built-in protocol that would read it (None for named events of no known protocol)."""
    finish_reason: str | None = None
    """The finish reason the stream gave, where its protocol reads one."""
    reasoning: str | None = None
    """A model's reasoning, kept apart from the answer (bounded); None when the stream sent none."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call the service made while answering, as its reply exposed it."""

    name: str
    """The tool's name ("" when the reply named none)."""
    arguments: Any
    """The arguments, their JSON decoded (an object, usually); the text as sent when it is not JSON; None: none."""
    position: int
    """Its place among the reply's calls, from 1."""
    result: Any = None
    """What the tool returned, where the reply carried it (bounded); None when it did not."""
    id: str | None = None
    """The call's id in the reply, where it has one."""


@dataclass(frozen=True)
class Trace:
    """An endpoint reply, normalised."""

    answer: str
    refused: bool
    confidence: str | None
    passages: tuple[Passage, ...]
    """In retrieval order; includes passages without text (they still count for recall)."""
    citations: tuple[str, ...]
    cost_usd: float | None
    server_latency_ms: float | None
    """What the endpoint said its latency was; never used by rules."""
    latency_ms: float
    """Measured by ragjudge: the round trip of the successful attempt."""
    refused_by: RefusedBy | None = None
    """How the refusal was decided (`field`, `empty`, `pattern`, `builtin`, `judge`); None when answered."""
    read: ReadNotes = field(default_factory=ReadNotes)
    warnings: tuple[str, ...] = ()
    """What was odd about the reply without making it unusable (duplicate JSON keys)."""
    ttft_ms: float | None = None
    """A streamed reply: ms from sending the request to the first answer text; None for one JSON body."""
    conversation_id: str | None = None
    """What the service called the conversation in this reply (`response.conversation_id`); None if nothing."""
    passages_unknown: bool = False
    """The reply carried no passages and `endpoint.response.retrieved` is not mapped: the service does not expose
    what it retrieved (an OpenAI-compatible chat reply), so its passages are unknown, not absent."""
    passage_text_dropped: bool = False
    """The passages' text and title were let go once judged (a large run keeps only their ids)."""
    stream: StreamNotes | None = None
    """A streamed reply: how it was read; None for one JSON body."""
    retrieval_tool_missed: str | None = None
    """The retrieval tool (`response.retrieval_tool`) when the reply exposes tool calls and none was of it: the
    agent retrieved nothing because it never searched."""
    tool_calls: tuple[ToolCall, ...] | None = None
    """The tool calls the reply exposed, in order; None when the service exposes none (its protocol reads no tool
    calls and the reply has no `tool_calls`), so a case's tool conditions are unknown, never passed or failed."""
    spans: SpansSeen | None = None
    """With `traces:` set: the service's own spans for this reply, as joined and read; None otherwise."""

    @property
    def retrieved_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.passages)

    @property
    def evidence(self) -> tuple[Passage, ...]:
        """Passages with text: a title alone cannot support or contradict a sentence."""
        return tuple(p for p in self.passages if p.text)
