"""Judge the same reply again until the evidence decides (`judge.rejudge`): the judge's noise, apart from the
service's.

`repeat` re-runs a failing case, a fresh endpoint call and a fresh judgement together, so it cannot tell a
service that answers differently from a judge that scores one answer differently. A rejudge asks the judge again
about the very reply it already judged (no endpoint call; a fresh sample, named, so a cache or main's report that
holds it answers for it), one judgement at a time, while the votes leave the case undecided, up to
`judge.rejudge` more judgements (`gate.votes` is the rule). The votes are every rubric judgement of the reply,
main's included when main judged this very reply (`gate.main_vote`), and, for an answer that changed since a main
that passed the case, the pairwise judge's orders (`gate.pairs`). A case the votes leave undecided at the cap, or
that they decide otherwise than main did on this very reply, is `judge_split`: never a regression on its own.

A random sample of cases (`judge.consistency_sample`, picked by a hash of their ids, not by how they were judged)
gets its first rejudge whatever its first judgement said: the judge's flip rate comes from those pairs alone. A
conversation is not rejudged (its turns' judgements depend on one another's replies).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.judge_decided import by_the_judge, judge_metrics
from ragjudge.gate.judge_runs import JudgeRuns, flip_figures
from ragjudge.gate.main_vote import MainVote
from ragjudge.gate.pipeline import judge_safely
from ragjudge.gate.repeat import FreshJudge
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.gate.votes import CONSISTENCY_SAMPLE, REJUDGE_ROUND, Vote, decision, described, next_sample
from ragjudge.judge.interface import Judge, Judgement
from ragjudge.report.failure_groups import split_condition
from ragjudge.rules import Rule
from ragjudge.transport import deadline

if TYPE_CHECKING:
    from ragjudge.judge.pairwise import PairVerdict


@dataclass(frozen=True)
class Evidence:
    """What the votes of this run can draw on besides its own judgements."""

    cap: int
    """`judge.rejudge`: at most this many rejudges a case (0: the first judgement decides)."""
    main: Mapping[str, MainVote]
    """Main's votes for each case whose very reply it judged."""
    main_status: Mapping[str, str]
    """Main's outcome by case id."""
    pairs: Mapping[str, PairVerdict]
    """The pairwise verdicts of the answers that changed since main."""
    sampled: frozenset[str]
    """The consistency sample's case ids."""


def eligible(result: CaseResult) -> bool:
    """A one-question gating case with a reply the judge judged, and an outcome."""
    return (
        not result.turns
        and result.case.gates
        and result.endpoint.trace is not None
        and result.judgement is not None
        and result.status in ("pass", "fail")
    )


def rubric_vote(result: CaseResult, sample: int, judged: Sequence[str]) -> Vote:
    conditions = tuple(c for c in result.failed_conditions if by_the_judge(c, judged))
    return Vote("rubric", sample, not conditions, "this run", conditions)


def pair_votes(pair: PairVerdict | None) -> tuple[Vote, ...]:
    """The pairwise orders as votes: good unless the order found this run's answer worse."""
    if pair is None:
        return ()
    return tuple(Vote("pairwise", k, order != "worse") for k, order in enumerate(pair.orders))


def _summed(kept: Judgement, every: Sequence[Judgement]) -> Judgement:
    """The kept judgement, carrying what every judgement of the reply cost (the suite counts usage from it)."""
    return replace(
        kept,
        calls=sum(j.calls for j in every),
        tokens=sum(j.tokens for j in every),
        cost_usd=sum(j.cost_usd for j in every),
        cache_hits=sum(j.cache_hits for j in every),
        escalation=(
            sum(j.escalation[0] for j in every),
            sum(j.escalation[1] for j in every),
            sum(j.escalation[2] for j in every),
        ),
    )


def _as_decided(first: CaseResult, good: bool, votes: Sequence[Vote], judged: Sequence[str]) -> CaseResult:
    """The first result made to say what the votes decided, when none of this run's own judgements did (main's
    votes decided): its conditions the judge does not decide, and the deciding side's judge conditions."""
    kept = [c for c in first.failed_conditions if not by_the_judge(c, judged)]
    if not good:
        kept += next((list(v.conditions) for v in votes if v.source == "rubric" and not v.good), [])
    return replace(first, status="fail" if kept else "pass", failed_conditions=tuple(kept))


