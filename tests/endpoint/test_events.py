"""Streamed replies on the wire, bytes to events: SSE per the HTML standard, NDJSON, and which one a reply is."""

from __future__ import annotations

import pytest

from ragjudge.endpoint.events import Event, NdjsonParser, SseParser, stream_kind


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


def test_a_crlf_ending_one_chunk_with_the_next_data_line_in_the_next_chunk_is_one_event() -> None:
    assert _sse(b"data: a\r", b"\ndata: b\r\n\r\n") == [Event("", "a\nb")]


def test_an_ndjson_last_line_without_its_newline_is_kept() -> None:
    parser = NdjsonParser()
    assert parser.feed(b'{"d": "a"}\n{"d": "b"}') == [Event("", '{"d": "a"}')]
    assert parser.close() == [Event("", '{"d": "b"}')]


def test_a_byte_order_mark_at_the_start_is_dropped() -> None:
    assert _sse('\ufeffdata: {"answer": "ok"}\n\n'.encode()) == [Event("", '{"answer": "ok"}')]
    parser = NdjsonParser()
    assert parser.feed(b"\xef\xbb") + parser.feed(b'\xbf{"d": 1}\n') == [Event("", '{"d": 1}')]


# Decisions a mutation sample of the reader left unpinned (bench/mutation.py --module endpoint/events.py; the
# parsers were then in endpoint/stream.py).


def test_a_blank_line_opening_the_next_chunk_still_ends_the_event_before_it() -> None:
    assert _sse(b"data: a\n", b"\ndata: b\n\n") == [Event("", "a"), Event("", "b")]


def test_more_blank_lines_after_an_event_dispatch_nothing_more() -> None:
    assert _sse(b"data: a\n\n\n\ndata: b\n\n") == [Event("", "a"), Event("", "b")]


def test_only_the_first_chunk_may_lose_a_byte_order_mark() -> None:
    parser = SseParser()
    events = parser.feed(b"data: a") + parser.feed("\ufeffb\n\n".encode()) + parser.close()
    assert events == [Event("", "a\ufeffb")]


def test_a_stream_opening_with_a_blank_line_dispatches_nothing_for_it() -> None:
    assert _sse(b"\ndata: a\n\n") == [Event("", "a")]
