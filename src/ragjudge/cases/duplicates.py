"""What two cases share when one duplicates the other: their questions, normalised.

`load_cases` warns about duplicates, `cases stats` lists them, `dedupe` drops them and `cases import-bad`
skips them, all by the same key.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.cases.case import Case

# Removed before comparing questions: whitespace, ASCII punctuation, full-width forms (！？，：；...),
# CJK punctuation (。、「」《》...) and the typographic quotes and dashes people paste in.
_PUNCT = re.compile(
    "[\\s" + re.escape(string.punctuation) + "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
    "\u3000-\u303f\u2010-\u2027\u00b7]+"
)


def normalize_question(question: str) -> str:
    """The key two questions share when they are duplicates of each other."""
    return _PUNCT.sub("", question.lower())


def questions_key(questions: Sequence[str]) -> str:
    """What two cases share when one duplicates the other: their questions (one, or a conversation's every
    question), normalised."""
    return "\x1f".join(normalize_question(q) for q in questions)


def dedupe_key(case: Case) -> str:
    return questions_key([t.question for t in case.turns] if case.turns else [case.question])


def raw_key(data: Any) -> str | None:
    """`dedupe_key` of a case as written (not validated); None when it has no question to compare."""
    if not isinstance(data, dict):
        return None
    turns = data.get("turns")
    questions = [t.get("question") for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []
    if not turns:
        questions = [data.get("question")]
    texts = [q for q in questions if isinstance(q, str) and q.strip()]
    if not texts or len(texts) != len(questions):
        return None
    return questions_key(texts)


@dataclass(frozen=True)
class Duplicate:
    """A case whose questions are an earlier case's, normalised."""

    case: Case
    first: Case
    """The earlier case it duplicates."""


def duplicates(cases: Iterable[Case]) -> list[Duplicate]:
    """Every case that duplicates an earlier one, in order."""
    first: dict[str, Case] = {}
    out = []
    for case in cases:
        key = dedupe_key(case)
        if key in first:
            out.append(Duplicate(case, first[key]))
        else:
            first[key] = case
    return out


def duplicate_warnings(cases: Iterable[Case]) -> list[str]:
    return [
        f"case {d.case.id!r} ({d.case.origin}) duplicates the question of case {d.first.id!r} "
        "after normalisation; run `ragjudge dedupe` to drop it"
        for d in duplicates(cases)
    ]
