"""Tool calls are part of the reply, never answer text: read from the AI SDK's tool parts, OpenAI Chat's
`tool_calls` deltas (assembled by index), the Responses API's function-call items and argument deltas (streamed
and in one body), and a JSON reply through `response.tool_calls`; a service that exposes none has unknown calls."""

from __future__ import annotations

import json
from typing import Any

from tests.endpoint.test_receiving import openai_chunk, sse

ORDER = {"order_id": "A123"}


def _sse(events: list[Any]) -> list[bytes | float]:
    return [sse(e if isinstance(e, str) else json.dumps(e)) for e in events]


def _calls(result: Any) -> list[tuple[str, Any, Any]]:
    assert result.error is None, result.error
    return [(c.name, c.arguments, c.result) for c in result.trace.tool_calls]


def test_the_ai_sdk_s_tool_parts(serve, make_client, make_case) -> None:
    events = [
        {"type": "start"},
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "lookup_order"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"order_id": '},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '"A123"}'},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "lookup_order", "input": ORDER},
        {"type": "tool-output-available", "toolCallId": "c1", "output": {"status": "shipped"}},
        {"type": "text-delta", "id": "t", "delta": "Order A123 has shipped."},
        {"type": "finish"},
    ]
    server = serve(lambda ex: ex.stream(_sse(events)))
    result = make_client(server.url, retries=0, preset="ai-sdk").call(make_case())
    assert _calls(result) == [("lookup_order", ORDER, {"status": "shipped"})]
    assert result.trace.answer == "Order A123 has shipped."


def _tool_delta(index: int, *, call_id: str | None = None, name: str | None = None, args: str = "") -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": args}
    if name:
        function["name"] = name
    call: dict[str, Any] = {"index": index, "function": function}
    if call_id:
        call.update(id=call_id, type="function")
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


def test_openai_chat_tool_call_deltas_are_assembled_by_index(serve, make_client, make_case) -> None:
    events = [
        openai_chunk(""),
        _tool_delta(0, call_id="call_a", name="lookup_order"),
        _tool_delta(1, call_id="call_b", name="search_docs"),
        _tool_delta(0, args='{"order_'),
        _tool_delta(1, args='{"query": "refunds"}'),
        _tool_delta(0, args='id": "A123"}'),
        openai_chunk(None, "tool_calls"),
        "[DONE]",
    ]
    server = serve(lambda ex: ex.stream(_sse(events)))
    result = make_client(server.url, retries=0, preset="openai-chat", model="m").call(make_case())
    assert _calls(result) == [("lookup_order", ORDER, None), ("search_docs", {"query": "refunds"}, None)]
    assert result.trace.answer == "" and result.trace.ttft_ms is None  # no answer text: no first token


def test_the_responses_api_s_function_calls_streamed_and_in_one_body(serve, make_client, make_case) -> None:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup_order", "arguments": ""}
    events = [
        {"type": "response.created", "response": {"status": "in_progress"}},
        {"type": "response.output_item.added", "item": item},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": '{"order_id":'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": ' "A123"}'},
        {"type": "response.output_item.done", "item": {**item, "arguments": json.dumps(ORDER)}},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    server = serve(lambda ex: ex.stream(_sse(events)))
    result = make_client(server.url, retries=0, preset="openai-responses", model="m").call(make_case())
    assert _calls(result) == [("lookup_order", ORDER, None)]
    body = {
        "object": "response",
        "status": "completed",
        "output": [{**item, "arguments": json.dumps(ORDER)}, {"type": "message", "content": []}],
    }
    whole = serve(lambda ex: ex.json(body))
    result = make_client(whole.url, retries=0, preset="openai-responses", model="m").call(make_case())
    assert _calls(result) == [("lookup_order", ORDER, None)]


def test_a_json_reply_s_tool_calls_through_the_mapping(serve, make_client, make_case) -> None:
    reply = {
        "answer": "Order A123 has shipped.",
        "trace": {"steps": [{"tool": "lookup_order", "input": ORDER, "output": "shipped"}]},
    }
    server = serve(lambda ex: ex.json(reply))
    mapped = make_client(server.url, retries=0, response={"tool_calls": "trace.steps"}).call(make_case())
    assert _calls(mapped) == [("lookup_order", ORDER, "shipped")]
    default = serve(lambda ex: ex.json({"answer": "x", "tool_calls": [{"name": "lookup_order", "arguments": "{}"}]}))
    assert _calls(make_client(default.url, retries=0).call(make_case())) == [("lookup_order", {}, None)]


def test_a_service_that_exposes_no_tool_calls_has_unknown_calls_not_none(serve, make_client, make_case) -> None:
    plain = serve(lambda ex: ex.json({"answer": "Refunds take 14 days."}))
    result = make_client(plain.url, retries=0).call(make_case())
    assert result.trace is not None and result.trace.tool_calls is None
    chat = serve(lambda ex: ex.stream(_sse([openai_chunk("Hi."), openai_chunk(None, "stop"), "[DONE]"])))
    called_none = make_client(chat.url, retries=0, preset="openai-chat", model="m").call(make_case())
    assert called_none.trace is not None and called_none.trace.tool_calls == ()  # exposes them: called none
