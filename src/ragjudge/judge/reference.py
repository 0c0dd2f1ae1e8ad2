"""Is the answer right? The reference answer's points, each judged covered, partial, missing or contradicted.

A person wrote the reference (`expected`). ragjudge, not the judge, decides what its points are: a list is taken
as written, and a text is split by `split_reference` (the same split for the model judge and the offline one),
so a judge cannot pick the one point an answer happens to cover. The judge must give exactly one verdict per
point, and every quote must be evidence: a verbatim excerpt of the answer, of whole words, with at least
`MIN_QUOTE_CHARS` letters, digits or CJK characters. A verdict is auditable by reading the two texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ragjudge.judge.text import has_cjk

Verdict = Literal["covered", "partial", "missing", "contradicted"]
VERDICTS: tuple[Verdict, ...] = ("covered", "partial", "missing", "contradicted")


class PointError(Exception):
    """The judge's points do not fit the reference or the answer; the message says which and why."""


@dataclass(frozen=True)
class ReferencePoint:
    """One point of the reference answer and how the answer treats it."""

    point: str
    """The point as the reference has it."""
    verdict: Verdict
    quote: str
    """A verbatim excerpt of the answer for covered, partial and contradicted; empty for missing."""
    reason: str
    """One line, the judge's."""

    def as_dict(self) -> dict[str, str]:
        return {"point": self.point, "verdict": self.verdict, "quote": self.quote, "reason": self.reason}


def flat(text: str) -> str:
    """Whitespace folded to single spaces, ends stripped: what "verbatim" compares."""
    return " ".join(text.split())


def point_key(text: str) -> str:
    """A point with every space removed: what tells two points apart, here and where calibration pairs a
    person's verdicts with the judge's (a judge may add or drop a space between Chinese words)."""
    return re.sub(r"\s+", "", text)


# A text's point ends at a full-width 。；！？, a semicolon, a newline, or a Latin . ! ? before a space or the end
# (so "$12.99" and "v2.1" stay whole); a part with no letter, digit or CJK character ("---") is no point.
_POINT_END = re.compile(r"[。；;！？\n]+|[.!?]+(?=\s|$)")
_HAS_WORD = re.compile(r"[^\W_]")
# A list's marker at the start of a line ("- ", "* ", "• ", "1. ", "2) ", "3、") is not part of its point.
_LIST_MARK = re.compile(r"^[ \t]*(?:(?:[-*•·]|\d{1,3}[.)])[ \t]+|\d{1,3}、)", re.MULTILINE)


def split_reference(reference: str | Sequence[str]) -> tuple[str, ...]:
    """The reference's points as every judge is given them, whitespace folded: a list as written; a text split
    at 。；！？, semicolons, newlines, and . ! ? before a space or the end, without the markers of a list at the
    start of its lines, and without the parts that hold no letter, digit or CJK character."""
    if not isinstance(reference, str):
        return tuple(flat(p) for p in reference if p.strip())
    parts = _POINT_END.split(_LIST_MARK.sub("", reference))
    return tuple(p for p in (flat(part) for part in parts) if _HAS_WORD.search(p))


MIN_QUOTE_CHARS = 4
"""A quote holds at least this many letters, digits or CJK characters: one letter is not evidence."""


def _cuts_a_word(edge: str, neighbour: str) -> bool:
    # Latin words are cut when a letter or digit goes on past the quote; CJK has no word boundary to respect.
    return edge.isalnum() and neighbour.isalnum() and not has_cjk(edge) and not has_cjk(neighbour)


def quote_error(quote: str, answer: str) -> str | None:
    """Why `quote` is not evidence from `answer` (for "QUOTE is ..."), or None. Evidence is verbatim, whitespace
    aside (a judge may add or drop a space between Chinese words), has at least `MIN_QUOTE_CHARS` letters, digits
    or CJK characters, and starts and ends on a word boundary of the answer."""
    key = point_key(quote)
    if sum(c.isalnum() for c in key) < MIN_QUOTE_CHARS:
        return f"too short to be evidence (a quote has at least {MIN_QUOTE_CHARS} letters, digits or CJK characters)"
    kept = [m.start() for m in re.finditer(r"\S", answer)]  # where each non-space character sits in the answer
    squeezed = "".join(answer[i] for i in kept)
    at = squeezed.find(key)
    if at < 0:
        return "not a verbatim excerpt of the answer"
    while at >= 0:
        start, end = kept[at], kept[at + len(key) - 1] + 1
        before = answer[start - 1] if start else " "
        after = answer[end] if end < len(answer) else " "
        if not (_cuts_a_word(key[0], before) or _cuts_a_word(key[-1], after)):
            return None
        at = squeezed.find(key, at + 1)
    return "not whole words of the answer: it cuts a word in two"


