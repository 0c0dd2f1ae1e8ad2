"""What one endpoint reply means to ragjudge, whatever shape it came in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

RefusedBy = Literal["field", "empty", "pattern", "builtin", "judge"]


@dataclass(frozen=True)
class Passage:
    """One retrieved passage."""

    id: str
    title: str
    text: str
    """Empty when the endpoint reported only an id: such a passage is not evidence."""


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
    passage_text_dropped: bool = False
    """The passages' text and title were let go once judged (a large run keeps only their ids)."""

    @property
    def retrieved_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.passages)

    @property
    def evidence(self) -> tuple[Passage, ...]:
        """Passages with text: a title alone cannot support or contradict a sentence."""
        return tuple(p for p in self.passages if p.text)
