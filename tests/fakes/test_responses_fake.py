"""Prove FakeResponsesRag faithful: the real ``openai`` SDK reads it (``client.responses.create`` streamed and
not, the ``client.responses.stream`` helper, the async client), every streamed event and every Response
validates strictly against the SDK's own pydantic types, and each failure mode is pinned as the SDK sees it."""

import asyncio
import http.client
import json
import typing
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent

from tests.fakes.openai_server import default_error
from tests.fakes.responses_server import (
    DECLINE_EN,
    DECLINE_ZH,
    FAILED_ERROR,
    STREAM_ERROR,
    FakeResponsesRag,
    pieces,
)

MODEL = "gpt-4o-mini"
QUESTION = "How long do refunds take?"
REFUND = "Refunds are issued within 14 days of the return being received. [refund-policy]"
SHIPPING = "Express shipping takes 2 business days. [shipping-times]"
REFUND_ZH = "退款将在收到退货后 14 天内退回。 [退款政策]"
RESULTS = ["file_search_call.results"]
NO_COMPLETED = "Didn't receive a `response.completed` event."
CLOCK = 1767225600

HEALTHY_TYPES = [
    "ResponseCreatedEvent",
    "ResponseInProgressEvent",
    "ResponseOutputItemAddedEvent",
    "ResponseFileSearchCallInProgressEvent",
    "ResponseFileSearchCallSearchingEvent",
    "ResponseFileSearchCallCompletedEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseOutputItemAddedEvent",
    "ResponseContentPartAddedEvent",
    *["ResponseTextDeltaEvent"] * 12,
    "ResponseTextDoneEvent",
    "ResponseContentPartDoneEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseCompletedEvent",
]
HEALTHY_WIRE = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.file_search_call.in_progress",
    "response.file_search_call.searching",
    "response.file_search_call.completed",
    "response.output_item.done",
    "response.output_item.added",
    "response.content_part.added",
    *["response.output_text.delta"] * 12,
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]

# The SDK's streamed-event classes by their `type` literal, for strict validation of the raw wire.
_UNION = typing.get_args(ResponseStreamEvent)[0]
SDK_EVENT: dict[str, Any] = {typing.get_args(c.model_fields["type"].annotation)[0]: c for c in typing.get_args(_UNION)}


@pytest.fixture
def rag() -> Iterator[FakeResponsesRag]:
    with FakeResponsesRag(clock=lambda: CLOCK) as fake:
        yield fake


def names(events: Any) -> list[str]:
    return [type(e).__name__ for e in events]


def post(rag: FakeResponsesRag, body: dict[str, Any]) -> tuple[http.client.HTTPResponse, bytes, bool]:
    """POST `body` to the fake with the stdlib: the response, its (de-chunked) body, and whether it was whole."""
    conn = http.client.HTTPConnection("127.0.0.1", rag.port, timeout=10)
    headers = {"Authorization": "Bearer sk-test-0000", "Content-Type": "application/json"}
    conn.request("POST", "/v1/responses", json.dumps(body).encode("utf-8"), headers)
    resp = conn.getresponse()
    try:
        return resp, resp.read(), True
    except http.client.IncompleteRead as cut:
        return resp, cut.partial, False
    finally:
        conn.close()


def sse(raw: bytes) -> list[dict[str, Any]]:
    """Split a raw SSE body into its events, checking each block is exactly ``event: T\\ndata: J`` with T ==
    J's type, and validating J strictly against the SDK's class for T."""
    events = []
    text = raw.decode("utf-8")
    assert text.endswith("\n\n")
    for block in text[:-2].split("\n\n"):
        event_line, data_line = block.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line[len("data: ") :])
        assert event_line == f"event: {data['type']}"
        SDK_EVENT[data["type"]].model_validate(data, strict=True)
        events.append(data)
    return events


