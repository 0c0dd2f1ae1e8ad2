"""The pipeline's memory: a passage's text is held until the judge has it, not until the end of the run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragjudge.cases import Case
from ragjudge.endpoint.client import EndpointResult
from ragjudge.endpoint.trace import Trace
from ragjudge.eventlog import EventLog
from ragjudge.judge.interface import LogFn
from ragjudge.judge.offline import OfflineJudge
from ragjudge.runner import RunPlan, run_cases
from tests.helpers_rag import make_case, make_trace, ok_result


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
