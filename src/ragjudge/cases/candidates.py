"""A generated case held to its document: its points and quote verbatim, its question in the document's language.

`cases generate` asks the model for cases it can check. Every expected point and the quote must be fragments
of the document as written (whitespace aside: a line break or a space between "7" and "天" does not count), so
the reference answer comes from the knowledge base and not from the model's memory; the question must be in
the document's language. What fails says why, in words the model is shown on its one corrective retry and
the summary counts by.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.cases.language import NAMES, Language, language_of

_SPACE = re.compile(r"\s+")
NOT_VERBATIM = "not verbatim in the document"
"""The reason counted for a case whose point or quote the document does not hold, after the retry."""
WRONG_LANGUAGE = "question not in the document's language"
"""The reason counted for a question in another language than its document's."""
ANSWERED = "out-of-scope question with expected points"
"""The reason counted for an out-of-scope question that came with points to answer it by."""


def squeezed(text: str) -> str:
    """`text` without whitespace: what is compared when a fragment is checked."""
    return _SPACE.sub("", text)


def is_fragment(fragment: str, document: str) -> bool:
    """Whether `fragment` (non-blank) appears in `document`, whitespace aside."""
    flat = squeezed(fragment)
    return bool(flat) and flat in squeezed(document)


def locate(fragment: str, document: str) -> tuple[int, int] | None:
    """Where `fragment` stands in `document`, whitespace aside: (start, end) of its first occurrence, or None."""
    flat = squeezed(fragment)
    if not flat:
        return None
    found = re.search(r"\s*".join(re.escape(ch) for ch in flat), document)
    return (found.start(), found.end()) if found else None


@dataclass(frozen=True)
class Misfit:
    """Why a generated case cannot be kept as it is."""

    reason: str
    """What is counted: `NOT_VERBATIM`, `WRONG_LANGUAGE` or `ANSWERED`."""
    detail: str
    """What exactly, for the model's retry and the summary: the point that is not in the document, ..."""
    retry: bool
    """Whether the model is asked once more (a point or quote not in the document); a question in the wrong
    language is dropped at once."""


def misfit(
    question: str, expected: Sequence[str], quote: str, document: str, language: Language | None, answerable: bool
) -> Misfit | None:
    """What is wrong with one generated case, or None. `answerable`: an in-scope question, whose `expected`
    points must be there; an out-of-scope one must have none (its quote shows the topic it is near)."""
    asked = language_of(question)
    if language is not None and asked != language:
        said = NAMES[asked] if asked else "no language"
        return Misfit(WRONG_LANGUAGE, f"the question is in {said}, the document in {NAMES[language]}", False)
    if not answerable and expected:
        return Misfit(ANSWERED, "an out-of-scope question has no expected points: leave `expected` empty", True)
    if answerable and not expected:
        return Misfit(NOT_VERBATIM, "`expected` is empty: list the points of the answer, each copied", True)
    for point in expected:
        if not is_fragment(point, document):
            return Misfit(NOT_VERBATIM, f"expected point {point!r} is not copied from the document", True)
    if not is_fragment(quote, document):
        return Misfit(NOT_VERBATIM, f"the quote {quote!r} is not copied from the document", True)
    return None
