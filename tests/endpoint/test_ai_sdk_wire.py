"""What a real Vercel AI SDK route sends on the wire: the bytes ragjudge's client reads from a `useChat` backend.

tests/fakes/ai_sdk_server.py runs tests/fakes/ai_sdk_app/server.mjs (`ai` 7, `@ai-sdk/openai-compatible` 3) on
loopback with a FakeOpenAI as its model. `POST /api/chat` retrieves documents and streams a UI message stream:
`start`, one `source-document` per document, a `data-sources` part, then what `streamText` sends;
`POST /api/chat-text` is `streamText` alone. Each test pins the whole body, byte for byte, with the one random
value (the message id) replaced. Skipped where Node or the app's node_modules are missing (failed under CI).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import requests
from tests.fakes.ai_sdk_server import FAKE_KEY, REASONING, LlmMode, RunningAiSdk
from tests.fakes.hayhooks_server import DECLINE_EN, DECLINE_ZH

REFUNDS = "How long do refunds take?"
HEADERS = {
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "content-type": "text/event-stream",
    "transfer-encoding": "chunked",
    "x-accel-buffering": "no",
    "x-vercel-ai-ui-message-stream": "v1",
}
"""Every UI message stream response's headers but Date, whatever happens to the model."""
INSTRUCTIONS = "Answer the question from the documents only, citing the document id in brackets.\n"
REFUND_DOC = "Refunds are issued within 14 days of the return being received. The card is credited."
SHIPPING_DOC = "Standard shipping takes 3 to 5 business days. Express shipping takes 1 day."

# The frames of a refund question on /api/chat, up to the model's first part. Both documents share a term with it
# ("refunds", "take").
REFUND_SOURCES = [
    '{"type":"start","messageId":"MESSAGE-ID"}',
    '{"type":"source-document","sourceId":"refund-policy","title":"Refund policy","mediaType":"text/plain"}',
    '{"type":"source-document","sourceId":"shipping-times","title":"Shipping times","mediaType":"text/plain"}',
    '{"type":"data-sources","data":{"documents":['
    f'{{"id":"refund-policy","title":"Refund policy","text":"{REFUND_DOC}"}},'
    f'{{"id":"shipping-times","title":"Shipping times","text":"{SHIPPING_DOC}"}}]}}}}',
]
REFUND_ANSWER = [
    '{"type":"text-start","id":"txt-0"}',
    *(
        f'{{"type":"text-delta","id":"txt-0","delta":"{word}"}}'
        for word in ["Refunds ", "are ", "issued ", "within ", "14 ", "days ", "of ", "the ", "return ", "being "]
    ),
    '{"type":"text-delta","id":"txt-0","delta":"received. "}',
    '{"type":"text-delta","id":"txt-0","delta":"[refund-policy]"}',
    '{"type":"text-end","id":"txt-0"}',
]
FINISH = ['{"type":"finish-step"}', '{"type":"finish","finishReason":"stop"}']
MESSAGE_ID = re.compile(r'"messageId":"([0-9A-Za-z]{16})"')


def user(text: str, message_id: str = "u1") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def post(url: str, *messages: dict[str, Any]) -> requests.Response:
    """What `useChat`'s default transport sends for a new message."""
    body = {"id": "chat-1", "messages": list(messages), "trigger": "submit-message"}
    return requests.post(url, json=body, stream=True, timeout=30)


def read(response: requests.Response) -> str:
    """The body as received, the message id (random, 16 characters) as MESSAGE-ID."""
    assert response.status_code == 200
    assert {k.lower(): v for k, v in response.headers.items() if k.lower() != "date"} == HEADERS
    raw = b"".join(response.iter_content(None)).decode("utf-8")
    return MESSAGE_ID.sub('"messageId":"MESSAGE-ID"', raw)


def sse(*frames: str) -> str:
    """`frames` as the SDK frames them: `data: <json>` and a blank line each, then `data: [DONE]`."""
    return "".join(f"data: {frame}\n\n" for frame in [*frames, "[DONE]"])


