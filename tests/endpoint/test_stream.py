"""Streamed replies read event by event: SSE per the HTML standard, NDJSON, and their assembly into one reply."""

from __future__ import annotations

import pytest

from ragjudge.config.model import ResponseMapping
from ragjudge.endpoint.reply import parse_reply
from ragjudge.endpoint.stream import Assembly, Event, NdjsonParser, SseParser, StreamFault, stream_kind


def _sse(*chunks: bytes) -> list[Event]:
    parser = SseParser()
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.close()


def test_data_lines_are_joined_with_a_newline_and_a_blank_line_dispatches() -> None:
    assert _sse(b"data: one\ndata: two\n\ndata: three\n\n") == [Event("", "one\ntwo"), Event("", "three")]


def test_comments_id_and_retry_are_ignored() -> None:
    stream = b": keep-alive\nid: 7\nretry: 1000\ndata: x\n\n:\n\n"
    assert _sse(stream) == [Event("", "x")]


@pytest.mark.parametrize("newline", [b"\r\n", b"\n", b"\r"])
def test_each_line_ending(newline: bytes) -> None:
    stream = newline.join([b"event: token", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert _sse(stream) == [Event("token", "a\nb"), Event("", "c")]


def test_a_crlf_split_across_chunks_is_one_line_ending() -> None:
    assert _sse(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [Event("", "a"), Event("", "b")]


def test_one_space_after_the_colon_is_removed_and_a_field_without_colon_is_empty() -> None:
    assert _sse(b"data:  two spaces\n\ndata:none\n\ndata\n\n") == [
        Event("", " two spaces"),
        Event("", "none"),
        Event("", ""),
    ]


def test_event_names_last_for_one_event_and_a_named_event_without_data_is_kept() -> None:
    assert _sse(b"event: end\n\nevent: data\ndata: {}\n\ndata: 1\n\n\n") == [
        Event("end", ""),
        Event("data", "{}"),
        Event("", "1"),
    ]


def test_a_utf8_character_split_across_chunks() -> None:
    encoded = "data: 退货\n\n".encode()
    cut = encoded.index("货".encode()) + 1  # inside the 3-byte character
    assert _sse(encoded[:cut], encoded[cut:]) == [Event("", "退货")]


def test_byte_by_byte_gives_the_same_events() -> None:
    stream = 'event: data\r\ndata: {"answer": "é"}\r\n\r\ndata: [DONE]\r\n\r\n'.encode()
    assert _sse(*(stream[i : i + 1] for i in range(len(stream)))) == _sse(stream)


def test_a_last_event_without_its_blank_line_is_still_read() -> None:
    assert _sse(b"data: tail") == [Event("", "tail")]


def test_ndjson_is_one_event_per_line() -> None:
    parser = NdjsonParser()
    events = parser.feed(b'{"a": 1}\n\n{"a"') + parser.feed(b": 2}\r\n") + parser.close()
    assert events == [Event("", '{"a": 1}'), Event("", '{"a": 2}')]


@pytest.mark.parametrize(
    ("setting", "content_type", "kind"),
    [
        ("auto", "text/event-stream; charset=utf-8", "sse"),
        ("auto", "application/x-ndjson", "ndjson"),
        ("auto", "application/jsonl", "ndjson"),
        ("auto", "application/json", None),
        ("auto", None, None),
        ("sse", "application/json", "sse"),
        ("ndjson", "text/plain", "ndjson"),
        ("none", "text/event-stream", None),
    ],
)
def test_the_stream_kind(setting: str, content_type: str | None, kind: str | None) -> None:
    assert stream_kind(setting, content_type) == kind


def _assemble(mapping: ResponseMapping, events: list[Event]) -> Assembly:
    assembly = Assembly(mapping)
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


def test_openai_chunks_without_done_are_a_cut_stream() -> None:
    mapping = ResponseMapping(answer_delta="choices.0.delta.content")
    assembly = _assemble(mapping, [Event("", '{"choices": [{"delta": {"content": "Refu"}}]}')])
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(1 events, 4 characters\)$"):
        assembly.check_end()


def test_named_events_without_end_are_a_cut_stream() -> None:
    assembly = _assemble(ResponseMapping(answer_delta="answer"), [Event("data", '{"answer": "Re"}')])
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(1 events, 2 characters\)$"):
        assembly.check_end()


def test_an_unnamed_stream_with_no_end_marker_ends_at_close() -> None:
    assembly = _assemble(ResponseMapping(answer_delta="d"), [Event("", '{"d": "ok"}')])
    assembly.check_end()
    assert assembly.reply() == {"answer": "ok"}


def test_chat_completion_chunks_need_done_whatever_the_mapping() -> None:
    chunk = '{"object": "chat.completion.chunk", "text": "Hi"}'
    assembly = _assemble(ResponseMapping(answer_delta="text"), [Event("", chunk)])
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(1 events, 2 characters\)$"):
        assembly.check_end()
    done = _assemble(ResponseMapping(answer_delta="text"), [Event("", chunk), Event("", "[DONE]")])
    done.check_end()
    assert done.reply() == {"answer": "Hi"}


def test_openai_chunks_that_give_their_finish_reason_end_without_done() -> None:
    # hayhooks 2.1 closes after the finish_reason chunk and sends no `[DONE]`.
    mapping = ResponseMapping(answer_delta="choices.0.delta.content")
    events = [
        Event("", '{"object": "chat.completion.chunk", "choices": [{"delta": {"content": "Refunds"}}]}'),
        Event("", '{"object": "chat.completion.chunk", "choices": [{"delta": {}, "finish_reason": "stop"}]}'),
    ]
    assembly = _assemble(mapping, events)
    assembly.check_end()
    assert parse_reply(assembly.reply(), mapping, 1.0).answer == "Refunds"


def test_an_ndjson_error_line_is_an_error_event() -> None:
    parser = NdjsonParser()
    events = parser.feed(b'{"delta": "Re", "error": null}\n{"error": "model \\"m\\" not found"}\n') + parser.close()
    assert events == [
        Event("", '{"delta": "Re", "error": null}'),
        Event("error", '{"error": "model \\"m\\" not found"}'),
    ]
