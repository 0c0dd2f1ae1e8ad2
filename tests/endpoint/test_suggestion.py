"""One guess at the path a user meant, for `probe` and for `run`'s "did you mean", on real frameworks' replies."""

from __future__ import annotations

from typing import Any

import pytest

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.reply import ReplyShapeError, parse_reply
from ragjudge.endpoint.suggestion import looks_like_id, suggest

QUESTION = "How long do refunds take?"
DOCS = [
    {"id": "9f" * 32, "content": "Refunds are issued within 14 days.", "meta": {"doc_id": "refund-policy"}, "score": 1},
]


def hayhooks(retriever_first: bool) -> dict[str, Any]:
    """hayhooks 2.1's `/run` reply for a pipeline run with include_outputs_from={"retriever"}."""
    answers = {
        "answers": [
            {
                "data": "Refunds take 14 days. [refund-policy]",
                "query": QUESTION,
                "documents": DOCS,
                "meta": {"model": "gpt-4o-mini", "finish_reason": "stop"},
            }
        ]
    }
    parts = [("retriever", {"documents": DOCS}), ("answer_builder", answers)]
    return {"result": dict(parts if retriever_first else parts[::-1])}


OPENAI = {
    "id": "chatcmpl-9xQ2bW1kZq7t3LmN0pRsTuVw",
    "object": "chat.completion",
    "created": 1767225600,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Refunds take 14 days.", "refusal": None},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    "system_fingerprint": "fp_0123456789",
}
LANGSERVE_RUN = {"run_id": "466d87a6-f3e8-4f89-b576-03b21bdc9b83", "feedback_tokens": []}


@pytest.mark.parametrize(
    ("reply", "answer", "passages"),
    [
        (hayhooks(True), "result.answer_builder.answers.0.data", "result.answer_builder.answers.0.documents"),
        (hayhooks(False), "result.answer_builder.answers.0.data", "result.answer_builder.answers.0.documents"),
        (OPENAI, "choices.0.message.content", None),
        ({"metadata": LANGSERVE_RUN, "output": "Refunds take 14 days."}, "output", None),
        (
            {
                "metadata": LANGSERVE_RUN,
                "output": {
                    "context": [{"id": None, "metadata": {"source": "d1"}, "page_content": "Long text " * 20}],
                    "answer": "Refunds take 14 days.",
                },
            },
            "output.answer",
            "output.context",
        ),
        (
            {
                "source_nodes": [{"node": {"id_": "5f0c8c4e-1b7a-4c55-9d1e-2f1f7a0b9c3d", "text": "x " * 50}}],
                "response": "Refunds take 14 days.",
                "metadata": {"5f0c8c4e-1b7a-4c55-9d1e-2f1f7a0b9c3d": {"doc_id": "d1"}},
            },
            "response",
            "source_nodes",
        ),
    ],
    ids=["hayhooks-retriever-first", "hayhooks-answers-first", "openai", "langserve-str", "langserve", "llamaindex"],
)
def test_the_suggestion_knows_the_common_shapes_whatever_the_key_order(
    reply: dict[str, Any], answer: str, passages: str | None
) -> None:
    assert suggest(reply, "", "answer", QUESTION) == answer
    assert suggest(dict(reversed(list(reply.items()))), "", "answer", QUESTION) == answer
    assert suggest(reply, "", "passages", QUESTION) == passages


@pytest.mark.parametrize(
    "reply",
    [
        {"run_id": "466d87a6-f3e8-4f89-b576-03b21bdc9b83", "documents": [{"content": "Refunds take 14 days."}]},
        {"hash": "9f" * 32, "sha": "a" * 40, "etag": "0123456789abcdef0123456789abcdef"},
        {"completion": "chatcmpl-9xQ2bW1kZq7t3LmN0pRsTuVw"},
        {"echo": QUESTION},
    ],
    ids=["a-passage-and-a-uuid", "hex-hashes", "a-completion-id", "the-question"],
)
def test_never_a_passage_an_id_or_the_question(reply: dict[str, Any]) -> None:
    assert suggest(reply, "", "answer", QUESTION) is None


@pytest.mark.parametrize(
    ("text", "is_id"),
    [
        ("466d87a6-f3e8-4f89-b576-03b21bdc9b83", True),
        ("9f" * 32, True),
        ("a" * 40, True),
        ("0123456789abcdef" * 2, True),
        ("chatcmpl-9xQ2bW1kZq7t3LmN0pRsTuVw", True),
        ("doc-refund-1", False),
        ("Refunds take 14 days.", False),
        ("deadbeef", False),
    ],
)
def test_what_counts_as_an_id(text: str, is_id: bool) -> None:
    assert looks_like_id(text) is is_id


@pytest.mark.parametrize("retriever_first", [True, False])
def test_runs_did_you_mean_is_the_generated_answer_in_either_order(retriever_first: bool) -> None:
    with pytest.raises(ReplyShapeError) as info:
        parse_reply(hayhooks(retriever_first), ResponseMapping(), 1.0)
    assert str(info.value) == (
        'reply has no "answer" field (keys: result); set endpoint.response.answer to the answer\'s dotted path '
        "(did you mean result.answer_builder.answers.0.data?)"
    )


def test_runs_did_you_mean_on_an_openai_completion_is_the_message_content() -> None:
    with pytest.raises(ReplyShapeError) as info:
        parse_reply(OPENAI, ResponseMapping(answer="choices.0.message"), 1.0)
    assert str(info.value) == (
        "endpoint.response.answer: choices.0.message is an object with keys role, content, refusal: did you mean "
        "choices.0.message.content?"
    )
