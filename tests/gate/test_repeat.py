"""Repeat only what fails: fail fast, flaky passes, every run kept, and fresh judge samples past the cache."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.client import EndpointClient
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.pipeline import RunPlan
from ragjudge.gate.repeat import FreshJudge, final_result, run_repeated, undecided
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.gate.suite_figures import suite_metrics
from ragjudge.judge.offline import OfflineJudge
from ragjudge.rules import Rule
from ragjudge.transport import deadline
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer, Reply, Seen, answer, make_case, make_trace, ok_result
from tests.fakes.reports import make_report
from tests.judge.openai_helpers import PASSAGES, LogSink, by_kind, make_judge

RULES = [Rule("case", "latency_ms", "<=", 10_000)]


def _result(status: str, latency: float = 100.0, case_id: str = "c1") -> CaseResult:
    case = make_case(case_id, must_mention=["5 days"])
    text = "Refunds take 5 days." if status == "pass" else "Refunds take a while."
    result = score_case(case, ok_result(make_trace(text, latency_ms=latency)), None, RULES)
    assert result.status == status
    return result


@pytest.mark.parametrize(
    ("statuses", "max_runs", "pass_at", "more"),
    [
        (["pass"], 3, 2, False),  # a first-run pass is done, whatever pass_at says
        (["fail"], 1, 1, False),  # max 1: today's behaviour
        (["fail"], 3, 1, True),
        (["fail", "fail"], 3, 1, True),
        (["fail", "pass"], 3, 1, False),
        (["fail", "fail", "fail"], 3, 1, False),
        (["fail"], 3, 2, True),
        (["fail", "fail"], 3, 2, False),  # 0 passes, 1 run left: 2 passes are out of reach
        (["fail", "pass"], 3, 2, True),
        (["fail", "pass", "pass"], 3, 2, False),
        (["fail"], 3, 3, False),  # 3 of 3 can no longer be reached after one failure
        (["fail", "fail", "pass"], 5, 3, True),
        (["fail", "fail", "pass", "fail"], 5, 3, False),
    ],
)
def test_undecided_fails_fast(statuses: list[str], max_runs: int, pass_at: int, more: bool) -> None:
    assert undecided([_result(s) for s in statuses], max_runs, pass_at) is more


def test_final_result_of_a_flaky_pass_and_of_a_failure() -> None:
    runs = [_result("fail", 300.0), _result("pass", 120.0), _result("pass", 110.0)]
    flaky = final_result(runs, 2)
    assert (flaky.status, flaky.flaky) == ("pass", True)
    assert flaky.endpoint is runs[1].endpoint  # the first passing run stands for the case
    assert [(r.status, r.latency_ms) for r in flaky.runs] == [("fail", 300.0), ("pass", 120.0), ("pass", 110.0)]
    assert flaky.runs[0].failed_conditions == ('missing required detail: "5 days"',)

    failed = final_result([_result("fail", 300.0), _result("pass", 90.0), _result("fail", 80.0)], 2)
    assert (failed.status, failed.flaky) == ("fail", False)
    assert failed.endpoint.trace is not None and failed.endpoint.trace.latency_ms == 300.0  # the first run
    assert [r.status for r in failed.runs] == ["fail", "pass", "fail"]

    single = _result("fail")
    assert final_result([single], 1) is single and single.runs == ()


def test_suite_percentiles_use_first_runs_and_usage_counts_every_run() -> None:
    flaky = final_result([_result("fail", 900.0, "a"), _result("pass", 10.0, "a"), _result("pass", 10.0, "a")], 2)
    steady = _result("pass", 100.0, "b")
    metrics = suite_metrics([flaky, steady])
    assert (metrics["p50_latency_ms"], metrics["p95_latency_ms"]) == (100.0, 900.0)
    assert metrics["flaky_cases"] == 1 and metrics["passed"] == 2
    report = make_report([flaky, steady], RULES)
    case = report.cases[0]
    assert (case.k_of_n, case.flaky, case.first_latency_ms()) == ("2 of 3 passed", True, 900.0)
    assert report.cases[1].runs == [] and report.cases[1].k_of_n is None
    assert [run.status for run in case.runs] == ["fail", "pass", "pass"]


class Scripted(RagServer):
    """Answers each question from a script, one reply per request in turn (the last repeats)."""

    def __init__(self, scripts: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__({})
        self.scripts = scripts
        self.count: dict[str, int] = {}
        self._n = threading.Lock()

    def record_and_lookup(self, seen: Seen) -> Reply:
        assert seen.question is not None
        with self._n:
            n = self.count[seen.question] = self.count.get(seen.question, 0) + 1
        script = self.scripts[seen.question]
        return script[min(n, len(script)) - 1]


GOOD = answer("Refunds take 5 days.", ["p1"], {"p1": "Refunds take 5 days."})
BAD = answer("Refunds take a while.", ["p1"], {"p1": "Refunds take 5 days."})


def test_run_repeated_over_http(tmp_path: Path) -> None:
    cases = [make_case(f"q{i}", f"question {i}?", must_mention=["5 days"]) for i in range(5)]
    scripts = {
        "question 0?": [GOOD],  # passes at once: asked once
        "question 1?": [BAD, GOOD, GOOD],  # flaky: 2 of 3
        "question 2?": [BAD],  # broken: 0 of 2, then fail fast
        "question 3?": [BAD, GOOD, BAD],  # 1 of 3: still a failure
        "question 4?": [BAD, BAD, GOOD],  # out of reach after two failures
    }
    with Scripted(scripts) as service:
        client = EndpointClient(EndpointConfig(retries=0, timeout_s=5), service.url)
        plan = RunPlan(cases, RULES, 4, 4)
        log = EventLog(tmp_path / "log.jsonl")
        results = run_repeated(plan, client, OfflineJudge(), log, 3, 2)
        log.close()
    assert service.count == {"question 0?": 1, "question 1?": 3, "question 2?": 2, "question 3?": 3, "question 4?": 2}
    assert [(r.case.id, r.status, r.flaky, [x.status for x in r.runs]) for r in results] == [
        ("q0", "pass", False, []),
        ("q1", "pass", True, ["fail", "pass", "pass"]),
        ("q2", "fail", False, ["fail", "fail"]),
        ("q3", "fail", False, ["fail", "pass", "fail"]),
        ("q4", "fail", False, ["fail", "fail"]),
    ]
    # A repeat is judged as the first run is: the flaky pass stands on a judged rerun.
    assert all(r.judgement is not None and r.judgement.judge == "offline-lexical" for r in results)
    # q1..q4 once each for run 2, then q1 and q3 for run 3: each event names the run it starts.
    assert _repeats(tmp_path / "log.jsonl") == [
        ("q1", 2, 3),
        ("q2", 2, 3),
        ("q3", 2, 3),
        ("q4", 2, 3),
        ("q1", 3, 3),
        ("q3", 3, 3),
    ]


def _repeats(log: Path) -> list[tuple[str, int, int]]:
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [(e["case_id"], e["run"], e["of"]) for e in events if e["type"] == "repeat"]


def test_max_one_runs_each_case_once(tmp_path: Path) -> None:
    with Scripted({"question?": [BAD, GOOD]}) as service:
        client = EndpointClient(EndpointConfig(retries=0, timeout_s=5), service.url)
        plan = RunPlan([make_case("q", "question?", must_mention=["5 days"])], RULES, 1, 1)
        [result] = run_repeated(plan, client, OfflineJudge(), EventLog(None), 1, 1)
    assert service.count == {"question?": 1}
    assert (result.status, result.runs, result.flaky) == ("fail", (), False)


def test_a_repeat_is_a_fresh_judge_sample_past_the_cache(tmp_path: Path) -> None:
    with FakeOpenAI(by_kind()) as fake:
        _fresh_samples(fake, tmp_path / "cache", LogSink())


def _fresh_samples(fake: FakeOpenAI, cache: Path, sink: LogSink) -> None:
    judge = make_judge(fake, cache)
    case = make_case("c1", "How long do refunds take?")
    trace = make_trace("Refunds take 5 working days.", ids=list(PASSAGES), passages=PASSAGES)

    first = judge.judge(case, trace, sink)
    stored = sorted(cache.rglob("*.json"))
    assert first.calls == 2 and len(stored) == 2 and [b["seed"] for b in fake.bodies] == [7, 7]

    again = judge.judge(case, trace, sink)
    assert again.calls == 0 and again.cache_hits == 2  # an ordinary rerun is served by the cache

    fresh = FreshJudge(judge, 2).judge(case, trace, sink)
    assert fresh.calls == 2 and fresh.cache_hits == 0
    assert [b["seed"] for b in fake.bodies] == [7, 7, 207, 207]
    # The cache keeps the first run's replies, and each fresh sample's under its own name: the same sample asked
    # again (a re-run of the same PR) replays its very reply, one judgement, one vote.
    now = sorted(cache.rglob("*.json"))
    assert set(stored) < set(now) and len(now) == 4
    replay = FreshJudge(judge, 2).judge(case, trace, sink)
    assert replay.calls == 0 and replay.cache_hits == 2 and len(fake.bodies) == 4
    assert FreshJudge(judge, 2).name == judge.name and FreshJudge(judge, 2).lexical is False


class StopsOnRepeat(Scripted):
    """Stops the run (as SIGINT would) when a question is asked a second time."""

    def record_and_lookup(self, seen: Seen) -> Reply:
        reply = super().record_and_lookup(seen)
        if seen.question is not None and self.count[seen.question] == 2:
            deadline.stop("SIGINT")
        return reply


def test_a_stop_during_the_repeats_starts_no_further_round(tmp_path: Path) -> None:
    cases = [
        make_case("q0", "question 0?", must_mention=["5 days"]),
        make_case("q1", "question 1?", must_mention=["5 days"]),
    ]
    try:
        with StopsOnRepeat({"question 0?": [GOOD], "question 1?": [BAD, GOOD, GOOD]}) as service:
            client = EndpointClient(EndpointConfig(retries=0, timeout_s=5), service.url)
            plan = RunPlan(cases, RULES, 2, 2)
            log = EventLog(tmp_path / "log.jsonl")
            results = run_repeated(plan, client, OfflineJudge(), log, 3, 2)
            log.close()
        assert service.count == {"question 0?": 1, "question 1?": 2}  # no third run after the stop
        # q1 is still undecided after the cut-off round, but no round 3 is even announced.
        assert _repeats(tmp_path / "log.jsonl") == [("q1", 2, 3)]
    finally:
        deadline.reset()
    # The first round finished before the stop; the repeat it cut off is not kept.
    assert [(r.case.id, r.status, r.runs) for r in results] == [("q0", "pass", ()), ("q1", "fail", ())]