# ---------------------------------------------------------------------------------------------- healthy
def test_streamed_create_yields_the_documented_events_as_sdk_types(rag: FakeResponsesRag) -> None:
    events = list(rag.client().responses.create(model=MODEL, input=QUESTION, stream=True))
    assert names(events) == HEALTHY_TYPES
    assert [e.type for e in events] == HEALTHY_WIRE
    assert [e.sequence_number for e in events] == list(range(25))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert deltas == pieces(REFUND) and "".join(deltas) == REFUND
    assert deltas[:3] == ["Refunds ", "are ", "issued "] and deltas[-1] == "[refund-policy]"
    created, completed = events[0], events[-1]
    assert created.type == "response.created" and completed.type == "response.completed"
    assert (created.response.status, created.response.output, created.response.usage) == ("in_progress", [], None)
    assert completed.response.id == created.response.id and completed.response.id.startswith("resp_")
    assert completed.response.status == "completed" and completed.response.output_text == REFUND
    assert completed.response.completed_at == CLOCK and completed.response.created_at == CLOCK
    assert completed.response.usage is not None
    usage = completed.response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (5, 12, 17)
    done = events[-4]
    assert done.type == "response.output_text.done" and done.text == REFUND
    assert (done.output_index, done.content_index, done.logprobs) == (1, 0, [])


def test_stream_helper_gives_the_final_response_and_text_snapshots(rag: FakeResponsesRag) -> None:
    with rag.client().responses.stream(model=MODEL, input=QUESTION) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert final.output_text == REFUND
    assert final.status == "completed" and final.error is None and final.incomplete_details is None
    assert [item.type for item in final.output] == ["file_search_call", "message"]
    snapshots = [e.snapshot for e in events if e.type == "response.output_text.delta"]
    assert snapshots[0] == "Refunds " and snapshots[-1] == REFUND
    assert final.usage is not None and final.usage.total_tokens == 17
    [body] = rag.bodies
    assert body == {"input": QUESTION, "model": MODEL, "stream": True}


def test_include_results_puts_the_matched_docs_on_the_file_search_call(rag: FakeResponsesRag) -> None:
    question = "Can I get a refund on express shipping?"
    with rag.client().responses.stream(model=MODEL, input=question, include=RESULTS) as stream:
        final = stream.get_final_response()
    assert final.output_text == REFUND  # the first matching document answers
    search = final.output[0]
    assert search.type == "file_search_call" and search.status == "completed"
    assert search.id.startswith("fs_") and search.queries == [question]
    assert search.results is not None
    assert [r.attributes for r in search.results] == [{"doc_id": "refund-policy"}, {"doc_id": "shipping-times"}]
    assert [r.filename for r in search.results] == ["refund-policy.md", "shipping-times.md"]
    assert [r.score for r in search.results] == [0.9, 0.8]
    assert [r.text for r in search.results] == [
        "Refunds are issued within 14 days of the return being received.",
        "Express shipping takes 2 business days.",
    ]
    assert [r.file_id for r in search.results] == ["file-d34ca0ab152ec59972e876", "file-5011a05946df8874624e4a"]
    assert rag.bodies[0]["include"] == RESULTS


def test_without_include_the_file_search_call_has_no_results(rag: FakeResponsesRag) -> None:
    final = rag.client().responses.create(model=MODEL, input=QUESTION)
    search = final.output[0]
    assert search.type == "file_search_call"
    assert (search.status, search.queries, search.results) == ("completed", [QUESTION], None)


def test_non_streamed_create_reads_output_text_and_usage(rag: FakeResponsesRag) -> None:
    client = rag.client()
    response = client.responses.create(model=MODEL, input=QUESTION, include=RESULTS)
    assert response.output_text == REFUND
    assert response.object == "response" and response.status == "completed" and response.model == MODEL
    assert response.usage is not None
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (5, 12, 17)
    message = response.output[1]
    assert message.type == "message" and message.role == "assistant" and message.status == "completed"
    assert [(c.type, c.text, c.annotations) for c in message.content] == [("output_text", REFUND, [])]
    # The wire JSON, like the real API's, has no `output_text` key: that is the SDK's property over `output`.
    raw = client.responses.with_raw_response.create(model=MODEL, input=QUESTION)
    assert raw.headers["content-type"] == "application/json" and raw.headers["x-request-id"].startswith("req_")
    wire = json.loads(raw.http_response.text)
    assert "output_text" not in wire
    assert wire["output"][1]["content"] == [{"type": "output_text", "annotations": [], "logprobs": [], "text": REFUND}]
    Response.model_validate(wire, strict=True)
    assert raw.http_response.text.startswith('{\n  "id": "resp_')  # pretty-printed, as the API sends it


