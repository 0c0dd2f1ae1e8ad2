"""Adaptive concurrency: the judge pool backs off on 429 and recovers as calls succeed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ragjudge.judge.chat import ChatCaller, Target
from ragjudge.judge.limiter import AdaptiveLimit
from tests.fakes.openai_server import FakeOpenAI, Reply, default_error
from tests.judge.openai_helpers import Sleeps, judge_config


def test_each_429_takes_a_tenth_off_and_each_success_adds_one_back() -> None:
    limit = AdaptiveLimit(16)
    for _ in range(5):
        limit.throttled()
    assert limit.limit == 9  # 16 * 0.9**5 = 9.45
    assert limit.lowest == 9
    limit.succeeded()
    assert limit.limit == 10
    for _ in range(10):
        limit.succeeded()
    assert limit.limit == 16  # never above the configured concurrency
    assert limit.lowest == 9


def test_the_limit_never_falls_below_one_call() -> None:
    limit = AdaptiveLimit(4)
    for _ in range(100):
        limit.throttled()
    assert (limit.limit, limit.lowest) == (1, 1)


def test_a_call_waits_for_a_place_when_the_limit_is_full() -> None:
    limit = AdaptiveLimit(1)
    order: list[str] = []
    first_in = threading.Event()
    release = threading.Event()

    def first() -> None:
        with limit.slot():
            order.append("first in")
            first_in.set()
            release.wait(5)
            order.append("first out")

    def second() -> None:
        first_in.wait(5)
        with limit.slot():
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    first_in.wait(5)
    release.set()
    for t in threads:
        t.join(5)
    assert order == ["first in", "first out", "second in"]


def test_a_rate_limit_without_retry_after_shrinks_the_pool_then_it_recovers(tmp_path: Path) -> None:
    # Three 429s with no hint, then success: the limit came down, the calls went through, and the
    # successes brought it back to judge.concurrency. The backoff is this call's own: no pool-wide pause.
    state = {"n": 0}

    def responder(body: dict[str, Any], i: int) -> Reply:
        state["n"] += 1
        if state["n"] <= 3:
            return Reply(status=429, error=default_error(429))
        return Reply(content="ok")

    sleeps = Sleeps()
    with FakeOpenAI(responder) as fake:
        caller = ChatCaller(judge_config(fake.base_url, None, concurrency=8, max_retries=4), sleep=sleeps)
        target = Target("gpt-4o-mini", fake.base_url)
        schema = {"type": "json_object"}
        assert caller.complete(target, [{"role": "user", "content": "q"}], schema).content == "ok"
        assert caller.limit.lowest == 5  # 8 -> 7.2 -> 6.48 -> 5.83
        assert caller.limit.limit == 6  # one success: 5.83 + 1
        for _ in range(3):
            caller.complete(target, [{"role": "user", "content": "q"}], schema)
    assert caller.limit.limit == 8
    assert sleeps.delays == [0.5, 1.0, 2.0]
    assert caller.throttle._until == 0.0  # nothing paused the other calls