def test_a_healthy_answer_streams_its_sources_then_the_model_steps(ai_sdk: RunningAiSdk) -> None:
    assert read(post(ai_sdk.chat_url, user(REFUNDS))) == sse(
        *REFUND_SOURCES, '{"type":"start-step"}', *REFUND_ANSWER, *FINISH
    )
    (request,) = ai_sdk.openai.requests
    assert request["headers"]["authorization"] == f"Bearer {FAKE_KEY}"
    assert request["headers"]["user-agent"].startswith("ai-sdk-openai-compatible/3.0.92 ai-sdk-provider-utils/5.0.81")
    system = f"{INSTRUCTIONS}Documents:\n[refund-policy] {REFUND_DOC}\n[shipping-times] {SHIPPING_DOC}\n"
    assert request["body"] == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": REFUNDS}],
        "stream": True,
    }


def test_a_chinese_question_gets_its_document_and_answer_unescaped(ai_sdk: RunningAiSdk) -> None:
    assert read(post(ai_sdk.chat_url, user("退款需要多久？"))) == sse(
        '{"type":"start","messageId":"MESSAGE-ID"}',
        '{"type":"source-document","sourceId":"退款政策","title":"退款政策","mediaType":"text/plain"}',
        '{"type":"data-sources","data":{"documents":[{"id":"退款政策","title":"退款政策",'
        '"text":"退款在收到退货后14天内处理。款项退回原支付卡。"}]}}',
        '{"type":"start-step"}',
        '{"type":"text-start","id":"txt-0"}',
        '{"type":"text-delta","id":"txt-0","delta":"退款在收到退货后14天内处理。 "}',
        '{"type":"text-delta","id":"txt-0","delta":"[退款政策]"}',
        '{"type":"text-end","id":"txt-0"}',
        *FINISH,
    )


OFF_TOPIC = [("Can penguins fly?", DECLINE_EN), ("火星的首都是哪里？", DECLINE_ZH)]


@pytest.mark.parametrize(("question", "decline"), OFF_TOPIC)
def test_with_no_document_the_sources_part_is_empty_and_the_model_declines(
    ai_sdk: RunningAiSdk, question: str, decline: str
) -> None:
    body = read(post(ai_sdk.chat_url, user(question)))
    frames = [json.loads(line[6:]) for line in body.split("\n\n") if line and line != "data: [DONE]"]
    assert [f["type"] for f in frames] == [
        "start",
        "data-sources",
        "start-step",
        "text-start",
        *["text-delta"] * (len(frames) - 7),
        "text-end",
        "finish-step",
        "finish",
    ]
    assert frames[1] == {"type": "data-sources", "data": {"documents": []}}
    assert "".join(f["delta"] for f in frames if f["type"] == "text-delta") == decline
    assert ai_sdk.openai.bodies[0]["messages"][0]["content"] == f"{INSTRUCTIONS}Documents: none\n"


def test_an_llm_at_500_is_an_http_200_whose_stream_ends_in_a_masked_error_and_no_finish(ai_sdk: RunningAiSdk) -> None:
    ai_sdk.use(LlmMode.FAILING)
    assert read(post(ai_sdk.chat_url, user(REFUNDS))) == sse(
        *REFUND_SOURCES, '{"type":"error","errorText":"An error occurred."}'
    )
    assert ai_sdk.openai.call_count == 1  # the route's maxRetries is 0
    assert "AI_APICallError" in ai_sdk.output()