@pytest.mark.parametrize(
    ("question", "answer", "tokens"),
    [
        ("退款需要多久？", REFUND_ZH, (7, 23)),
        ("What is the warranty?", "Every device carries a 12-month limited warranty. [warranty]", (4, 8)),
        ("Do you sell gift cards?", DECLINE_EN, (5, 8)),
        ("你们卖礼品卡吗？", DECLINE_ZH, (8, 13)),
    ],
)
def test_answers_in_both_languages_and_declines_in_words(
    rag: FakeResponsesRag, question: str, answer: str, tokens: tuple[int, int]
) -> None:
    events = list(rag.client().responses.create(model=MODEL, input=question, stream=True))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == answer and len(deltas) == tokens[1]
    final = rag.client().responses.create(model=MODEL, input=question)
    assert final.output_text == answer
    assert final.usage is not None and (final.usage.input_tokens, final.usage.output_tokens) == tokens


def test_chinese_answer_streams_one_delta_per_character(rag: FakeResponsesRag) -> None:
    events = list(rag.client().responses.create(model=MODEL, input="退款需要多久？", stream=True))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert deltas[:4] == ["退", "款", "将", "在"] and deltas[-6:] == ["[", "退", "款", "政", "策", "]"]


def test_a_conversation_is_answered_from_its_last_user_message(rag: FakeResponsesRag) -> None:
    conversation: Any = [
        {"role": "user", "content": "How long do refunds take?"},
        {"role": "assistant", "content": REFUND},
        {"role": "user", "content": [{"type": "input_text", "text": "And how fast is express shipping?"}]},
    ]
    with rag.client().responses.stream(model=MODEL, input=conversation, include=RESULTS) as stream:
        final = stream.get_final_response()
    assert final.output_text == SHIPPING
    assert final.output[0].type == "file_search_call"
    assert final.output[0].queries == ["And how fast is express shipping?"]
    assert final.usage is not None and final.usage.input_tokens == 5 + 12 + 6  # every message's pieces
    # The last user message answers even when an assistant message comes after it.
    trailing: Any = [{"role": "user", "content": "Is there a warranty?"}, {"role": "assistant", "content": "..."}]
    reply = rag.client().responses.create(model=MODEL, input=trailing, instructions="Answer from the docs.")
    assert reply.output_text == "Every device carries a 12-month limited warranty. [warranty]"
    assert reply.instructions == "Answer from the docs."
    first, second = rag.requests
    assert (first["method"], first["path"]) == ("POST", "/v1/responses")
    assert first["headers"]["authorization"] == "Bearer sk-test-0000"
    assert first["body"] == {"input": conversation, "model": MODEL, "include": RESULTS, "stream": True}
    assert second["body"] == {"input": trailing, "model": MODEL, "instructions": "Answer from the docs."}
    assert rag.call_count == 2


# ---------------------------------------------------------------------------------------------- the wire
def test_the_wire_is_sse_over_chunked_http_and_every_event_validates_strictly(rag: FakeResponsesRag) -> None:
    resp, raw, whole = post(rag, {"model": MODEL, "input": QUESTION, "stream": True, "include": RESULTS})
    assert whole and resp.status == 200 and resp.version == 11
    assert resp.getheader("Content-Type") == "text/event-stream; charset=utf-8"
    assert resp.getheader("Transfer-Encoding") == "chunked" and resp.getheader("Content-Length") is None
    events = sse(raw)
    assert [e["type"] for e in events] == HEALTHY_WIRE
    assert [e["sequence_number"] for e in events] == list(range(25))
    assert b"[DONE]" not in raw
    created = events[0]["response"]
    resp_id, fs_id, msg_id = created["id"], events[2]["item"]["id"], events[7]["item"]["id"]
    assert (len(resp_id), len(fs_id), len(msg_id)) == (53, 51, 52)
    assert created == {
        "id": resp_id,
        "object": "response",
        "created_at": CLOCK,
        "status": "in_progress",
        "background": False,
        "completed_at": None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": MODEL,
        "output": [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "reasoning": {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }
    assert events[2] == {
        "type": "response.output_item.added",
        "sequence_number": 2,
        "output_index": 0,
        "item": {"id": fs_id, "type": "file_search_call", "status": "in_progress", "queries": [], "results": None},
    }
    assert events[3] == {
        "type": "response.file_search_call.in_progress",
        "sequence_number": 3,
        "output_index": 0,
        "item_id": fs_id,
    }
    assert events[8] == {
        "type": "response.content_part.added",
        "sequence_number": 8,
        "item_id": msg_id,
        "output_index": 1,
        "content_index": 0,
        "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
    }
    assert events[9] == {
        "type": "response.output_text.delta",
        "sequence_number": 9,
        "item_id": msg_id,
        "output_index": 1,
        "content_index": 0,
        "delta": "Refunds ",
        "logprobs": [],
        "obfuscation": "502172c3",
    }
    assert events[23]["item"] == {
        "id": msg_id,
        "type": "message",
        "status": "completed",
        "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": REFUND}],
        "role": "assistant",
    }
    final = events[-1]["response"]
    assert final["output"] == [events[6]["item"], events[23]["item"]]
    assert final["usage"] == {
        "input_tokens": 5,
        "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 17,
    }
    assert raw.startswith(b'event: response.created\ndata: {"type":"response.created","sequence_number":0,')


