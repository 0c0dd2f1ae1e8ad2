"""One rule for what a judge's noisy judgements of a reply decide (`judge.rejudge`), and the judge's flip rate.

Every judgement is one vote, named by what was asked: the rubric judgement of this reply with sample `k`
(0 the first, `REJUDGE_ROUND + k` the k-th rejudge), or one order of one pairwise round against main's answer.
A judgement made twice under the same name (read from a cache, a re-run, main's report) is still one vote.

The rule is a sequential vote count. The margin is the good votes less the bad ones: a rubric judgement is good
when it fails the case on no condition the judge decides; a pairwise order is good when it does not find this
run's answer worse than main's. Pairwise orders count only where they speak to a regression: the answer changed
and main passed the case. The case is decided `pass` once the margin reaches +`PASS_MARGIN`, `fail` once it
reaches -`FAIL_MARGIN`; in between, one more rubric judgement is asked, up to `judge.rejudge` of them, and a case
still in between at the cap is undecided (`judge_split`: never a regression). For a judge wrong with probability
p on each vote, independently, the margin is a random walk that steps towards the truth with probability 1 - p,
so a good case is failed with probability about (p / (1 - p)) ** (FAIL_MARGIN + m0) from a start at margin m0
(docs/judges.md works the figures out). The asymmetry is deliberate: a wrong `fail` blocks a merge, so it needs
five net votes; a wrong `pass` is caught by the next run's evidence, so one net vote ends the asking.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragjudge.stats.intervals import wilson_interval

PASS_MARGIN = 1
"""Good votes less bad ones at which the case is decided `pass`."""
FAIL_MARGIN = 5
"""Bad votes less good ones at which the case is decided `fail`."""
REJUDGE_ROUND = 1000
"""A rejudge's sample names start here, apart from `repeat`'s rounds (1, 2, ...): the k-th is `REJUDGE_ROUND + k`."""
CONSISTENCY_SAMPLE = REJUDGE_ROUND + 1
"""The sample a consistency-sampled case is asked again with: its first rejudge, a vote like any."""
Source = Literal["rubric", "pairwise"]


@dataclass(frozen=True)
class Vote:
    """One judgement of the reply, counted once."""

    source: Source
    sample: int
    """The rubric sample's name, or for a pairwise order `2 * round + (1 if this run was shown first)`."""
    good: bool
    """Rubric: it fails the case on no condition the judge decides. Pairwise: it does not find this run's answer
    worse than main's."""
    by: Literal["this run", "main"] = "this run"
    """`main` when main's run made this very judgement (the same reply, judge and case rules): no call here."""
    conditions: tuple[str, ...] = ()
    """A bad rubric vote's conditions that only the judge decides."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "sample": self.sample, "good": self.good, "by": self.by}
        if self.conditions:
            out["conditions"] = list(self.conditions)
        return out


def margin(votes: Iterable[Vote]) -> int:
    return sum(1 if v.good else -1 for v in votes)


def decision(votes: Iterable[Vote]) -> Literal["pass", "fail"] | None:
    """`pass` or `fail` once the votes decide the case, else None (ask again, or undecided at the cap)."""
    m = margin(votes)
    if m >= PASS_MARGIN:
        return "pass"
    if m <= -FAIL_MARGIN:
        return "fail"
    return None


def next_sample(taken: Iterable[int], cap: int) -> int | None:
    """The next rejudge sample not judged yet (main's included), within `judge.rejudge`'s cap; None at the cap."""
    have = set(taken)
    for k in range(1, cap + 1):
        if REJUDGE_ROUND + k not in have:
            return REJUDGE_ROUND + k
    return None


def described(votes: Sequence[Vote]) -> str:
    """Which evidence decided: `rubric 1 pass, 5 fail (1 main's); pairwise worse in 4 of 4 orders`."""
    rubric = [v for v in votes if v.source == "rubric"]
    pairs = [v for v in votes if v.source == "pairwise"]
    mains = sum(v.by == "main" for v in rubric)
    words = f"rubric {sum(v.good for v in rubric)} pass, {sum(not v.good for v in rubric)} fail"
    if mains:
        words += f" ({mains} main's)"
    if pairs:
        words += f"; pairwise worse in {sum(not v.good for v in pairs)} of {len(pairs)} orders"
    return words


def sampled_for_consistency(ids: Sequence[str], size: int, seed: int) -> frozenset[str]:
    """`size` of the case ids, picked by a hash of each id and the seed: random with respect to how the cases were
    judged (the flip rate needs cases not picked for failing), and the same ones on every re-run."""
    if size <= 0:
        return frozenset()
    ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}\x00{i}".encode()).hexdigest())
    return frozenset(ranked[:size])


def flip_estimate(disagreements: int, pairs: int) -> dict[str, Any] | None:
    """The judge's flip rate from `pairs` random cases judged twice, `disagreements` of them differently.

    Two judgements, each wrong with probability p, disagree with probability d = 2p(1 - p); so p = (1 - sqrt(1 - 2d))
    / 2, the share of the judge's verdicts that go against what it says most of the time. Its interval is the
    Wilson interval of d carried through the same curve (monotone for d <= 1/2; beyond, p is 1/2).
    """
    if pairs <= 0:
        return None

    def p_of(d: float) -> float:
        return (1 - math.sqrt(max(0.0, 1 - 2 * min(d, 0.5)))) / 2

    ci = wilson_interval(disagreements, pairs, 0.95)
    interval = [round(p_of(ci.lo), 4), round(p_of(ci.hi), 4)] if math.isfinite(ci.hi) else None
    return {
        "judge_flip_rate": round(p_of(disagreements / pairs), 4),
        "judge_flip_rate_interval": interval,
        "judge_flip_sample": pairs,
    }
