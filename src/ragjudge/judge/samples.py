"""The samples of one judgement (`judge.samples`) made one verdict.

Each question may be asked several times; the scores are the median across the samples that
succeeded, a decline needs a majority, and the claims and reference points are those of the
sample closest to the median. Samples that failed are left out, and the judgement's notes say so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from ragjudge.judge.asking import Tally
from ragjudge.judge.chat import CallFailed
from ragjudge.judge.interface import Claim
from ragjudge.judge.reference import ReferencePoint, answer_correctness
from ragjudge.judge.replies import ClaimVerdict


def points_median(
    samples: Sequence[tuple[ReferencePoint, ...] | None],
) -> tuple[ReferencePoint, ...] | None:
    """Across samples, the points of the sample whose answer correctness is closest to the median."""
    given = [s for s in samples if s is not None]
    if not given:
        return None
    values = [answer_correctness(s) or 0.0 for s in given]
    median = statistics.median(values)
    return min(zip(values, given, strict=True), key=lambda vs: abs(vs[0] - median))[1]


def majority(votes: Sequence[bool | None]) -> bool | None:
    """Across samples, a decline needs more than half the votes; None when it was not asked."""
    cast = [v for v in votes if v is not None]
    return sum(cast) * 2 > len(cast) if cast else None


def faithfulness_of(verdicts: Sequence[ClaimVerdict]) -> tuple[float | None, list[Claim]]:
    """One sample's claims and the share of them supported (None when the answer made no claim)."""
    claims = [Claim(v.claim, v.supported, v.evidence_id, v.reason) for v in verdicts]
    return (sum(c.supported for c in claims) / len(claims) if claims else None), claims


def rubric_median(
    samples: Sequence[tuple[dict[str, int], dict[str, str]]], dimensions: Sequence[str]
) -> tuple[dict[str, float], dict[str, str], dict[str, float]]:
    """Median score per dimension, the first sample's reasons, and the spread when there are several samples."""
    scores = {d: _tidy(statistics.median(s[0][d] for s in samples)) for d in dimensions}
    spread = {d: float(max(s[0][d] for s in samples) - min(s[0][d] for s in samples)) for d in dimensions}
    return scores, dict(samples[0][1]), spread if len(samples) > 1 else {}


def faithfulness_median(results: Sequence[tuple[float | None, list[Claim]]]) -> tuple[float | None, list[Claim]]:
    """The median faithfulness across samples, with the claims of the sample closest to it."""
    scored = [r for r in results if r[0] is not None]
    if not scored:
        return None, results[0][1]
    median = statistics.median(r[0] for r in scored if r[0] is not None)
    closest = min(scored, key=lambda r: abs((r[0] or 0.0) - median))
    return float(median), closest[1]


def note_dropped(tally: Tally, kind: str, asked: int, got: int, failure: CallFailed | None) -> None:
    """Samples that failed are left out of the median, and the report says so."""
    if got < asked and failure is not None:
        tally.notes.append(f"{kind}: {asked - got} of {asked} samples unscored ({failure.reason}); median of the rest")


def _tidy(value: float) -> float:
    """A whole median stays an integer score (4, not 4.0); an even-sample median may be 3.5."""
    return int(value) if float(value).is_integer() else float(value)