def check_points(
    entries: Sequence[tuple[str, str, str, str]], reference: str | Sequence[str], answer: str
) -> tuple[ReferencePoint, ...]:
    """The judge's `(point, verdict, quote, reason)` entries as ReferencePoints, one per point of `reference` as
    `split_reference` gives them; PointError names the first misfit."""
    points: list[ReferencePoint] = []
    given = split_reference(reference)
    # Spaces aside, as everywhere a point is compared: a judge may add or drop one between Chinese words.
    as_given = {point_key(p): p for p in given}
    seen: dict[str, int] = {}
    for i, (point, verdict, quote, reason) in enumerate(entries):
        where = f"reference_points.{i}"
        if verdict not in VERDICTS:
            raise PointError(f"{where}.verdict: {verdict!r} is not one of {', '.join(VERDICTS)}")
        if not flat(reason):
            raise PointError(f"{where}.reason: must not be empty")
        key = point_key(point)
        if key not in as_given:
            raise PointError(f"{where}.point: {point!r} is not one of the reference's points as given")
        if key in seen:
            raise PointError(f"{where}.point: {point!r} is given twice (also reference_points.{seen[key]})")
        seen[key] = i
        if verdict == "missing":
            if flat(quote):
                raise PointError(f"{where}.quote: a missing point quotes nothing (leave it empty)")
        elif not flat(quote):
            raise PointError(f"{where}.quote: a {verdict} point must quote the answer")
        elif (error := quote_error(quote, answer)) is not None:
            raise PointError(f"{where}.quote: {quote!r} is {error}")
        points.append(ReferencePoint(as_given[key], verdict, flat(quote), flat(reason)))
    missing = [p for p in given if point_key(p) not in seen]
    if missing:
        raise PointError(
            "reference_points: no verdict for " + ", ".join(repr(p) for p in missing) + " (one entry per point)"
        )
    return tuple(points)


def answer_correctness(points: Sequence[ReferencePoint]) -> float | None:
    """(covered + half of partial) / points; None with no points."""
    if not points:
        return None
    covered = sum(p.verdict == "covered" for p in points)
    partial = sum(p.verdict == "partial" for p in points)
    return (covered + 0.5 * partial) / len(points)


def contradictions(points: Sequence[ReferencePoint]) -> int:
    return sum(p.verdict == "contradicted" for p in points)


def _excerpt(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def contradiction_reason(point: ReferencePoint, claims: Iterable[tuple[str, bool, str | None]] = ()) -> str:
    """`contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货")`. With the judge's
    `(claim, supported, evidence id)`s, the passages the contradicting words came from are named too:
    `(answer: "...", from passage doc-refund-2021)`: a stale page retrieved is then found, not guessed."""
    sources = _sources(point.quote, claims)
    where = f", from passage{'s' if len(sources) > 1 else ''} {', '.join(sources)}" if sources else ""
    return f'contradicts the reference: "{_excerpt(point.point)}" (answer: "{_excerpt(point.quote)}"{where})'


def _sources(quote: str, claims: Iterable[tuple[str, bool, str | None]]) -> list[str]:
    """The evidence of the supported claims that hold the quote, or that the quote holds."""
    key = point_key(quote).casefold()
    found = []
    for claim, supported, evidence in claims:
        held = point_key(claim).casefold()
        if supported and evidence and held and (key in held or held in key):
            found.append(evidence)
    return list(dict.fromkeys(found))


def missing_reason(point: ReferencePoint) -> str:
    """`misses a reference point: "需提供订单号"`."""
    return f'misses a reference point: "{_excerpt(point.point)}"'
