"""The offline judge's reference check: a deterministic approximation that reads words, numbers and negation.

- Points: the list as written, or the reference text split on 。；;！？ and newlines.
- Words: tokens (words, CJK bigrams) with numbers in digits however written (七天 = 7 天, seven = 7, 两年 = 2 年,
  `numerals`) and negation cues taken out (`negation`), so "can't issue" and "cannot be issued" share theirs.
- Clauses: parts of a sentence between ，；;： and commas (not 、, which lists what one predicate is said of),
  and before but, however, although, though, whereas, if, unless, when, because. A clause of the point is
  paired with the answer's clauses that hold the most of its words (without numbers), when that is more than
  half of them.
- Contradicted, by a number: the point states a number with a unit (天, 小时, 个工作日, 周, 元, %, days, hours,
  business days, ...) and the answer states a different number with the same unit, and never the point's own;
  or a clause of the point and its paired clause state different numbers without a unit ($12.99 and $9.99,
  5 and three failed attempts), and the answer never states the point's without a unit (the 2 of `2 天` is
  not the 2 of `2 件`).
- Contradicted, by negation: a clause of the point and its paired clause differ in negation: one holds a cue
  (not, no, never, n't, without, 不, 没, 无, 非, 未, 别, ...) and the other does not. When the point's clause is
  the negated one, a cue elsewhere in the answer's sentence on one of the point's words is read as reaching
  it ("gift cards, downloads and sale items are not refundable"). With several best pairs, one that agrees
  is enough. A question in the answer states nothing, and is never paired.
- Covered: more than half of a point's words appear in the answer.
- Missing: anything else, and a point with no words to look for (`the`, `---`).

It never says partial, and it cannot read a paraphrase, an antonym (free / charged), sarcasm, a negation
whose scope is another clause ("free, but exchanges are not" says nothing against "exchanges are free"),
or units (1 周 and 7 天 are not compared): a model judge can.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ragjudge.judge import negation
from ragjudge.judge.numerals import bare_numbers, in_digits, quantities
from ragjudge.judge.reference import ReferencePoint
from ragjudge.judge.text import tokens

__all__ = ["judge_point", "judge_points", "quantities", "split_points"]

_POINT_BREAK = re.compile(r"[。；;！？\n]+")
# A Latin stop ends a sentence only before a space: "$12.99" and "v2.1" stay whole.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|(?<=[。；！？])\s*|\n+")
# A comma between digits is a thousands separator (1,000), a colon between them a time (10:30).
# A subordinate or contrasting clause is a clause of its own: the `not` of "free if it is not damaged" or
# "free, but exchanges are not" is not the main clause's.
# 、 only lists things one predicate is said of ("A、B、C 无法恢复"): it ends no clause.
_CLAUSE_BREAK = re.compile(
    r"[，；;：]|,(?!\d)|:(?!\d)|\s(?=(?:but|however|although|though|whereas|if|unless|when|because)\s)",
    re.IGNORECASE,
)


def split_points(reference: str | Sequence[str]) -> list[str]:
    """The reference's points: a list as written, a text split on 。；;！？ and newlines."""
    if not isinstance(reference, str):
        return [" ".join(p.split()) for p in reference if p.strip()]
    return [" ".join(p.split()) for p in _POINT_BREAK.split(reference) if p.strip()]


def _marked(text: str) -> list[tuple[str, bool]]:
    """Its sentences without their closing marks (a quote reads as the words that say it), each with whether
    it asks (ends in ? or ？)."""
    found = []
    for s in _SENTENCE_BREAK.split(text):
        body = s.strip().rstrip("。；;！？.!? ")
        if body:
            found.append((body, s.strip().endswith(("?", "？"))))
    return found


def _words(reading: negation.Reading) -> frozenset[str]:
    """The tokens of a text read for negation, its cues aside: `cannot be issued` and `can't issue` differ in
    negation, not in words; so do 没有订单号 and 无订单号."""
    return frozenset(t for part in reading.parts for t in tokens(part))


def _read_words(text: str) -> frozenset[str]:
    return _words(negation.read(in_digits(text)))


@dataclass(frozen=True)
class _Clause:
    """A part of a sentence between clause marks, read for its words, numbers and negation."""

    sentence: int
    """Which sentence of its text it is part of."""
    quote: str
    """That sentence as written: what a verdict quotes."""
    words: frozenset[str]
    """Its words (`_words`)."""
    terms: frozenset[str]
    """Its words without the numbers: what pairs a point's clause with the answer's."""
    text: str
    """Its text as written."""
    cue: str | None
    """Its first negation cue: a clause with one is negated, whatever the cue's scope."""
    asks: bool
    """Whether its sentence is a question, which states nothing to contradict ("Can it be returned? No.")."""

    @cached_property
    def numbers(self) -> tuple[tuple[float, str], ...]:
        """The numbers it states without a unit, each with its spelling: read only for a clause that is paired."""
        return tuple(bare_numbers(self.text))


