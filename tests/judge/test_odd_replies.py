"""A judge server whose 200 is not a chat completion: an unscored judgement with its reason (found by fuzzing)."""

from __future__ import annotations

import pytest

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.openai_judge import ChatCaller, OpenAIJudge
from tests.fakes.rag import make_case, make_trace
from tests.fakes.raw_server import RawServer


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "judge reply is not valid JSON"),
        (b"not json", "judge reply is not valid JSON"),
        (b'{"choices": "x"}', "judge reply is not a chat completion (choices[0].message or usage unreadable)"),
        (
            b'{"choices": [{"message": "x"}]}',
            "judge reply is not a chat completion (choices[0].message or usage unreadable)",
        ),
        (b'["choices"]', "judge reply is not a chat completion (a list, not an object)"),
        (b'{"choices": [{"message": {"content": 5}}]}', "judge reply content is not text (int)"),
        (b'{"choices": []}', "judge reply had no choices"),
        (b"[" * 5000, "judge reply is not valid JSON"),
    ],
    ids=[
        "empty",
        "not-json",
        "choices-a-string",
        "message-a-string",
        "a-list",
        "content-a-number",
        "no-choices",
        "nested-5000-deep",
    ],
)
def test_a_200_that_is_not_a_chat_completion_is_unscored(body: bytes, reason: str) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    reply = head + body
    trace = make_trace("Refunds take 5 days.", ids=["p1"], passages={"p1": "Refunds take 5 days."})
    with RawServer(lambda request: reply) as server:
        config = JudgeConfig(provider="openai", base_url=server.url + "/v1", api_key="sk-x", max_retries=0, cache=None)
        judgement = OpenAIJudge(config, caller=ChatCaller(config)).judge(make_case(), trace, lambda f: None)
    assert {(u.judgement, u.reason) for u in judgement.unscored} == {("rubric", reason), ("faithfulness", reason)}
