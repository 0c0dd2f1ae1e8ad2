"""Streamed replies read event by event by their protocol, and assembled into one reply."""

from __future__ import annotations

import pytest

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.events import Event, NdjsonParser
from ragjudge.endpoint.protocols import BUILTIN, Protocol, Selector
from ragjudge.endpoint.reply import parse_reply
from ragjudge.endpoint.stream import MAX_REASONING_CHARS, Assembly, StreamFault


def _assemble(mapping: ResponseMapping, events: list[Event], protocol: Protocol | None = None) -> Assembly:
    assembly = Assembly(mapping, protocol=protocol)
    for event in events:
        if assembly.add(event):
            break
    return assembly


def test_deltas_are_appended_and_other_paths_come_from_the_last_event_where_they_resolve() -> None:
    mapping = ResponseMapping(answer_delta="delta", retrieved="passages", cost_usd="usage.cost")
    events = [
        Event("", '{"passages": [{"id": "doc-1", "text": "Refunds within 30 days."}]}'),
        Event("", '{"delta": "Refunds "}'),
        Event("", '{"delta": "take 30 days.", "usage": {"cost": 0.001}}'),
        Event("", '{"delta": "", "usage": {"cost": 0.002}}'),
    ]
    assembly = _assemble(mapping, events)
    assembly.check_end()
    trace = parse_reply(assembly.reply(), mapping, 10.0)
    assert (trace.answer, trace.retrieved_ids, trace.cost_usd) == ("Refunds take 30 days.", ("doc-1",), 0.002)
    assert (assembly.events, assembly.chars) == (4, 21)


def test_an_error_event_is_a_fault_quoting_its_data() -> None:
    with pytest.raises(StreamFault, match=r'^the stream sent an error event: \{"status_code": 500\}$'):
        _assemble(ResponseMapping(answer_delta="answer"), [Event("error", '{"status_code": 500}')])


def test_a_non_json_event_where_json_is_mapped_names_its_number() -> None:
    events = [Event("", '{"d": "a"}'), Event("", "plain words")]
    with pytest.raises(StreamFault, match=r"^stream event 2 is not valid JSON$"):
        _assemble(ResponseMapping(answer_delta="d"), events)


def test_non_json_data_is_text_when_no_delta_is_mapped() -> None:
    assembly = _assemble(ResponseMapping(), [Event("", "Refunds "), Event("", "take 30 days.")])
    assembly.check_end()
    assert parse_reply(assembly.reply(), ResponseMapping(), 1.0).answer == "Refunds take 30 days."


def test_openai_chunks_without_done_are_a_cut_stream_when_the_protocol_is_declared() -> None:
    mapping = ResponseMapping()
    events = [Event("", '{"choices": [{"delta": {"content": "Refu"}}]}')]
    assembly = _assemble(mapping, events, BUILTIN["openai-chat"])
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(1 events, 4 characters\)$"):
        assembly.check_end()
    # Undeclared, the same stream ends at its close: nothing is guessed from its shape.
    undeclared = _assemble(ResponseMapping(answer_delta="choices.0.delta.content"), events)
    undeclared.check_end()
    assert undeclared.reply() == {"answer": "Refu"}


def test_named_events_of_an_undeclared_protocol_end_at_the_close() -> None:
    # A hand-written service whose last event is `done` (not LangServe's `end`) is whole when it closes.
    events = [Event("token", '{"text": "Re"}'), Event("done", '{"conversation_id": "c-1"}')]
    assembly = _assemble(ResponseMapping(answer_delta="text"), events)
    assembly.check_end()
    assert assembly.reply() == {"answer": "Re", "conversation_id": "c-1"}
    declared = _assemble(ResponseMapping(), [Event("data", '{"answer": "Re"}')], BUILTIN["langserve"])
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(1 events, 2 characters\)$"):
        declared.check_end()


def test_an_unnamed_stream_with_no_end_marker_ends_at_close() -> None:
    assembly = _assemble(ResponseMapping(answer_delta="d"), [Event("", '{"d": "ok"}')])
    assembly.check_end()
    assert assembly.reply() == {"answer": "ok"}


def test_openai_chunks_that_give_their_finish_reason_end_without_done() -> None:
    # hayhooks 2.1 closes after the finish_reason chunk and sends no `[DONE]`.
    mapping = ResponseMapping()
    events = [
        Event("", '{"object": "chat.completion.chunk", "choices": [{"delta": {"content": "Refunds"}}]}'),
        Event("", '{"object": "chat.completion.chunk", "choices": [{"delta": {}, "finish_reason": "stop"}]}'),
    ]
    assembly = _assemble(mapping, events, BUILTIN["openai-chat"])
    assembly.check_end()
    assert parse_reply(assembly.reply(), mapping, 1.0).answer == "Refunds"
    assert assembly.finish_reason == "stop"


def test_an_ndjson_error_line_is_a_fault_and_error_null_beside_data_is_not() -> None:
    parser = NdjsonParser()
    events = parser.feed(b'{"delta": "Re", "error": null}\n{"error": "model \\"m\\" not found"}\n') + parser.close()
    assembly = Assembly(ResponseMapping(answer_delta="delta"), kind="ndjson")
    assert assembly.add(events[0]) is False
    with pytest.raises(StreamFault, match=r'^the stream sent an error event: model "m" not found$'):
        assembly.add(events[1])


def test_reading_stops_at_a_declared_end_and_nothing_after_it_is_answer() -> None:
    events = [
        Event("", '{"type": "text-delta", "id": "t", "delta": "Refunds."}'),
        Event("", '{"type": "finish"}'),
        Event("", '{"type": "text-delta", "id": "t", "delta": " And more."}'),
    ]
    assembly = Assembly(ResponseMapping(), protocol=BUILTIN["ai-sdk"])
    assert [assembly.add(e) for e in events[:2]] == [False, True]
    assembly.check_end()
    assert assembly.reply() == {"answer": "Refunds.", "tool_calls": []}  # the AI SDK exposes tool calls: none


