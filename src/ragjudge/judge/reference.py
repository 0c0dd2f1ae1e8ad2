"""Is the answer right? The reference answer's points, each judged covered, partial, missing or contradicted.

A person wrote the reference (`expected`). As a list, its points are taken as written and the judge must give
exactly one verdict per point; as one text, the judge splits it into points, and every point it returns must
be a verbatim fragment of that text (whitespace aside), so a judge cannot invent a point nobody wrote. Every
quote must likewise be a verbatim excerpt of the answer: a verdict is auditable by reading the two texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

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


def is_fragment(fragment: str, text: str) -> bool:
    """Whether `fragment` is a verbatim part of `text`, whitespace aside."""
    # Chinese text has no spaces between words, and a judge may add or drop one there: compare without any.
    return point_key(fragment) in point_key(text)


def check_points(
    entries: Sequence[tuple[str, str, str, str]], reference: str | Sequence[str], answer: str
) -> tuple[ReferencePoint, ...]:
    """The judge's `(point, verdict, quote, reason)` entries as ReferencePoints; PointError names the first misfit."""
    points: list[ReferencePoint] = []
    given = [flat(p) for p in reference] if not isinstance(reference, str) else None
    seen: dict[str, int] = {}
    for i, (point, verdict, quote, reason) in enumerate(entries):
        where = f"reference_points.{i}"
        if verdict not in VERDICTS:
            raise PointError(f"{where}.verdict: {verdict!r} is not one of {', '.join(VERDICTS)}")
        if not flat(reason):
            raise PointError(f"{where}.reason: must not be empty")
        if given is not None:
            if flat(point) not in given:
                raise PointError(f"{where}.point: {point!r} is not one of the reference's points as given")
        elif not flat(point):
            raise PointError(f"{where}.point: must not be empty")
        elif not is_fragment(point, reference):  # type: ignore[arg-type]
            raise PointError(f"{where}.point: {point!r} is not a verbatim fragment of the reference answer")
        key = point_key(point)
        if key in seen:
            raise PointError(f"{where}.point: {point!r} is given twice (also reference_points.{seen[key]})")
        seen[key] = i
        if verdict == "missing":
            if flat(quote):
                raise PointError(f"{where}.quote: a missing point quotes nothing (leave it empty)")
        elif not flat(quote):
            raise PointError(f"{where}.quote: a {verdict} point must quote the answer")
        elif not is_fragment(quote, answer):
            raise PointError(f"{where}.quote: {quote!r} is not a verbatim excerpt of the answer")
        points.append(ReferencePoint(flat(point), verdict, flat(quote), flat(reason)))
    if given is not None:
        missing = [p for p in given if point_key(p) not in seen]
        if missing:
            raise PointError(
                "reference_points: no verdict for " + ", ".join(repr(p) for p in missing) + " (one entry per point)"
            )
    elif not points:
        raise PointError("reference_points: at least one point of the reference answer")
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


def contradiction_reason(point: ReferencePoint) -> str:
    """`contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货")`."""
    return f'contradicts the reference: "{_excerpt(point.point)}" (answer: "{_excerpt(point.quote)}")'


def missing_reason(point: ReferencePoint) -> str:
    """`misses a reference point: "需提供订单号"`."""
    return f'misses a reference point: "{_excerpt(point.point)}"'