def _clauses(sentences: list[tuple[str, bool]]) -> list[_Clause]:
    found = []
    for i, (sentence, asks) in enumerate(sentences):
        for part in _CLAUSE_BREAK.split(sentence):
            reading = negation.read(in_digits(part))
            words = _words(reading)
            terms = frozenset(t for t in words if not t.isdigit())
            cue = reading.cues[0] if reading.cues else None
            found.append(_Clause(i, sentence, words, terms, part, cue, asks))
    return found


@dataclass(frozen=True)
class _Answer:
    """The answer, read once for all the points."""

    text: str
    sentences: list[str]
    clauses: list[_Clause]
    quantities: list[tuple[tuple[float, str, str], str]]
    """Every quantity it states, with the sentence that states it."""
    numbers: frozenset[float]
    """Every number it states without a unit (`2 件`, not the 2 of `2 天`)."""
    words: frozenset[str]
    sentence_words: list[frozenset[str]]
    by_sentence: list[list[_Clause]]
    """The clauses of each sentence."""


def _read(answer: str) -> _Answer:
    marked = _marked(answer) or [(answer.strip(), False)]
    sentences = [body for body, _ in marked]
    said = [(q, s) for s in sentences for q in quantities(s)]
    numbers = frozenset(n for n, _ in bare_numbers(answer))
    clauses = _clauses(marked)
    by_sentence: list[list[_Clause]] = [[] for _ in sentences]
    for c in clauses:
        by_sentence[c.sentence].append(c)
    # A sentence's words are its clauses', the answer's its sentences': the marks between them are no words.
    sentence_words = [frozenset().union(*(c.words for c in mine)) for mine in by_sentence]
    words = frozenset().union(*sentence_words)
    return _Answer(answer, sentences, clauses, said, numbers, words, sentence_words, by_sentence)


def _clash(point: _Clause, other: _Clause, answer: _Answer) -> str | None:
    """Why `other`, the answer's clause matching `point`, contradicts it; None when it does not."""
    # A negation elsewhere in the answer's sentence may reach it ("gift cards, downloads and sale items are not
    # refundable"): only a sentence that negates none of the point's words contradicts a negated point.
    reached = any(c.cue and c.terms & point.terms for c in answer.by_sentence[other.sentence])
    if point.cue and not other.cue and not reached:
        return f'the reference says "{point.cue}" and the answer does not'
    if other.cue and not point.cue:
        return f'the answer says "{other.cue}" and the reference does not'
    own = {n for n, _ in point.numbers}
    unsaid = [written for n, written in point.numbers if n not in answer.numbers]
    others = [written for n, written in other.numbers if n not in own]
    if unsaid and others:
        return f"the answer says {others[0]} where the reference says {unsaid[0]}"
    return None


def _contradiction(point: str, answer: _Answer) -> ReferencePoint | None:
    """The first clause of `point` whose best-matching clauses of the answer (more than half of its words,
    the most of them) all contradict it."""
    for mine in _clauses(_marked(point)):
        if not mine.terms:
            continue
        shares = [(len(mine.terms & c.terms) / len(mine.terms), c) for c in answer.clauses if not c.asks]
        best = max((share for share, _ in shares), default=0.0)
        if best <= 0.5:
            continue
        matching = [c for share, c in shares if share == best]
        why = _clash(mine, matching[0], answer)
        if why and all(_clash(mine, c, answer) for c in matching[1:]):
            return ReferencePoint(point, "contradicted", matching[0].quote, why)
    return None


def _judge(point: str, answer: _Answer) -> ReferencePoint:
    for number, unit, written in quantities(point):
        same_unit = [(q, s) for q, s in answer.quantities if q[1] == unit]
        if same_unit and all(q[0] != number for q, _ in same_unit):
            # The answer's sentence about what the point is about ("card refunds take 7-10 business days"), not
            # its first figure in the same unit ("the refund is issued within 1 business day"); ties: the first.
            wanted = _read_words(point)
            (_, _, other_written), where = max(same_unit, key=lambda qs: len(wanted & _read_words(qs[1])))
            return ReferencePoint(
                point, "contradicted", where, f"the answer says {other_written} where the reference says {written}"
            )
    contradicted = _contradiction(point, answer)
    if contradicted:
        return contradicted
    wanted = _read_words(point)
    if not wanted:
        return ReferencePoint(point, "missing", "", "the point has no words to look for")
    # The quote: the first sentence holding the most of its words.
    best, most = "", 0
    for sentence, words in zip(answer.sentences, answer.sentence_words, strict=True):
        if len(wanted & words) > most:
            best, most = sentence, len(wanted & words)
    whole = len(wanted & answer.words) / len(wanted)
    if whole > 0.5:
        return ReferencePoint(
            point, "covered", best or answer.text.strip(), f"{whole:.0%} of its words appear in the answer"
        )
    return ReferencePoint(point, "missing", "", f"only {whole:.0%} of its words appear in the answer (needs over 50%)")


def judge_point(point: str, answer: str) -> ReferencePoint:
    """One point against the answer: covered, missing or contradicted (see the module's docstring)."""
    return _judge(point, _read(answer))


def judge_points(reference: str | Sequence[str], answer: str) -> tuple[ReferencePoint, ...]:
    """Every point of the reference against the answer, read once."""
    read = _read(answer)
    return tuple(_judge(p, read) for p in split_points(reference))
