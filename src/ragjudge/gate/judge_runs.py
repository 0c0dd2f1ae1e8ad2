"""How the judgements of one reply went, when it was judged more than once (`judge.rejudge`, the consistency
sample, main's judgements of the same reply)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.gate.votes import CONSISTENCY_SAMPLE, Vote, flip_estimate
from ragjudge.metrics.names import COST_USD


@dataclass(frozen=True)
class JudgeRuns:
    """How a case's judgements went."""

    runs: int
    """Rubric judgements of the one reply: the first, each rejudge, and main's of the same reply."""
    agreeing: int
    """Of those, how many gave the outcome the case took."""
    flipped: tuple[str, ...]
    """The conditions some judgements failed the case on and others did not (their shared text)."""
    passed_on_rejudge: bool
    """The first judgement failed the case and the votes passed it: a rejudge, not a repeat, passed it."""
    main_vote: bool = False
    """Some of the votes are main's judgements of this very reply (`gate.main_vote`), which cost no call."""
    votes: tuple[Vote, ...] = ()
    """Every vote, each judgement once (`gate.votes`)."""
    undecided: bool = False
    """The votes reached neither margin within `judge.rejudge`, or decided this very reply otherwise than main's
    run did: the judge's noise, never a regression on its own (`judge_split`)."""
    decided_by: str = ""
    """Which evidence decided, in words (`gate.votes.described`)."""
    consistency: bool = False
    """The case was one of the run's random consistency sample (`judge.consistency_sample`): its first two rubric
    judgements measure the judge's flip rate."""
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    """What this run's rejudges of the reply cost (the first judgement's are apart; both are in the case's judge
    figures)."""

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
            "votes": [v.as_dict() for v in self.votes],
            "undecided": self.undecided,
            "decided_by": self.decided_by,
            "consistency": self.consistency,
            "calls": self.calls,
            "tokens": self.tokens,
            COST_USD: round(self.cost_usd, 6),
        }


VoteRow = tuple[str, int, bool]
"""A vote as the report keeps it: (source, sample, good)."""


def flip_figures(runs: Iterable[tuple[bool, Sequence[VoteRow]]]) -> dict[str, Any] | None:
    """The judge's flip rate and the rejudged cases' figures, from each case's (consistency, votes); None when no
    case was judged twice. `run` reads its results, `merge` the shards' saved cases.

    `judge_flip_rate` comes from the random consistency sample only (`gate.votes.flip_estimate`): the cases asked
    again because their evidence disagreed are picked for disagreeing, and their split share (`rejudged_split_rate`)
    is reported apart, labelled as theirs.
    """
    pairs = disagree = selected = split = 0
    second = CONSISTENCY_SAMPLE
    for consistency, votes in runs:
        rubric = {sample: good for source, sample, good in votes if source == "rubric"}
        if consistency and 0 in rubric and second in rubric:
            pairs += 1
            disagree += rubric[0] != rubric[second]
        if any(s > second or (s == second and not consistency) for s in rubric):
            selected += 1
            split += len(set(rubric.values())) > 1
    if not pairs and not selected:
        return None
    out: dict[str, Any] = flip_estimate(disagree, pairs) or {}
    out["rejudged_cases"] = selected
    out["rejudged_split_rate"] = round(split / selected, 4) if selected else None
    return out


def trust_flips(flips: dict[str, Any] | None) -> dict[str, Any]:
    """The flip figures `judge_trust` carries (the footer's), from `flip_figures`."""
    if not flips or "judge_flip_rate" not in flips:
        return {}
    keys = ("judge_flip_rate", "judge_flip_rate_interval", "judge_flip_sample")
    return {k: flips.get(k) for k in keys}


def vote_rows(votes: Sequence[dict[str, Any]]) -> list[VoteRow]:
    """A saved report's votes (`JudgeRunsBlock.votes`) as rows."""
    return [(str(v.get("source")), int(v.get("sample", -1)), bool(v.get("good"))) for v in votes]
