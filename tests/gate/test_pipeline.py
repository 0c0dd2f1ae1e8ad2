"""The pipeline's memory: a passage's text is held until the judge has it, not until the end of the run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from ragjudge.cases.case import Case
from ragjudge.endpoint.result import EndpointResult
from ragjudge.endpoint.trace import Trace
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.pipeline import RunPlan, run_cases
from ragjudge.judge.interface import LogFn
from ragjudge.judge.offline import OfflineJudge
from tests.fakes.rag import make_case, make_trace, ok_result


class Replies:
    def render(self, case: Case) -> tuple[str, str | None]:
        return "http://127.0.0.1/", None

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult:
        return ok_result(make_trace("Refunds take five days.", ["d1", "d2"], {"d1": "Refunds take five days."}))


class SeeingJudge(OfflineJudge):
    """The offline judge, noting the passage texts it was shown."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, ...]] = []

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Any:
        self.seen.append(tuple(p.text for p in trace.passages))
        return super().judge(case, trace, log)


@pytest.mark.parametrize("keep", [True, False])
def test_passage_text_is_dropped_after_judging_unless_kept(keep: bool) -> None:
    judge = SeeingJudge()
    cases = [make_case("c1"), make_case("c2")]
    plan = RunPlan(cases, [], 2, 2, keep_passage_text=keep)
    results = run_cases(plan, Replies(), judge, EventLog(None))
    assert judge.seen == [("Refunds take five days.", "")] * 2
    for result in results:
        trace = result.endpoint.trace
        assert trace is not None
        assert trace.retrieved_ids == ("d1", "d2")
        assert [p.text for p in trace.passages] == (["Refunds take five days.", ""] if keep else ["", ""])
        assert [p.title for p in trace.passages] == (["d1", "d2"] if keep else ["", ""])
        assert result.judgement is not None and result.judgement.faithfulness == 1.0


class WarmingJudge(OfflineJudge):
    def __init__(self, fails: bool) -> None:
        super().__init__()
        self.fails = fails
        self.warmed = threading.Event()

    def warm_up(self) -> None:
        self.warmed.set()
        if self.fails:
            raise RuntimeError("the client library is broken")


class AfterWarmUp(Replies):
    """An endpoint that answers only once the judge has warmed up (or after 5 s): the warm-up must not wait
    for the endpoint calls."""

    def __init__(self, judge: WarmingJudge) -> None:
        self.judge = judge
        self.saw_warm: list[bool] = []

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult:
        self.saw_warm.append(self.judge.warmed.wait(5))
        return super().call(case, on_attempt)


@pytest.mark.parametrize("fails", [False, True])
def test_the_judge_warms_up_while_the_endpoint_calls_are_in_flight(fails: bool) -> None:
    judge = WarmingJudge(fails)
    replies = AfterWarmUp(judge)
    later: list[str] = []
    plan = RunPlan([make_case("c1"), make_case("c2")], [], 2, 2, warm_up=(lambda: later.append("template"),))
    results = run_cases(plan, replies, judge, EventLog(None))
    assert replies.saw_warm == [True, True]
    # The run's own steps follow the judge's, even when the judge's failed: a warm-up is only a head start,
    # and the judgements are made as if it had not happened.
    assert later == ["template"]
    assert [(r.case.id, r.judgement is not None and r.judgement.faithfulness) for r in results] == [
        ("c1", 1.0),
        ("c2", 1.0),
    ]


class HeldJudge(OfflineJudge):
    """A judge that makes no judgement until it is let go."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Any:
        assert self.go.wait(10)
        return super().judge(case, trace, log)


class Counting(Replies):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult:
        with self.lock:
            self.calls += 1
        return super().call(case, on_attempt)


def test_the_endpoint_runs_ahead_of_the_judge_by_at_most_both_pools() -> None:
    # While the judge is held (warming up, or slower than the endpoint), replies beyond what both pools hold
    # would only wait in memory, and their handling takes the CPU the judge's warm-up needs.
    judge, replies = HeldJudge(), Counting()
    plan = RunPlan([make_case(f"c{i}") for i in range(40)], [], 3, 2)
    done: list[Any] = []
    runner = threading.Thread(target=lambda: done.append(run_cases(plan, replies, judge, EventLog(None))))
    runner.start()
    give_up = time.monotonic() + 5
    while replies.calls < 5 and time.monotonic() < give_up:
        time.sleep(0.01)
    time.sleep(0.3)  # room for any call beyond the bound to be made
    assert replies.calls == 5
    judge.go.set()
    runner.join(10)
    assert [r.case.id for r in done[0]] == [f"c{i}" for i in range(40)]
    assert replies.calls == 40