def test_obfuscation_can_be_turned_off_as_with_the_real_api(rag: FakeResponsesRag) -> None:
    body = {"model": MODEL, "input": QUESTION, "stream": True, "stream_options": {"include_obfuscation": False}}
    _, raw, _ = post(rag, body)
    deltas = [e for e in sse(raw) if e["type"] == "response.output_text.delta"]
    assert len(deltas) == 12 and all("obfuscation" not in e for e in deltas)
    events = list(rag.client().responses.create(model=MODEL, input=QUESTION, stream=True, stream_options={}))
    padding = [getattr(e, "obfuscation", "") for e in events[9:21]]  # on by default: pads each delta toward 16
    assert [len(p) for p in padding] == [16 - len(piece) if len(piece) < 14 else 2 for piece in pieces(REFUND)]


def test_the_async_client_reads_the_stream_too(rag: FakeResponsesRag) -> None:
    async def run() -> str:
        client = openai.AsyncOpenAI(base_url=rag.base_url, api_key="sk-test-0000", max_retries=0)
        async with client.responses.stream(model=MODEL, input="Is express delivery quick?") as stream:
            final = await stream.get_final_response()
        await client.close()
        return final.output_text

    assert asyncio.run(run()) == SHIPPING


# ---------------------------------------------------------------------------------------------- failure modes
def test_failed_is_a_response_failed_event_and_the_helper_finds_no_completed(rag: FakeResponsesRag) -> None:
    rag.mode = "failed"
    client = rag.client()
    events = list(client.responses.create(model=MODEL, input=QUESTION, stream=True))
    assert names(events) == ["ResponseCreatedEvent", "ResponseInProgressEvent", "ResponseFailedEvent"]
    failed = events[-1]
    assert failed.type == "response.failed" and failed.sequence_number == 2
    assert failed.response.status == "failed" and failed.response.output == [] and failed.response.usage is None
    assert failed.response.error is not None
    assert (failed.response.error.code, failed.response.error.message) == ("server_error", FAILED_ERROR["message"])
    assert FAILED_ERROR["message"].startswith("An error occurred while processing your request.")
    with client.responses.stream(model=MODEL, input=QUESTION) as stream:
        assert names(stream) == ["ResponseCreatedEvent", "ResponseInProgressEvent", "ResponseFailedEvent"]
        with pytest.raises(RuntimeError) as no_final:
            stream.get_final_response()
    assert str(no_final.value) == NO_COMPLETED
    # Not streamed: HTTP 200 with the failed Response; the SDK raises nothing.
    response = client.responses.create(model=MODEL, input=QUESTION)
    assert (response.status, response.output_text, response.output) == ("failed", "", [])
    assert response.error is not None and response.error.code == "server_error"
    _, raw, _ = post(rag, {"model": MODEL, "input": QUESTION, "stream": True})
    assert [e["type"] for e in sse(raw)] == ["response.created", "response.in_progress", "response.failed"]


