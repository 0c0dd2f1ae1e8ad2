"""The judge transport's bounds: a whole-call deadline, Retry-After over max_wait_s, the run-wide retry budget,
no redirects."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ragjudge.judge.chat import CallFailed, ChatCaller, Target
from ragjudge.judge.replies import response_format
from tests.fakes.openai_server import FakeOpenAI, Reply, default_error
from tests.fakes.rag import make_case, make_trace
from tests.fakes.raw_server import DripServer, http_reply
from tests.judge.openai_helpers import KEY, LogSink, Sleeps, judge_config, make_judge

MESSAGES = [{"role": "user", "content": "Judge this."}]
COMPLETION = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()


def _caller(base_url: str, sleep=None, **overrides) -> ChatCaller:
    return ChatCaller(judge_config(base_url, None, **overrides), sleep=sleep or Sleeps())


def _complete(caller: ChatCaller, base_url: str) -> None:
    caller.complete(Target("m", base_url), MESSAGES, response_format("rubric", ("grounding",)))


def test_a_judge_that_drips_its_status_line_is_cut_off_at_the_deadline() -> None:
    with DripServer(http_reply(COMPLETION), every_s=0.2) as server:
        caller = _caller(server.url + "/v1", timeout_s=1, max_retries=0)
        caller.client(server.url + "/v1")  # the SDK's import is not what the deadline bounds: done before the clock
        started = time.monotonic()
        with pytest.raises(CallFailed) as failed:
            _complete(caller, server.url + "/v1")
        elapsed = time.monotonic() - started
    assert failed.value.reason == "judge call failed: timeout after 1 s (1 attempts)"
    assert 0.9 < elapsed < 2.0


def test_a_judge_that_drips_its_body_is_cut_off_at_the_deadline() -> None:
    head, _, body = http_reply(COMPLETION).partition(b"\r\n\r\n")
    with DripServer(body, every_s=0.2, prefix=head + b"\r\n\r\n") as server:
        caller = _caller(server.url + "/v1", timeout_s=1, max_retries=1)
        caller.client(server.url + "/v1")  # the SDK's import is not what the deadline bounds: done before the clock
        started = time.monotonic()
        with pytest.raises(CallFailed) as failed:
            _complete(caller, server.url + "/v1")
        elapsed = time.monotonic() - started
    assert failed.value.reason == "judge call failed: timeout after 1 s (2 attempts)"
    assert server.requests == 2
    assert 1.9 < elapsed < 3.5


def test_retry_after_over_max_wait_ends_the_call_at_once() -> None:
    sleeps = Sleeps()
    with FakeOpenAI(Reply(status=429, headers={"Retry-After": "3600"}, error=default_error(429))) as fake:
        caller = _caller(fake.base_url, sleep=sleeps, max_retries=4)
        started = time.monotonic()
        with pytest.raises(CallFailed) as failed:
            _complete(caller, fake.base_url)
        assert time.monotonic() - started < 1.0
        assert fake.call_count == 1
    assert failed.value.reason == "judge rate-limited: the server asked to wait 3600 s, over judge.max_wait_s 60"
    assert not failed.value.fatal  # the next judgement may be luckier
    assert sleeps.delays == []


def test_a_5xx_asking_to_wait_too_long_names_its_status() -> None:
    with FakeOpenAI(Reply(status=503, headers={"Retry-After": "100"})) as fake:
        caller = _caller(fake.base_url, max_wait_s=30)
        with pytest.raises(CallFailed) as failed:
            _complete(caller, fake.base_url)
    assert failed.value.reason == (
        "judge call failed: HTTP 503: the server asked to wait 100 s, over judge.max_wait_s 30"
    )


def test_the_run_wide_retry_budget_stops_a_retry_storm(tmp_path: Path) -> None:
    sleeps = Sleeps()
    with FakeOpenAI(Reply(status=503, headers={"Retry-After": "20"})) as fake:
        judge = make_judge(fake, None, sleep=sleeps, max_retries=10, max_retry_time_s=50)
        first = judge.judge(make_case("c1", "q1?"), make_trace("An answer."), LogSink())
        calls_after_first = fake.call_count
        second = judge.judge(make_case("c2", "q2?"), make_trace("Another answer."), LogSink())
        assert fake.call_count == calls_after_first  # past the budget no call is made at all
    reason = "judge retries stopped: waiting 20 s more would pass judge.max_retry_time_s 50 s for the run"
    assert sleeps.delays == [20.0, 20.0]
    assert calls_after_first == 3
    assert {u.reason for u in first.unscored} == {reason}
    assert {u.reason for u in second.unscored} == {reason}


def test_the_judge_does_not_follow_a_redirect_to_another_host() -> None:
    with FakeOpenAI(Reply(content="{}")) as elsewhere:
        target = elsewhere.base_url
        with FakeOpenAI(Reply(status=307, headers={"Location": target + "/chat/completions"})) as fake:
            caller = _caller(fake.base_url)
            with pytest.raises(CallFailed) as failed:
                _complete(caller, fake.base_url)
        assert elsewhere.call_count == 0
    assert failed.value.reason == (
        "judge call failed: HTTP 307 redirect to 127.0.0.1 not followed "
        "(the judge never follows redirects: set judge.base_url to where the API really is)"
    )
    assert KEY not in failed.value.reason


def test_a_proxy_from_the_environment_is_used_and_watched(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK's own client honours HTTP(S)_PROXY; the watched client must too, and bound the proxied call.
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    base = "http://judge.invalid/v1"  # unresolvable: only the proxy can answer
    with FakeOpenAI(Reply(content="{}")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        caller = _caller(base)
        completion = caller.complete(Target("m", base), MESSAGES, response_format("rubric", ("grounding",)))
        assert completion.content == "{}"
        assert proxy.call_count == 1
    with DripServer(http_reply(COMPLETION), every_s=0.2) as dripping_proxy:
        monkeypatch.setenv("HTTP_PROXY", dripping_proxy.url)
        caller = _caller(base, timeout_s=1, max_retries=0)
        started = time.monotonic()
        with pytest.raises(CallFailed) as failed:
            _complete(caller, base)
    assert failed.value.reason == "judge call failed: timeout after 1 s (1 attempts)"
    assert time.monotonic() - started < 2.0
