"""A case as written in a case file: the pydantic models its items are validated against."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from ragjudge.cases.tools import ToolsModel
from ragjudge.config.judge_config import CriterionConfig, check_criterion_name

ID_BREAK = re.compile("[\t\n\r\v\f\x85\u2028\u2029]")
"""What may not stand in a case id: what a line-by-line reader (or a workflow log) takes for a break."""
MAX_TURNS = 50
"""The most turns one conversation may have: each is a call and a judgement, in order."""

NO_QUESTION = "a case needs a `question` (or `turns:`, a conversation's list of turns)"
"""The model's own complaint when a case has neither; the loader says it first, as a missing field."""

# Per-question fields that, on a conversation, belong to one of its turns.
_PER_TURN_ONLY = ("expected", "golden_context_ids", "should_answer", "must_mention", "must_not_mention", "tools")


def check_expected(value: str | list[str] | None) -> str | list[str] | None:
    """A reference answer as written (a text, or a list of its points); ValueError for an empty list or point.

    Case files and calibration labels both read `expected` through it, so the judge is shown a reference the
    same way whichever brought it."""
    if isinstance(value, list):
        if not value:
            raise ValueError("an empty list has no reference points: leave `expected` out, or list the points")
        if any(not point.strip() for point in value):
            raise ValueError("a reference point is empty")
    return value


class _Asked(BaseModel):
    """The per-question fields of a case, as written: a single-question case's, or one turn's of a conversation."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    expected: str | list[str] | None = None
    golden_context_ids: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("golden_context_ids", "goldenContextIds")
    )
    category: str | None = None
    should_answer: bool | None = Field(None, validation_alias=AliasChoices("should_answer", "shouldAnswer"))
    must_mention: list[str] = Field(default_factory=list, validation_alias=AliasChoices("must_mention", "mustMention"))
    must_not_mention: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("must_not_mention", "mustNotMention")
    )
    criteria: list[str] | dict[str, CriterionConfig] = Field(default_factory=list)
    tools: ToolsModel | None = None

    @field_validator("expected")
    @classmethod
    def _points(cls, value: str | list[str] | None) -> str | list[str] | None:
        return check_expected(value)

    @field_validator("criteria")
    @classmethod
    def _criterion_names(cls, value: list[str] | dict[str, CriterionConfig]) -> list[str] | dict[str, CriterionConfig]:
        for name in value:
            problem = check_criterion_name(name)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("question", check_fields=False)
    @classmethod
    def _question_present(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("question is empty")
        return value


class TurnModel(_Asked):
    """One turn of a conversation as written: the per-question fields of a case."""

    question: str


class CaseModel(_Asked):
    """One case as written in a case file (snake_case, or camelCase: `goldenContextIds`, `mustMention`, ...).

    A conversation has `turns:` instead of `question:`."""

    id: str | None = None
    question: str | None = None
    turns: list[TurnModel] | None = Field(None, min_length=1, max_length=MAX_TURNS)
    source: Literal["public", "human", "reflow", "synthetic"] | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None
    tags: list[str] = Field(default_factory=list)
    review: Literal["pending", "approved", "rejected"] | None = None
    """A case waiting for a person: `pending` runs and is reported but gates nothing; `rejected` is skipped;
    `approved` (or none) gates."""

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("id")
    @classmethod
    def _id_one_line(cls, value: str | None) -> str | None:
        # An id is written one a line (the Action's `failed-case-ids`, JUnit, the log): one holding a line break
        # would read as several ids there, and a later step echoing the output would replay them as commands.
        if value is not None and ID_BREAK.search(value):
            raise ValueError("an id is one line; this one holds a line break or a tab")
        return value

    @model_validator(mode="after")
    def _question_or_turns(self) -> CaseModel:
        if self.turns is None and self.question is None:
            raise ValueError(NO_QUESTION)
        if self.turns is not None:
            if self.question is not None:
                raise ValueError("a case has either `question` or `turns`, not both: put the question in a turn")
            stray = [name for name in _PER_TURN_ONLY if name in self.model_fields_set]
            if stray:
                raise ValueError(
                    f"{', '.join(stray)}: on a conversation these belong to a turn (under `turns:`), "
                    "not to the whole case"
                )
        return self