def test_incomplete_sends_some_deltas_then_response_incomplete(rag: FakeResponsesRag) -> None:
    rag.mode = "incomplete"
    client = rag.client()
    events = list(client.responses.create(model=MODEL, input=QUESTION, stream=True))
    cut_short = [*HEALTHY_TYPES[:9], *["ResponseTextDeltaEvent"] * 3, *HEALTHY_TYPES[-4:-1]]
    assert names(events) == [*cut_short, "ResponseIncompleteEvent"]
    last = events[-1]
    assert last.type == "response.incomplete" and last.sequence_number == 15
    assert last.response.status == "incomplete"
    assert (
        last.response.incomplete_details is not None and last.response.incomplete_details.reason == "max_output_tokens"
    )
    assert last.response.output_text == "Refunds are issued "
    assert last.response.output[1].type == "message" and last.response.output[1].status == "incomplete"
    assert last.response.usage is not None and last.response.usage.output_tokens == 3
    assert last.response.max_output_tokens == 3
    with client.responses.stream(model=MODEL, input=QUESTION) as stream:
        with pytest.raises(RuntimeError) as no_final:
            stream.get_final_response()
        assert str(no_final.value) == NO_COMPLETED
    response = client.responses.create(model=MODEL, input=QUESTION)
    assert (response.status, response.output_text) == ("incomplete", "Refunds are issued ")
    assert response.incomplete_details is not None and response.incomplete_details.reason == "max_output_tokens"


def test_a_healthy_service_honours_max_output_tokens(rag: FakeResponsesRag) -> None:
    events = list(rag.client().responses.create(model=MODEL, input=QUESTION, stream=True, max_output_tokens=5))
    last = events[-1]
    assert last.type == "response.incomplete"
    assert last.response.output_text == "Refunds are issued within 14 "
    assert last.response.max_output_tokens == 5
    final = rag.client().responses.create(model=MODEL, input=QUESTION, max_output_tokens=50)
    assert (final.status, final.output_text, final.max_output_tokens) == ("completed", REFUND, 50)


def test_error_in_the_documented_flat_shape_is_yielded_not_raised(rag: FakeResponsesRag) -> None:
    rag.mode = "error"
    client = rag.client()
    events = list(client.responses.create(model=MODEL, input=QUESTION, stream=True))
    assert names(events) == ["ResponseCreatedEvent", "ResponseInProgressEvent", "ResponseErrorEvent"]
    error = events[-1]
    assert error.type == "error"
    assert (error.code, error.message, error.param, error.sequence_number) == (
        "server_error",
        STREAM_ERROR["message"],
        None,
        2,
    )
    with client.responses.stream(model=MODEL, input=QUESTION) as stream:
        assert names(stream)[-1] == "ResponseErrorEvent"
        with pytest.raises(RuntimeError) as no_final:
            stream.get_final_response()
        assert str(no_final.value) == NO_COMPLETED
    _, raw, _ = post(rag, {"model": MODEL, "input": QUESTION, "stream": True})
    assert raw.endswith(
        b'event: error\ndata: {"type":"error","sequence_number":2,"code":"server_error","message":"'
        + STREAM_ERROR["message"].encode()
        + b'","param":null}\n\n'
    )
    # Not streamed, the error is an HTTP 500.
    with pytest.raises(openai.InternalServerError) as http_error:
        client.responses.create(model=MODEL, input=QUESTION)
    assert http_error.value.status_code == 500 and http_error.value.body == STREAM_ERROR


def test_error_nested_as_the_live_api_sends_it_raises_api_error(rag: FakeResponsesRag) -> None:
    rag.mode = "error_nested"
    seen: list[Any] = []
    with pytest.raises(openai.APIError) as raised:
        seen.extend(rag.client().responses.create(model=MODEL, input=QUESTION, stream=True))
    assert type(raised.value) is openai.APIError  # not an APIStatusError: the HTTP status was 200
    assert raised.value.message == STREAM_ERROR["message"] and raised.value.body == STREAM_ERROR
    assert (raised.value.code, raised.value.type, raised.value.param) == ("server_error", "server_error", None)
    with (
        pytest.raises(openai.APIError) as helper_raised,
        rag.client().responses.stream(model=MODEL, input=QUESTION) as stream,
    ):
        seen.extend(stream)
    assert helper_raised.value.message == STREAM_ERROR["message"]
    assert names(seen) == ["ResponseCreatedEvent", "ResponseInProgressEvent"] * 2
    _, raw, _ = post(rag, {"model": MODEL, "input": QUESTION, "stream": True})
    tail = raw.decode().split("\n\n")[-2]
    assert tail == "event: error\ndata: " + json.dumps(
        {"type": "error", "sequence_number": 2, "error": STREAM_ERROR}, separators=(",", ":")
    )


