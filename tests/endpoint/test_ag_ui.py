"""AG-UI built in (`preset: ag-ui`): the run input sent with the conversation, the assistant's text the answer (never
a tool call's arguments, never reasoning, nor a user message echoed), `RUN_FINISHED` the end, `RUN_ERROR` a
failure quoting its message, the retrieval tool's results the passages; undeclared, its tool-call deltas are still
never the answer, and it is recognised by its `type` field."""

from __future__ import annotations

import json
from typing import Any

from tests.endpoint.test_receiving import sse

from ragjudge.cases.case import Exchange
from ragjudge.endpoint.recognition import recognise

LOOKUP_ARGS = '{"order_id": "A123"}'
PASSAGES = [{"id": "refund-policy", "text": "Refunds take 14 days."}]


def agui(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


HEALTHY = [
    agui("RUN_STARTED", threadId="t-1", runId="r-1"),
    agui("REASONING_MESSAGE_CONTENT", messageId="think", delta="The user asks about a refund."),
    agui("TOOL_CALL_START", toolCallId="call-1", toolCallName="search_docs", parentMessageId="m-0"),
    agui("TOOL_CALL_ARGS", toolCallId="call-1", delta='{"query": "refund'),
    agui("TOOL_CALL_ARGS", toolCallId="call-1", delta=' time"}'),
    agui("TOOL_CALL_END", toolCallId="call-1"),
    agui("TOOL_CALL_RESULT", messageId="m-t", toolCallId="call-1", content=json.dumps(PASSAGES), role="tool"),
    agui("TOOL_CALL_START", toolCallId="call-2", toolCallName="lookup_order"),
    agui("TOOL_CALL_ARGS", toolCallId="call-2", delta=LOOKUP_ARGS),
    agui("TOOL_CALL_END", toolCallId="call-2"),
    agui("TEXT_MESSAGE_START", messageId="m-u", role="user"),
    agui("TEXT_MESSAGE_CONTENT", messageId="m-u", delta="(echoed question)"),
    agui("TEXT_MESSAGE_END", messageId="m-u"),
    agui("TEXT_MESSAGE_START", messageId="m-1", role="assistant"),
    agui("TEXT_MESSAGE_CONTENT", messageId="m-1", delta="Refunds take "),
    agui("TEXT_MESSAGE_CONTENT", messageId="m-1", delta="14 days."),
    agui("TEXT_MESSAGE_END", messageId="m-1"),
    agui("RUN_FINISHED", threadId="t-1", runId="r-1"),
]


def _wire(events: list[dict[str, Any]], pause_before_text: float = 0.0) -> list[bytes | float]:
    out: list[bytes | float] = []
    for event in events:
        if pause_before_text and event["type"] == "TEXT_MESSAGE_START" and event.get("role") == "assistant":
            out.append(pause_before_text)
        out.append(sse(event))
    return out


def test_the_preset_reads_the_assistant_s_text_its_tool_calls_and_its_retrieval_tool_s_passages(
    serve, make_client, make_case
) -> None:
    server = serve(lambda ex: ex.stream(_wire(HEALTHY, pause_before_text=0.3)))
    client = make_client(server.url, retries=0, preset="ag-ui", response={"retrieval_tool": "search_docs"})
    result = client.call(make_case())
    assert result.error is None and result.trace is not None
    trace = result.trace
    assert trace.answer == "Refunds take 14 days."
    assert trace.stream is not None and trace.stream.protocol == "ag-ui"
    assert trace.stream.reasoning == "The user asks about a refund."
    assert [(c.name, c.arguments, c.position) for c in trace.tool_calls or ()] == [
        ("search_docs", {"query": "refund time"}, 1),
        ("lookup_order", {"order_id": "A123"}, 2),
    ]
    assert (trace.tool_calls or ())[0].result == PASSAGES
    assert trace.retrieved_ids == ("refund-policy",) and trace.passages[0].text == "Refunds take 14 days."
    assert trace.conversation_id == "t-1"
    # The first token is the first answer text, after the tool calls and the 300 ms before it.
    assert trace.ttft_ms is not None and trace.ttft_ms >= 300


def test_the_run_input_carries_the_conversation(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(_wire(HEALTHY)))
    turn = make_case(
        id="c::2", question="And for order A123?", turn=2, history=(Exchange("Refunds?", "Within 14 days."),)
    )
    make_client(server.url, retries=0, preset="ag-ui").call(turn)
    body = server.requests[0].json()
    assert body == {
        "threadId": "c::2",
        "runId": "c::2-run-2",
        "state": {},
        "messages": [
            {"id": "c::2-1", "role": "user", "content": "Refunds?"},
            {"id": "c::2-2", "role": "assistant", "content": "Within 14 days."},
            {"id": "c::2-3", "role": "user", "content": "And for order A123?"},
        ],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def test_a_run_error_is_a_case_error_quoting_its_message(serve, make_client, make_case) -> None:
    events = [*HEALTHY[:10], agui("RUN_ERROR", message="upstream LLM unavailable", code="MODEL_ERROR")]
    server = serve(lambda ex: ex.stream(_wire(events)))
    result = make_client(server.url, retries=0, preset="ag-ui").call(make_case(should_answer=False))
    assert (result.trace, result.error) == (None, "endpoint error: the run failed: upstream LLM unavailable")


def test_a_stream_cut_before_run_finished_is_a_cut(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(_wire(HEALTHY[:-2])))
    result = make_client(server.url, retries=0, preset="ag-ui").call(make_case())
    assert result.error == "endpoint error: stream ended before its end (16 events, 21 characters)"


def test_undeclared_with_answer_delta_delta_tool_arguments_are_never_the_answer(serve, make_client, make_case) -> None:
    events = [e for e in HEALTHY if e.get("messageId") != "m-u"]  # no user message echoed: no role to read
    server = serve(lambda ex: ex.stream(_wire(events, pause_before_text=0.3)))
    result = make_client(server.url, retries=0, response={"answer_delta": "delta"}).call(make_case())
    assert result.trace is not None
    assert result.trace.answer == "Refunds take 14 days."  # no tool arguments, no reasoning
    assert [c.name for c in result.trace.tool_calls or ()] == ["search_docs", "lookup_order"]
    assert result.trace.ttft_ms is not None and result.trace.ttft_ms >= 300
    assert result.trace.stream is not None and result.trace.stream.suggestion == "ag-ui"
    # An outage undeclared is an error too, quoting RUN_ERROR's message.
    failing = serve(lambda ex: ex.stream(_wire([HEALTHY[0], agui("RUN_ERROR", message="upstream LLM unavailable")])))
    outage = make_client(failing.url, retries=0, response={"answer_delta": "delta"}).call(make_case())
    assert outage.error == "endpoint error: the run failed: upstream LLM unavailable"


def test_ag_ui_is_recognised_by_its_type_field() -> None:
    looks = recognise([("", agui("RUN_STARTED", threadId="t", runId="r"))])
    assert looks is not None and (looks.name, looks.label) == ("ag-ui", "AG-UI events")


def test_passages_from_a_state_snapshot_when_declared(serve, make_client, make_case) -> None:
    events = [
        agui("RUN_STARTED", threadId="t", runId="r"),
        agui("STATE_SNAPSHOT", snapshot={"documents": PASSAGES}),
        agui("TEXT_MESSAGE_CONTENT", messageId="m", delta="Refunds take 14 days."),
        agui("RUN_FINISHED", threadId="t", runId="r"),
    ]
    server = serve(lambda ex: ex.stream(_wire(events)))
    protocol = {"extends": "ag-ui", "passages": {"where": {"type": "STATE_SNAPSHOT"}, "path": "snapshot.documents"}}
    result = make_client(server.url, retries=0, preset="ag-ui", protocol=protocol).call(make_case())
    assert result.trace is not None and result.trace.retrieved_ids == ("refund-policy",)
    assert result.trace.answer == "Refunds take 14 days." and result.trace.tool_calls == ()
