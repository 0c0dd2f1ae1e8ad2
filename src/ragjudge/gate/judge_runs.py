"""How the judgements of one reply went, when it was judged more than once (`judge.rejudge`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.stats.intervals import wilson_interval


@dataclass(frozen=True)
class JudgeRuns:
    """How a rejudged case's judgements went."""

    runs: int
    """Judgements of the one reply: the first and the rejudges."""
    agreeing: int
    """Of those, how many gave the outcome the case took."""
    flipped: tuple[str, ...]
    """The conditions some judgements failed the case on and others did not (their shared text)."""
    passed_on_rejudge: bool
    """The first judgement failed the case and most judgements passed it: a rejudge, not a repeat, passed it."""
    main_vote: bool = False
    """One of the `runs` is main's judgement of this very reply (`gate.main_vote`), which cost no call."""

    @property
    def split(self) -> bool:
        return self.agreeing < self.runs

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "agreeing": self.agreeing,
            "flipped": list(self.flipped),
            "passed_on_rejudge": self.passed_on_rejudge,
            "main_vote": self.main_vote,
        }


def flip_figures(splits: Sequence[bool]) -> dict[str, Any] | None:
    """`judge_flip_rate` (rejudged cases whose judgements did not all agree, over the rejudged cases; one bool per
    rejudged case) and its 95% Wilson interval; None when no case was rejudged. `run` reads its results, `merge`
    the shards' saved cases."""
    if not splits:
        return None
    flips = sum(splits)
    ci = wilson_interval(flips, len(splits), 0.95)
    return {
        "judge_flip_rate": flips / len(splits),
        "judge_flip_rate_interval": [round(ci.lo, 4), round(ci.hi, 4)] if math.isfinite(ci.hi) else None,
        "rejudged_cases": len(splits),
    }