def test_a_stream_of_only_empty_deltas_is_an_empty_answer_only_when_it_ended_normally() -> None:
    events = [Event("", '{"type": "text-delta", "id": "t", "delta": ""}'), Event("", '{"type": "finish"}')]
    whole = _assemble(ResponseMapping(), events, BUILTIN["ai-sdk"])
    whole.check_end()
    trace = parse_reply(whole.reply(), ResponseMapping(), 1.0)
    assert (trace.answer, trace.refused, trace.refused_by) == ("", True, "empty")
    cut = _assemble(ResponseMapping(), events[:1], BUILTIN["ai-sdk"])
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(1 events, 0 characters\)$"):
        cut.check_end()


def test_an_ndjson_line_that_is_not_json_names_its_line() -> None:
    parser = NdjsonParser()
    events = parser.feed(b'{\n  "answer": "Refunds take 30 days."\n}\n') + parser.close()
    assembly = Assembly(ResponseMapping(), kind="ndjson")
    with pytest.raises(StreamFault, match=r"^stream line 1 is not valid JSON$"):
        for event in events:
            assembly.add(event)


# Decisions a mutation sample of the reader left unpinned (bench/mutation.py --module endpoint/stream.py).


def test_a_path_through_a_list_builds_a_list_in_the_assembled_reply() -> None:
    mapping = ResponseMapping(answer="choices.1.message.content", answer_delta="d")
    assembly = _assemble(mapping, [Event("", '{"d": "Hi"}')])
    assert assembly.reply() == {"choices": [None, {"message": {"content": "Hi"}}]}
    assert parse_reply(assembly.reply(), mapping, 1.0).answer == "Hi"


def test_an_undeclared_stream_s_answer_and_text_both_time_the_first_token() -> None:
    text = Assembly(ResponseMapping())
    text.add(Event("", "Refunds"))
    answer = Assembly(ResponseMapping())
    answer.add(Event("", '{"answer": "Refunds"}'))
    assert (text.first_answer, answer.first_answer) == (True, True)
    empty = Assembly(ResponseMapping())
    empty.add(Event("", '{"answer": ""}'))
    assert empty.first_answer is False


def test_an_answer_sent_as_null_later_does_not_replace_the_answer_sent() -> None:
    assembly = _assemble(ResponseMapping(), [Event("", '{"answer": "Hi"}'), Event("", '{"answer": null}')])
    assert assembly.reply() == {"answer": "Hi"}


def test_a_null_refusal_in_a_chunk_is_no_refusal_and_a_refusal_s_text_is_a_declined_answer() -> None:
    chunk = '{"choices": [{"delta": {"content": "Refunds", "refusal": null}}]}'
    whole = _assemble(ResponseMapping(), [Event("", chunk), Event("", "[DONE]")], BUILTIN["openai-chat"])
    assert whole.reply() == {"answer": "Refunds", "tool_calls": []}
    refusal = '{"choices": [{"delta": {"refusal": "I can not help with that."}}]}'
    declined = _assemble(ResponseMapping(), [Event("", refusal), Event("", "[DONE]")], BUILTIN["openai-chat"])
    trace = parse_reply(declined.reply(), ResponseMapping(), 1.0)
    assert (trace.answer, trace.refused, trace.refused_by) == ("I can not help with that.", True, "field")


def test_the_usage_chunk_after_the_finish_reason_chunk_is_still_read() -> None:
    events = [
        Event("", '{"choices": [{"delta": {"content": "Hi"}, "finish_reason": "stop"}]}'),
        Event("", '{"choices": [], "usage": {"total_tokens": 9}}'),
    ]
    assembly = _assemble(ResponseMapping(), events, BUILTIN["openai-chat"])
    assembly.check_end()
    assert (assembly.usage, assembly.finish_reason, assembly.reply()) == (
        {"total_tokens": 9},
        "stop",
        {"answer": "Hi", "tool_calls": []},
    )


def test_reasoning_is_kept_up_to_its_bound_exactly() -> None:
    assert MAX_REASONING_CHARS == 20_000
    part = '{"type": "reasoning-delta", "id": "r", "delta": "' + "x" * 15_000 + '"}'
    assembly = _assemble(ResponseMapping(), [Event("", part)] * 3, BUILTIN["ai-sdk"])
    assert (assembly.reasoning_chars, len("".join(assembly.reasoning))) == (20_000, 20_000)


def test_a_false_error_field_is_no_failure() -> None:
    assembly = _assemble(ResponseMapping(answer_delta="d"), [Event("", '{"d": "ok", "error": false}')])
    assert assembly.reply() == {"answer": "ok"}


def test_only_the_first_text_marker_that_picks_an_event_reads_it() -> None:
    protocol = Protocol(name="declared", text=(Selector(event="t", path="a"), Selector(event="t", path="b")))
    assembly = _assemble(ResponseMapping(), [Event("t", '{"a": "one", "b": "two"}')], protocol)
    assert assembly.reply() == {"answer": "one"}


def test_paths_ending_in_a_list_index_fill_the_list_in_place() -> None:
    mapping = ResponseMapping(answer="out.2", retrieved="out.0", answer_delta="d")
    events = [Event("", '{"out": [[{"id": "doc-1"}]]}'), Event("", '{"d": "Hi"}')]
    assert _assemble(mapping, events).reply() == {"out": [[{"id": "doc-1"}], None, "Hi"]}
