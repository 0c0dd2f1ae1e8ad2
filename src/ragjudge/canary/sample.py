"""Running the canary sample against both arms, interleaved, and judging the answers.

Requests go out in the order treatment, control, treatment, control, ... (case by case) through
one pool of `endpoint.concurrency` workers, so load and drift during the run hit both arms alike.
Latency is ragjudge's own measurement of each successful call. Each answer is judged as soon as
it arrives (treatment and control alike; the control's faithfulness is reported for comparison).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from ragjudge.cases.case import Case
from ragjudge.cases.conversations import rehearsal
from ragjudge.endpoint.client import EndpointClient
from ragjudge.endpoint.dialogue import ask_turns
from ragjudge.endpoint.result import EndpointResult
from ragjudge.judge.interface import JUDGE_BUG, Judge, Judgement
from ragjudge.metrics.names import FAITHFULNESS

ARMS = ("treatment", "control")


@dataclass(frozen=True)
class Observation:
    """One case asked of one arm."""

    case_id: str
    latency_ms: float | None
    """Measured by ragjudge around the successful attempt; None when the call failed."""
    error: str | None
    """The endpoint error, as the gate words it; None on success."""
    faithfulness: float | None = None
    """The judge's supported/total; None when not judged, not applicable (a refusal) or unscored."""
    unscored: str | None = None
    """Why the judge could not score this answer."""
    ttft_ms: float | None = None
    """Time to the first token of a streamed reply; None for a JSON body or a failed call."""
    passages_unknown: bool = False
    """The reply exposed no passages (`Trace.passages_unknown`): its faithfulness cannot be scored."""
    judge_bug: str | None = None
    """`judge failed inside ragjudge: TYPE: MESSAGE` when the judge raised (a bug): no canary is promoted past it."""


@dataclass(frozen=True)
class ArmRun:
    """Everything measured on one arm, in case order."""

    name: str
    url: str
    observations: tuple[Observation, ...]

    @property
    def latencies(self) -> tuple[float, ...]:
        return tuple(o.latency_ms for o in self.observations if o.latency_ms is not None)

    @property
    def ttfts(self) -> tuple[float, ...]:
        return tuple(o.ttft_ms for o in self.observations if o.ttft_ms is not None)

    @property
    def faithfulness(self) -> tuple[float, ...]:
        return tuple(o.faithfulness for o in self.observations if o.faithfulness is not None)

    @property
    def passages_unknown(self) -> int:
        """Replies that exposed no passages."""
        return sum(o.passages_unknown for o in self.observations)

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(o.error for o in self.observations if o.error is not None)

    @property
    def unscored(self) -> tuple[str, ...]:
        return tuple(o.unscored for o in self.observations if o.unscored is not None)

    @property
    def judge_bugs(self) -> tuple[Observation, ...]:
        """The answers the judge failed on inside ragjudge (a bug, as the gate counts one: an error, not unscored)."""
        return tuple(o for o in self.observations if o.judge_bug is not None)


def _judge(judge: Judge, case: Case, result: EndpointResult) -> Judgement | str:
    """The judgement, or the bug that stopped it (`JUDGE_BUG`): never a crash, and, as in the gate, never a
    promote (`release` makes the run exit 3)."""
    assert result.trace is not None
    try:
        return judge.judge(case, result.trace, lambda fields: None)
    except Exception as exc:
        if os.environ.get("RAGJUDGE_DEBUG"):
            traceback.print_exc()
        return f"{JUDGE_BUG}: {type(exc).__name__}: {exc}"


def _observation(case: Case, result: EndpointResult, judged: Judgement | str | None) -> Observation:
    if result.trace is None:
        return Observation(case.id, None, result.error or "endpoint error: no reply")
    ttft, unknown = result.trace.ttft_ms, result.trace.passages_unknown
    if isinstance(judged, str):
        return Observation(
            case.id,
            result.trace.latency_ms,
            None,
            unscored=judged,
            ttft_ms=ttft,
            passages_unknown=unknown,
            judge_bug=judged,
        )
    if judged is None:
        return Observation(case.id, result.trace.latency_ms, None, ttft_ms=ttft, passages_unknown=unknown)
    return Observation(
        case.id,
        result.trace.latency_ms,
        None,
        faithfulness=judged.faithfulness,
        unscored=judged.unscored_reason(FAITHFULNESS),
        ttft_ms=ttft,
        passages_unknown=unknown,
        judge_bug=judged.internal_error,
    )


def run_sample(
    cases: Sequence[Case],
    clients: Mapping[str, EndpointClient],
    judge: Judge | None,
    endpoint_concurrency: int,
    judge_concurrency: int,
) -> dict[str, ArmRun]:
    """Ask every case of both arms (interleaved); judge every reply when `judge` is given."""
    for client in clients.values():
        for case in cases:  # a template error is bad input, found before any call
            for asked in rehearsal(case):
                client.render(asked)
    judged: dict[tuple[str, str], Future[Judgement | str]] = {}
    with (
        ThreadPoolExecutor(judge_concurrency, thread_name_prefix="canary-judge") as judges,
        ThreadPoolExecutor(endpoint_concurrency, thread_name_prefix="canary-call") as calls,
    ):

        def ask(arm: str, case: Case) -> EndpointResult:
            result = clients[arm].call(case)
            if result.trace is not None and judge is not None:
                judged[(arm, case.id)] = judges.submit(_judge, judge, case, result)
            return result

        def call(arm: str, case: Case) -> list[tuple[Case, EndpointResult]]:
            """One case's replies: a conversation's turns in order, each with this arm's own earlier answers
            (every turn is one observation; a turn with no reply ends the conversation)."""
            if not case.turns:
                return [(case, ask(arm, case))]
            asked = ask_turns(case, lambda turn: ask(arm, turn))
            assert asked is not None  # `ask` always gives a result: the canary has no stop mid-case
            return asked

        futures = [(arm, calls.submit(call, arm, case)) for case in cases for arm in ARMS]
        results = [(arm, asked, result) for arm, future in futures for asked, result in future.result()]
        observations: dict[str, list[Observation]] = {arm: [] for arm in ARMS}
        for arm, case, result in results:
            pending = judged.get((arm, case.id))
            observations[arm].append(_observation(case, result, pending.result() if pending else None))
    return {arm: ArmRun(arm, clients[arm].url, tuple(observations[arm])) for arm in ARMS}
