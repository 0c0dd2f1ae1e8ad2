"""The pipeline: call the endpoint for every case, judge each reply as soon as it arrives, score.

Endpoint calls and judge calls run in two bounded pools, so judging overlaps
with the remaining endpoint calls; the endpoint runs ahead of the judge by no
more than the two pools hold.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from ragjudge.cases.case import Case
from ragjudge.cases.conversations import rehearsal
from ragjudge.endpoint.dialogue import ask_turns
from ragjudge.endpoint.result import EndpointResult
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.scoring import CaseResult, score_case, score_conversation
from ragjudge.judge.interface import JUDGE_BUG, Judge, Judgement, Unscored
from ragjudge.metrics.names import FAITHFULNESS, LATENCY_MS
from ragjudge.rules import Rule
from ragjudge.transport import deadline

_T = TypeVar("_T")
STOP_GRACE_S = 1.0
"""After a stop, how long a call in flight may take to notice it before it is abandoned."""


@dataclass(frozen=True)
class RunPlan:
    cases: Sequence[Case]
    case_rules: Sequence[Rule]
    endpoint_concurrency: int
    judge_concurrency: int
    keep_passage_text: bool = True
    """False: a passage's text and title are dropped once the judge has them (ids stay), so a large run does
    not hold every reply's passages until the end. Only the bias check reads them after the run."""
    warm_up: Sequence[Callable[[], object]] = ()
    """Work the run needs later (the judge's client, the comment's template), done on a thread of its own
    while the first endpoint calls wait for their replies, in this order."""


def judge_safely(judge: Judge, case: Case, result: EndpointResult, log: EventLog) -> Judgement | None:
    """The judgement; None when the run was stopped before it was made (an unfinished case is not scored).

    A judgement finished just as the stop came is kept; one with a call cut off by the stop is not.
    """
    assert result.trace is not None
    if deadline.stopped():
        return None
    try:
        judgement = judge.judge(case, result.trace, lambda fields: log.write("judge", case.id, fields))
        cut_off = any(u.reason.endswith(deadline.INTERRUPTED) for u in judgement.unscored)
        return None if cut_off else judgement
    except Exception as exc:  # a judge bug: the case's error and the run's (exit 3), never a crash or a pass
        reason = f"{JUDGE_BUG}: {type(exc).__name__}: {exc}"
        log.write("judge", case.id, {"error": reason})
        if os.environ.get("RAGJUDGE_DEBUG"):
            traceback.print_exc()
        unscored = (Unscored(FAITHFULNESS, reason), Unscored("rubric", reason))
        return Judgement(judge=judge.name, unscored=unscored, internal_error=reason)


def _without_passage_text(result: EndpointResult) -> EndpointResult:
    trace = result.trace
    if trace is None or not any(p.text or p.title for p in trace.passages):
        return result
    passages = tuple(replace(p, title="", text="") for p in trace.passages)
    return replace(result, trace=replace(trace, passages=passages, passage_text_dropped=True))


class ReplySource(Protocol):
    """The endpoint client, or a recording standing in for it."""

    def render(self, case: Case) -> tuple[str, str | None]: ...

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult: ...


def _warm_up(judge: Judge | None, ready: threading.Event, steps: Sequence[Callable[[], object]]) -> None:
    """The judge's warm-up, then `ready`, then the run's own steps."""
    try:
        if judge is not None:
            _quietly(judge.warm_up)
    finally:
        ready.set()
    for step in steps:
        _quietly(step)


def _quietly(step: Callable[[], object]) -> None:
    try:
        step()
    except Exception:  # only a head start: the step's real use meets the same fault and reports it
        return


def _when_ready(ready: threading.Event, work: Callable[[], _T]) -> _T | None:
    """`work()` once the judge has warmed up; None if the run is stopped first.

    Judgements wait rather than build their prompts meanwhile: the warm-up (an SDK import) is the first
    judge call's critical path, and every thread that runs beside it slows it down.
    """
    while not ready.wait(0.1):
        if deadline.stopped():
            return None
    return work()


