"""The pipeline: call the endpoint for every case, judge each reply as soon as it arrives, score.

Endpoint calls and judge calls run in two bounded pools, so judging overlaps
with the remaining endpoint calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ragjudge.cases import Case
from ragjudge.endpoint.client import EndpointResult
from ragjudge.eventlog import EventLog
from ragjudge.judge.interface import Judge, Judgement, Unscored
from ragjudge.rules import Rule
from ragjudge.scoring import CaseResult, score_case


@dataclass(frozen=True)
class RunPlan:
    cases: Sequence[Case]
    case_rules: Sequence[Rule]
    endpoint_concurrency: int
    judge_concurrency: int
    keep_passage_text: bool = True
    """False: a passage's text is dropped once the judge has it (ids and titles stay), so a large run does
    not hold every reply's passages until the end. Only the bias check reads them after the run."""


def _judge_safely(judge: Judge, case: Case, result: EndpointResult, log: EventLog) -> Judgement:
    assert result.trace is not None
    try:
        return judge.judge(case, result.trace, lambda fields: log.write("judge", case.id, fields))
    except Exception as exc:  # a judge bug must become an unscored judgement, not a crash or a pass
        reason = f"judge failed: {type(exc).__name__}: {exc}"
        log.write("judge", case.id, {"error": reason})
        return Judgement(judge=judge.name, unscored=(Unscored("faithfulness", reason), Unscored("rubric", reason)))


def _without_passage_text(result: EndpointResult) -> EndpointResult:
    trace = result.trace
    if trace is None or not any(p.text for p in trace.passages):
        return result
    passages = tuple(replace(p, text="") for p in trace.passages)
    return replace(result, trace=replace(trace, passages=passages))


class ReplySource(Protocol):
    """The endpoint client, or a recording standing in for it."""

    def render(self, case: Case) -> tuple[str, str | None]: ...

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult: ...


def run_cases(plan: RunPlan, client: ReplySource, judge: Judge | None, log: EventLog) -> list[CaseResult]:
    """Evaluate every case; the result order is the case order."""
    # Render every request first: a template error is bad input, found before any call.
    for case in plan.cases:
        client.render(case)
    judged: dict[str, Future[Judgement]] = {}
    with (
        ThreadPoolExecutor(plan.judge_concurrency, thread_name_prefix="judge") as judges,
        ThreadPoolExecutor(plan.endpoint_concurrency, thread_name_prefix="endpoint") as endpoints,
    ):

        def call(case: Case) -> EndpointResult:
            def on_attempt(fields: dict[str, Any]) -> None:
                log.write("endpoint", case.id, fields)

            result = client.call(case, on_attempt)
            log.write(
                "endpoint",
                case.id,
                {
                    "final": True,
                    "ok": result.trace is not None,
                    "attempts": result.attempts,
                    "latency_ms": round(result.trace.latency_ms, 1) if result.trace else None,
                    "retry_wait_ms": result.retry_wait_ms,
                    "error": result.error,
                },
            )
            if result.trace is not None and judge is not None:
                judged[case.id] = judges.submit(_judge_safely, judge, case, result, log)
            return result if plan.keep_passage_text else _without_passage_text(result)

        calls = [(case, endpoints.submit(call, case)) for case in plan.cases]
        replies = [(case, future.result()) for case, future in calls]
        results = []
        for case, result in replies:
            judgement = judged[case.id].result() if case.id in judged else None
            results.append(score_case(case, result, judgement, plan.case_rules))
    return results
