"""What one endpoint reply means to ragjudge, whatever shape it came in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Passage:
    """One retrieved passage."""

    id: str
    title: str
    text: str
    """Empty when the endpoint reported only an id: such a passage is not evidence."""


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
    warnings: tuple[str, ...] = ()
    """What was odd about the reply without making it unusable (duplicate JSON keys)."""

    @property
    def retrieved_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.passages)

    @property
    def evidence(self) -> tuple[Passage, ...]:
        """Passages with text: a title alone cannot support or contradict a sentence."""
        return tuple(p for p in self.passages if p.text)