def test_a_cut_llm_stream_keeps_the_partial_text_then_an_error_and_a_finish_reason_error(ai_sdk: RunningAiSdk) -> None:
    ai_sdk.use(LlmMode.CUT)
    assert read(post(ai_sdk.chat_url, user(REFUNDS))) == sse(
        *REFUND_SOURCES,
        '{"type":"start-step"}',
        *REFUND_ANSWER[:4],
        '{"type":"text-delta","id":"txt-0","delta":"w"}',
        '{"type":"text-end","id":"txt-0"}',
        '{"type":"error","errorText":"An error occurred."}',
        '{"type":"finish-step"}',
        '{"type":"finish","finishReason":"error"}',
    )
    # Node 20's fetch takes the unterminated chunked body for a complete one; the provider notices the missing
    # finish chunk.
    assert "Response stream ended without a finish reason." in ai_sdk.output()


def test_a_reasoning_model_streams_its_reasoning_before_the_text(ai_sdk: RunningAiSdk) -> None:
    ai_sdk.use(LlmMode.REASONING)
    thoughts = re.findall(r"\S+\s*", REASONING)
    assert thoughts[:3] == ["The ", "question ", "is "]
    assert read(post(ai_sdk.chat_url, user(REFUNDS))) == sse(
        *REFUND_SOURCES,
        '{"type":"start-step"}',
        '{"type":"reasoning-start","id":"reasoning-0"}',
        *(f'{{"type":"reasoning-delta","id":"reasoning-0","delta":"{thought}"}}' for thought in thoughts),
        '{"type":"reasoning-end","id":"reasoning-0"}',
        *REFUND_ANSWER,
        *FINISH,
    )


def test_a_second_turn_sends_the_first_answer_back_and_the_model_sees_both_questions(ai_sdk: RunningAiSdk) -> None:
    first = read(post(ai_sdk.chat_url, user(REFUNDS)))
    answer = "".join(json.loads(line[6:]).get("delta", "") for line in first.split("\n\n") if "text-delta" in line)
    assert answer == "Refunds are issued within 14 days of the return being received. [refund-policy]"
    # The assistant message as useChat keeps it, from the parts the stream built (one source of two here).
    assistant = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {
                "type": "source-document",
                "sourceId": "refund-policy",
                "mediaType": "text/plain",
                "title": "Refund policy",
            },
            {"type": "data-sources", "data": {"documents": [{"id": "refund-policy", "text": REFUND_DOC}]}},
            {"type": "step-start"},
            {"type": "text", "text": answer, "state": "done"},
        ],
    }
    second = read(post(ai_sdk.chat_url, user(REFUNDS), assistant, user("And express shipping?", "u2")))
    assert '"sourceId":"shipping-times"' in second and '"delta":"[shipping-times]"' in second
    assert '"sourceId":"refund-policy"' not in second
    assert ai_sdk.openai.bodies[1]["messages"] == [
        {"role": "system", "content": f"{INSTRUCTIONS}Documents:\n[shipping-times] {SHIPPING_DOC}\n"},
        {"role": "user", "content": REFUNDS},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "And express shipping?"},
    ]


def test_the_text_only_route_is_streamtext_alone_with_no_message_id(ai_sdk: RunningAiSdk) -> None:
    url = f"{ai_sdk.url}/api/chat-text"
    assert read(post(url, user(REFUNDS))) == sse('{"type":"start"}', '{"type":"start-step"}', *REFUND_ANSWER, *FINISH)
    ai_sdk.use(LlmMode.FAILING)
    failed = read(post(url, user(REFUNDS)))
    assert failed == sse('{"type":"start"}', '{"type":"error","errorText":"An error occurred."}')


def test_requests_the_route_cannot_read_are_plain_json_errors(ai_sdk: RunningAiSdk) -> None:
    assert requests.get(f"{ai_sdk.url}/healthz", timeout=5).json() == {"ok": True}
    not_json = requests.post(ai_sdk.chat_url, data="nope", timeout=5)
    assert (not_json.status_code, not_json.json()) == (400, {"error": "the body is not JSON"})
    no_messages = requests.post(ai_sdk.chat_url, json={"id": "chat-1", "messages": []}, timeout=5)
    assert no_messages.status_code == 400
    assert requests.get(ai_sdk.chat_url, timeout=5).status_code == 404
    assert ai_sdk.openai.requests == []
