"""The offline judge's reference check: a deterministic approximation, words and numbers only.

- Points: the list as written, or the reference text split on 。；;！？ and newlines.
- Covered: more than half of a point's tokens (words, CJK bigrams) appear in the answer.
- Contradicted: the point states a number with a unit (天, 小时, 个工作日, 元, %, days, hours, business days,
  ...) and the answer states a different number with the same unit, and never the point's own.
- Missing: anything else. It never says partial, and it cannot read a paraphrase, a negation, or a number
  written in words (七天): a model judge can.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragjudge.judge.reference import ReferencePoint
from ragjudge.judge.text import tokens

_POINT_BREAK = re.compile(r"[。；;！？\n]+")
# A Latin stop ends a sentence only before a space: "$12.99" and "v2.1" stay whole.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|(?<=[。；！？])\s*|\n+")
# Longest first, so `个工作日` is not read as `日`; each spelling maps to its unit.
_UNITS = {
    "个工作日": "business-day",
    "工作日": "business-day",
    "business days": "business-day",
    "business day": "business-day",
    "working days": "business-day",
    "working day": "business-day",
    "小时": "hour",
    "hours": "hour",
    "hour": "hour",
    "分钟": "minute",
    "minutes": "minute",
    "minute": "minute",
    "天": "day",
    "days": "day",
    "day": "day",
    "个月": "month",
    "months": "month",
    "month": "month",
    "年": "year",
    "years": "year",
    "year": "year",
    "元": "yuan",
    "yuan": "yuan",
    "rmb": "yuan",
    "%": "percent",
    "percent": "percent",
}
_QUANTITY = re.compile(
    r"(\d+(?:\.\d+)?)\s*(" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True)) + r")(?![a-z])",
    re.IGNORECASE,
)


def split_points(reference: str | Sequence[str]) -> list[str]:
    """The reference's points: a list as written, a text split on 。；;！？ and newlines."""
    if not isinstance(reference, str):
        return [" ".join(p.split()) for p in reference if p.strip()]
    return [" ".join(p.split()) for p in _POINT_BREAK.split(reference) if p.strip()]


def quantities(text: str) -> list[tuple[float, str, str]]:
    """(number, unit, as written) for every number-with-unit in `text`."""
    return [(float(m.group(1)), _UNITS[m.group(2).lower()], m.group(0)) for m in _QUANTITY.finditer(text)]


def _sentences(answer: str) -> list[str]:
    # A sentence without its closing mark: the quote reads as the words that say it.
    return [
        s.strip().rstrip("。；;！？.!? ") for s in _SENTENCE_BREAK.split(answer) if s.strip().rstrip("。；;！？.!? ")
    ]


def judge_point(point: str, answer: str) -> ReferencePoint:
    sentences = _sentences(answer) or [answer.strip()]
    said = [(q, s) for s in sentences for q in quantities(s)]
    for number, unit, written in quantities(point):
        same_unit = [(q, s) for q, s in said if q[1] == unit]
        if same_unit and all(q[0] != number for q, _ in same_unit):
            (_, _, other_written), where = same_unit[0]
            return ReferencePoint(
                point, "contradicted", where, f"the answer says {other_written} where the reference says {written}"
            )
    wanted = tokens(point)
    if not wanted:
        return ReferencePoint(point, "missing", "", "the point has no words to look for")
    best, share = "", 0.0
    for sentence in sentences:
        overlap = len(wanted & tokens(sentence)) / len(wanted)
        if overlap > share:
            best, share = sentence, overlap
    whole = len(wanted & tokens(answer)) / len(wanted)
    if whole > 0.5:
        return ReferencePoint(
            point, "covered", best or answer.strip(), f"{whole:.0%} of its words appear in the answer"
        )
    return ReferencePoint(point, "missing", "", f"only {whole:.0%} of its words appear in the answer (needs over 50%)")


def judge_points(reference: str | Sequence[str], answer: str) -> tuple[ReferencePoint, ...]:
    return tuple(judge_point(p, answer) for p in split_points(reference))
