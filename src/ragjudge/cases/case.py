"""A case ready to run: the frozen value every step of the gate reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragjudge.cases.tools import ToolConditions
from ragjudge.config.judge_config import CriterionConfig

TURN_SEPARATOR = " turn "
"""A turn's own id is its conversation's id, this, and its number: `refund-chat turn 2` (event logs show it)."""


@dataclass(frozen=True)
class Exchange:
    """One earlier turn of a conversation as it went in this run: what was asked and what the service answered."""

    question: str
    answer: str


@dataclass(frozen=True)
class Case:
    """A case ready to run."""

    id: str
    question: str
    expected: str | tuple[str, ...] | None
    """The reference answer: its points as written (a list), or one text ragjudge splits into points
    (`judge.reference.split_reference`)."""
    golden_context_ids: tuple[str, ...]
    category: str | None
    should_answer: bool
    must_mention: tuple[str, ...]
    must_not_mention: tuple[str, ...]
    source: str | None
    difficulty: str | None
    tags: tuple[str, ...]
    origin: str
    """Where the case came from: `file:line` (or `file#index`)."""
    criteria: tuple[str, ...] = ()
    """Criteria of `judge.criteria` this case adds by name."""
    inline_criteria: tuple[tuple[str, CriterionConfig], ...] = ()
    """Criteria this case defines itself, by name."""
    turns: tuple[Case, ...] = ()
    """A conversation's turns in order, each a case of its own (`turn` set); empty for one question."""
    turn: int = 0
    """This case's place in its conversation, from 1; 0 for a case that is one question."""
    history: tuple[Exchange, ...] = ()
    """The conversation so far, as this run asked and answered it (set when the turn is asked)."""
    conversation_id: str | None = None
    """What the service called the conversation in an earlier reply (`response.conversation_id`)."""
    review: str | None = None
    """`pending` (reported, gates nothing), `rejected` (skipped), `approved` or None (gates)."""
    file: str | None = None
    """The case file it was read from, as named; None for a case not read from a file (`--question`, traces)."""
    line: int | None = None
    """The line its item starts on in `file` (a conversation's turns: the conversation's); None without one."""
    tools: ToolConditions | None = None
    """Its tool conditions (`tools:`); None when it has none."""

    @property
    def gates(self) -> bool:
        """Whether the case counts toward the rules: not pending review."""
        return self.review != "pending"

    @property
    def is_conversation(self) -> bool:
        return bool(self.turns)

    @property
    def conversation(self) -> str:
        """The conversation's case id, for a turn (its own id otherwise)."""
        return self.id.rsplit(TURN_SEPARATOR, 1)[0] if self.turn else self.id

    @property
    def reference_points(self) -> tuple[str, ...] | None:
        """The reference's points as written when `expected` is a list; None for a text or no reference."""
        return self.expected if isinstance(self.expected, tuple) else None

    @property
    def has_reference(self) -> bool:
        return bool(self.expected.strip()) if isinstance(self.expected, str) else self.expected is not None

    def as_template_context(self) -> dict[str, Any]:
        """The `case` variable seen by the endpoint body template."""
        return {
            "id": self.conversation,
            "question": self.question,
            "expected": list(self.expected) if isinstance(self.expected, tuple) else self.expected,
            "golden_context_ids": list(self.golden_context_ids),
            "category": self.category,
            "should_answer": self.should_answer,
            "tags": list(self.tags),
            "source": self.source,
            "difficulty": self.difficulty,
        }