def _outcome(future: Future[_T]) -> _T | None:
    """The future's value; None if the run is stopped and the call does not end within the grace period."""
    stopped_at: float | None = None
    while True:
        try:
            return future.result(timeout=0.1)
        except FutureTimeout:
            if not deadline.stopped():
                continue
            stopped_at = stopped_at or time.monotonic()
            if time.monotonic() - stopped_at > STOP_GRACE_S:
                return None


def run_cases(plan: RunPlan, client: ReplySource, judge: Judge | None, log: EventLog) -> list[CaseResult]:
    """Evaluate every case; the result order is the case order.

    When the run is stopped (`transport.deadline.stop`), only the cases finished
    before it are returned: no call starts after it, and calls in flight are cut off.
    """
    # Render every request first: a template error is bad input, found before any call.
    for case in plan.cases:
        for asked in rehearsal(case):
            client.render(asked)
    judged: dict[str, Future[Judgement | None]] = {}
    # How far the endpoint may run ahead of the judge: replies beyond this would only wait in memory, and
    # while the judge warms up the CPU their handling takes is the warm-up's (an SDK import under the GIL).
    lead = threading.BoundedSemaphore(plan.endpoint_concurrency + plan.judge_concurrency)
    # Started before the first endpoint call: the judge's client library takes longer to import than a
    # reply takes to come, and the first judgement would wait for it.
    ready = threading.Event()
    warming = threading.Thread(target=_warm_up, args=(judge, ready, plan.warm_up), name="warm-up")
    warming.start()
    judges = ThreadPoolExecutor(plan.judge_concurrency, thread_name_prefix="judge")
    endpoints = ThreadPoolExecutor(plan.endpoint_concurrency, thread_name_prefix="endpoint")
    try:

        def call(case: Case) -> EndpointResult | None:
            while not lead.acquire(timeout=0.1):
                if deadline.stopped():
                    return None
            judging: list[Future[Judgement | None]] = []
            try:
                return called(case, judging)
            finally:
                if judging:  # the place is held until the judgement is made
                    judging[0].add_done_callback(lambda _: lead.release())
                else:
                    lead.release()

        def called(case: Case, judging: list[Future[Judgement | None]]) -> EndpointResult | None:
            if deadline.stopped():
                return None

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
                    LATENCY_MS: round(result.trace.latency_ms, 1) if result.trace else None,
                    "retry_wait_ms": result.retry_wait_ms,
                    "error": result.error,
                },
            )
            if deadline.stopped():
                return None  # cut off, or finished as the stop came: either way not kept
            if result.trace is not None and judge is not None:
                judged[case.id] = judges.submit(
                    _when_ready, ready, functools.partial(judge_safely, judge, case, result, log)
                )
                judging.append(judged[case.id])
            return result if plan.keep_passage_text else _without_passage_text(result)

        def scored(case: Case, reply: EndpointResult) -> CaseResult | None:
            judgement = _outcome(judged[case.id]) if case.id in judged else None
            if case.id in judged and judgement is None:
                return None
            return score_case(case, reply, judgement, plan.case_rules)

        Replied = EndpointResult | list[tuple[Case, EndpointResult]]

        def evaluate(case: Case) -> Replied | None:
            return ask_turns(case, call) if case.turns else call(case)

        calls: list[tuple[Case, Future[Replied | None]]] = [(c, endpoints.submit(evaluate, c)) for c in plan.cases]
        results = []
        # Each case is scored once its own reply and judgement are in, while later calls are still in flight.
        for case, future in calls:
            reply = _outcome(future)
            if reply is None:
                continue
            if isinstance(reply, EndpointResult):
                result = scored(case, reply)
            else:
                turns = [scored(turn, turn_reply) for turn, turn_reply in reply]
                result = None if None in turns else score_conversation(case, [t for t in turns if t is not None])
            if result is not None:
                results.append(result)
    finally:
        # After a stop, calls still in flight are abandoned rather than waited for.
        stopping = deadline.stopped()
        endpoints.shutdown(wait=not stopping, cancel_futures=stopping)
        judges.shutdown(wait=not stopping, cancel_futures=stopping)
        warming.join(timeout=None if not stopping else STOP_GRACE_S)
    return results
