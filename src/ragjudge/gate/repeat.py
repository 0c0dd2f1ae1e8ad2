"""Repeat only what fails (`repeat: {max, pass_at}`): tell a flaky case from a broken one.

A case that passes on its first run is done. A case that fails (or errors) is run again, a
fresh endpoint call and a fresh judge sample, until it has `pass_at` passing runs or can no
longer reach them (fail fast). It ends `pass` with `flaky` set when it got there, else with its
first run's result; either way `runs` keeps every run. Each round re-runs the undecided cases
together, through the same pipeline and pools as the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.pipeline import ReplySource, RunPlan, run_cases
from ragjudge.gate.scoring import CaseResult
from ragjudge.judge.asking import fresh_samples
from ragjudge.judge.interface import Judge, Judgement, LogFn
from ragjudge.transport import deadline


class FreshJudge:
    """The run's judge, asked for fresh samples: re-run `rerun` bypasses the judge cache."""

    def __init__(self, inner: Judge, rerun: int) -> None:
        self.inner = inner
        self.rerun = rerun
        self.name = inner.name
        self.lexical = inner.lexical

    def warm_up(self) -> None:
        self.inner.warm_up()

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Judgement:
        with fresh_samples(self.rerun):
            return self.inner.judge(case, trace, log)


def undecided(runs: Sequence[CaseResult], max_runs: int, pass_at: int) -> bool:
    """Whether another run could still change the case's outcome."""
    if runs[0].status == "pass":
        return False  # a first-run pass costs nothing extra, whatever pass_at says
    passes = sum(r.status == "pass" for r in runs)
    left = max_runs - len(runs)
    return passes < pass_at and passes + left >= pass_at


def final_result(runs: Sequence[CaseResult], pass_at: int) -> CaseResult:
    """One result for a case from its runs (see the module docstring)."""
    if len(runs) == 1:
        return runs[0]
    records = tuple(r.record() for r in runs)
    passes = [r for r in runs if r.status == "pass"]
    if len(passes) >= pass_at:
        return replace(passes[0], runs=records, flaky=True)
    return replace(runs[0], runs=records)


def run_repeated(
    plan: RunPlan,
    source: ReplySource,
    judge: Judge | None,
    log: EventLog,
    max_runs: int,
    pass_at: int,
) -> list[CaseResult]:
    """Every case run once, and what fails run again per `max_runs`/`pass_at`; in case order.

    A stopped run (`transport.deadline`) starts no further round; a case cut off in a round keeps
    the runs it finished.
    """
    first = run_cases(plan, source, judge, log)  # after a stop, only the finished cases
    runs = [[result] for result in first]
    for rerun in range(1, max_runs):
        pending = [done for done in runs if undecided(done, max_runs, pass_at)]
        if not pending or deadline.stopped():
            break
        for done in pending:
            log.write("repeat", done[0].case.id, {"run": len(done) + 1, "of": max_runs})
        again = run_cases(
            replace(plan, cases=[done[0].case for done in pending]),
            source,
            FreshJudge(judge, rerun) if judge is not None else None,
            log,
        )
        # Results keep the case objects they were asked for; one cut off by a stop is missing.
        by_case = {id(result.case): result for result in again}
        for done in pending:
            if id(done[0].case) in by_case:
                done.append(by_case[id(done[0].case)])
    return [final_result(done, pass_at) for done in runs]