def settle(
    first: CaseResult,
    evidence: Evidence,
    judged: Sequence[str],
    ask: Callable[[int], CaseResult | None],
    pair_counts: bool,
) -> CaseResult:
    """The case's outcome from its votes, asking `ask(sample)` (a rescored result, or None: no judgement) for
    more while they leave it undecided."""
    case_id = first.case.id
    main = evidence.main.get(case_id)
    votes: dict[int, Vote] = {v.sample: v for v in main.votes} if main else {}
    own: dict[int, CaseResult] = {0: first}
    votes.setdefault(0, rubric_vote(first, 0, judged))
    pairs = pair_votes(evidence.pairs.get(case_id)) if pair_counts else ()

    def ask_for(sample: int) -> bool:
        result = ask(sample)
        if result is None:
            return False
        own[sample] = result
        votes[sample] = rubric_vote(result, sample, judged)
        return True

    consistency = case_id in evidence.sampled
    if consistency and CONSISTENCY_SAMPLE not in votes:
        consistency = ask_for(CONSISTENCY_SAMPLE)
    while evidence.cap > 0 and decision([*votes.values(), *pairs]) is None:
        sample = next_sample(votes, evidence.cap)
        if sample is None or not ask_for(sample):
            break
    every = sorted(votes.values(), key=lambda v: v.sample)
    rejudged = [r.judgement for k, r in own.items() if k and r.judgement is not None]
    if len(every) == 1 and every[0].by == "this run" and not pairs:
        return first  # judged once, by this run: nothing to settle
    decided = decision([*every, *pairs])
    if evidence.cap <= 0:  # measured, not decided: the first judgement stands
        decided = "pass" if votes[0].good else "fail"
    good = decided == "pass"
    matching = [own[v.sample] for v in every if v.by == "this run" and v.good == good and v.sample in own]
    kept = matching[0] if matching else _as_decided(first, good, every, judged)
    conditions = [frozenset(split_condition(c).shared for c in v.conditions) for v in every]
    always = frozenset.intersection(*conditions)
    runs = JudgeRuns(
        runs=len(every),
        agreeing=sum(v.good == good for v in every),
        flipped=tuple(sorted({c for found in conditions for c in found} - always)),
        passed_on_rejudge=good and not votes[0].good,
        main_vote=main is not None,
        votes=(*every, *pairs),
        undecided=evidence.cap > 0 and (decided is None or (main is not None and main.status != kept.status)),
        decided_by=described([*every, *pairs]),
        consistency=consistency,
        # The escalation model's calls are the bill's own line (`judge.escalation`), whichever judgement made them.
        calls=sum(j.calls - j.escalation[0] for j in rejudged),
        tokens=sum(j.tokens - j.escalation[1] for j in rejudged),
        cost_usd=sum(j.cost_usd - j.escalation[2] for j in rejudged),
    )
    judgements = [r.judgement for r in own.values() if r.judgement is not None]
    judgement = _summed(kept.judgement, judgements) if kept.judgement is not None else None
    return replace(kept, judgement=judgement, judge_runs=runs, runs=first.runs, flaky=first.flaky)


def rejudge(
    results: Sequence[CaseResult],
    rules: Sequence[Rule],
    judge: Judge | None,
    log: EventLog,
    evidence: Evidence,
    workers: int,
) -> list[CaseResult]:
    """Every result, each eligible one settled by its votes (`settle`); in the same order."""
    if judge is None or (evidence.cap <= 0 and not evidence.sampled):
        return list(results)
    judged = judge_metrics(rules)
    pending = [k for k, r in enumerate(results) if eligible(r)]

    def again(index: int) -> CaseResult:
        first = results[index]

        def ask(sample: int) -> CaseResult | None:
            if deadline.stopped():
                return None
            # Numbered among the reply's rubric judgements (the first is 1), at most 1 + judge.rejudge of them.
            number = sample - REJUDGE_ROUND + 1
            log.write("rejudge", first.case.id, {"judgement": number, "of": 1 + evidence.cap, "sample": sample})
            judgement = judge_safely(FreshJudge(judge, sample), first.case, first.endpoint, log)
            if judgement is None:
                return None
            rescore = score_case(first.case, first.endpoint, judgement, rules)
            # The same reply cannot error but by the judge's call failing: that is no judgement, and no vote.
            return None if rescore.status == "error" else rescore

        # Pairwise orders speak to a regression only: an answer that changed since a main that passed the case.
        pair_counts = evidence.main_status.get(first.case.id) == "pass"
        return settle(first, evidence, judged, ask, pair_counts)

    out = list(results)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="rejudge") as pool:
        for index, result in zip(pending, pool.map(again, pending), strict=True):
            out[index] = result
    return out


def flip_rate(results: Sequence[CaseResult]) -> dict[str, Any] | None:
    """The judge's flip rate and the rejudged cases' figures over this run's results (`judge_runs.flip_figures`)."""
    return flip_figures(
        (r.judge_runs.consistency, [(v.source, v.sample, v.good) for v in r.judge_runs.votes])
        for r in results
        if r.judge_runs is not None
    )