def test_cut_closes_mid_stream_and_the_sdk_raises_a_connection_error(rag: FakeResponsesRag) -> None:
    rag.mode = "cut"
    seen: list[Any] = []
    with pytest.raises(openai.APIConnectionError) as raised:
        seen.extend(rag.client().responses.create(model=MODEL, input=QUESTION, stream=True))
    assert str(raised.value) == "Connection error."
    assert isinstance(raised.value.__cause__, httpx2.RemoteProtocolError)
    assert names(seen) == [*HEALTHY_TYPES[:9], *["ResponseTextDeltaEvent"] * 3]
    assert "".join(e.delta for e in seen if e.type == "response.output_text.delta") == "Refunds are issued "
    with (
        pytest.raises(openai.APIConnectionError),
        rag.client().responses.stream(model=MODEL, input=QUESTION) as stream,
    ):
        stream.get_final_response()
    resp, raw, whole = post(rag, {"model": MODEL, "input": QUESTION, "stream": True})
    assert not whole and resp.status == 200
    assert [e["type"] for e in sse(raw)][-4:] == ["response.content_part.added", *["response.output_text.delta"] * 3]


def test_cut_non_streamed_and_the_sdk_retries_it_by_default(rag: FakeResponsesRag) -> None:
    rag.mode = "cut"
    with pytest.raises(openai.APIConnectionError):
        rag.client().responses.create(model=MODEL, input=QUESTION)
    assert rag.call_count == 1
    with pytest.raises(openai.APIConnectionError):
        rag.client(max_retries=1).responses.create(model=MODEL, input=QUESTION)
    assert rag.call_count == 3  # the SDK sent it again after the drop


def test_http500_is_an_internal_server_error_streamed_or_not(rag: FakeResponsesRag) -> None:
    rag.mode = "http500"
    for stream in (True, False):
        with pytest.raises(openai.InternalServerError) as raised:
            rag.client().responses.create(model=MODEL, input=QUESTION, stream=stream)
        assert raised.value.status_code == 500
        assert raised.value.body == default_error(500)["error"]
        assert raised.value.message == (
            "Error code: 500 - The server had an error while processing your request. Sorry about that!"
        )
    with pytest.raises(openai.InternalServerError):
        rag.client(max_retries=1).responses.create(model=MODEL, input=QUESTION)
    assert rag.call_count == 4  # 2 single tries, then one try and one retry
    resp, raw, _ = post(rag, {"model": MODEL, "input": QUESTION, "stream": True})
    assert resp.status == 500 and resp.getheader("Content-Type") == "application/json; charset=utf-8"
    assert json.loads(raw) == default_error(500)


# ---------------------------------------------------------------------------------------------- the rest
def test_bad_key_wrong_path_and_missing_input_are_rejected_as_the_api_does() -> None:
    with FakeResponsesRag(api_key="sk-right") as rag:
        with pytest.raises(openai.AuthenticationError) as denied:
            rag.client(api_key="sk-wrong").responses.create(model=MODEL, input=QUESTION)
        assert denied.value.code == "invalid_api_key"
        assert rag.client(api_key="sk-right").responses.create(model=MODEL, input=QUESTION).output_text == REFUND
        with pytest.raises(openai.NotFoundError):
            rag.client(api_key="sk-right").models.list()
        with pytest.raises(openai.BadRequestError) as bad:
            rag.client(api_key="sk-right").responses.create(model=MODEL)
        assert (bad.value.code, bad.value.param) == ("missing_required_parameter", "input")
        assert rag.call_count == 1 and len(rag.requests) == 4
        rag.reset()
        assert rag.requests == [] and rag.call_count == 0


def test_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="unknown mode 'flaky'"):
        FakeResponsesRag("flaky")
    rag = FakeResponsesRag()
    with pytest.raises(ValueError, match="unknown mode 'down'"):
        rag.mode = "down"
    assert rag.mode == "healthy"
