"""Judge the same reply again (`judge.rejudge: N`): the judge's noise, apart from the service's.

`repeat` re-runs a failing case, a fresh endpoint call and a fresh judgement together, so it cannot tell a
service that answers differently from a judge that scores one answer differently. A rejudge asks the judge
again about the very reply it already judged (no endpoint call; fresh samples that bypass the judge cache), N
more times, for each case whose outcome hangs on the judge: it fails on a condition the judge decides (a
`judge.<dimension>`, faithfulness, the reference, a criterion), or it passes where main failed it on one. The
case takes the outcome most of its N+1 judgements give; when they do not all agree it is `judge_split`, and a
split never makes a regression on its own (`compare.outcome`). A tie keeps the failure. When main's run judged
this very reply, main's outcome is one more vote (`gate.main_vote`). A conversation is not rejudged (its turns'
judgements depend on one another's replies).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.judge_decided import by_the_judge, judge_metrics
from ragjudge.gate.judge_runs import JudgeRuns, flip_figures
from ragjudge.gate.main_vote import MainVote
from ragjudge.gate.pipeline import judge_safely
from ragjudge.gate.repeat import FreshJudge
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.judge.interface import Judge, Judgement
from ragjudge.report.failure_groups import split_condition
from ragjudge.rules import Rule
from ragjudge.transport import deadline

REJUDGE_ROUND = 1000
"""Fresh-sample rounds of a rejudge start here, apart from `repeat`'s rounds (1, 2, ...)."""


def judge_decided(result: CaseResult, rules: Sequence[Rule], on_main: Sequence[str] | None = None) -> bool:
    """Whether the case's outcome hangs on the judge (a one-question case with a reply): it fails on a condition
    only the judge decides, or it passes where main failed it on one (`on_main`: main's failed conditions)."""
    if result.turns or result.endpoint.trace is None or result.judgement is None:
        return False
    judged = judge_metrics(rules)
    if result.status == "fail":
        return any(by_the_judge(cond, judged) for cond in result.failed_conditions)
    return result.status == "pass" and any(by_the_judge(cond, judged) for cond in on_main or ())


def _summed(kept: Judgement, every: Sequence[Judgement]) -> Judgement:
    """The kept judgement, carrying what every judgement of the reply cost (the suite counts usage from it)."""
    return replace(
        kept,
        calls=sum(j.calls for j in every),
        tokens=sum(j.tokens for j in every),
        cost_usd=sum(j.cost_usd for j in every),
        cache_hits=sum(j.cache_hits for j in every),
    )


def majority_passes(statuses: Sequence[str]) -> bool:
    """Whether most judgements pass the case: a tie keeps the failure (the bench's simulation reads this too)."""
    return 2 * sum(s == "pass" for s in statuses) > len(statuses)


def decide(first: CaseResult, again: Sequence[CaseResult], main: MainVote | None = None) -> CaseResult:
    """The case's outcome from its first judgement's result and its rejudges', and main's vote when main judged
    this very reply (see the module docstring)."""
    every = [first, *again]
    statuses = [r.status for r in every] + ([main.status] if main else [])
    passes = [r for r in every if r.status == "pass"]
    failures = [r for r in every if r.status != "pass"]
    # Main's vote never stands for the case: with it, a majority that passes still has a passing result of its own.
    kept = passes[0] if majority_passes(statuses) else failures[0]
    conditions = [frozenset(split_condition(c).shared for c in r.failed_conditions) for r in every]
    if main is not None:
        conditions.append(frozenset(split_condition(c).shared for c in main.conditions))
    always = frozenset.intersection(*conditions)
    flipped = sorted({c for found in conditions for c in found} - always)
    runs = JudgeRuns(
        runs=len(statuses),
        agreeing=sum(s == kept.status for s in statuses),
        flipped=tuple(flipped),
        passed_on_rejudge=kept is not first and kept.status == "pass",
        main_vote=main is not None,
    )
    judgements = [r.judgement for r in every if r.judgement is not None]
    judgement = _summed(kept.judgement, judgements) if kept.judgement is not None else None
    return replace(kept, judgement=judgement, judge_runs=runs, runs=first.runs, flaky=first.flaky)


def rejudge(
    results: Sequence[CaseResult],
    rules: Sequence[Rule],
    judge: Judge | None,
    log: EventLog,
    times: int,
    workers: int,
    main_failures: Mapping[str, Sequence[str]] | None = None,
    main: Mapping[str, MainVote] | None = None,
) -> list[CaseResult]:
    """Every result, those whose outcome hangs on the judge judged `times` more times each; in the same order.
    `main_failures`: the baseline's failed conditions by case id, for a case that passes now where main failed;
    `main`: main's vote for each case whose very reply it judged."""
    if judge is None or times <= 0:
        return list(results)
    on_main = main_failures or {}
    votes = main or {}
    pending = [k for k, r in enumerate(results) if judge_decided(r, rules, on_main.get(r.case.id))]

    def again(index: int) -> CaseResult:
        first = results[index]
        rescored = []
        for k in range(1, times + 1):
            if deadline.stopped():
                break
            log.write("rejudge", first.case.id, {"judgement": k + 1, "of": times + 1})
            judgement = judge_safely(FreshJudge(judge, REJUDGE_ROUND + k), first.case, first.endpoint, log)
            if judgement is None:
                break
            rescore = score_case(first.case, first.endpoint, judgement, rules)
            if rescore.status == "error" and first.status != "error":
                # The same reply cannot error but by the judge's call failing: that is no judgement, and no vote.
                break
            rescored.append(rescore)
        # With no rejudge to stand beside it, main's vote decides nothing: the case stays as first judged.
        return decide(first, rescored, votes.get(first.case.id)) if rescored else first

    out = list(results)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="rejudge") as pool:
        for index, result in zip(pending, pool.map(again, pending), strict=True):
            out[index] = result
    return out


def flip_rate(results: Sequence[CaseResult]) -> dict[str, Any] | None:
    """`judge_flip_rate` and its interval over the rejudged results (`judge_runs.flip_figures`)."""
    return flip_figures([r.judge_runs.split for r in results if r.judge_runs is not None])
