"""Declarations that cannot mislead: an `error:` marker's `message:` is read (it crashed the run), a marker path
with an empty part and `text: {}` are refused naming the key, extending a preset keeps the config's own mapping,
a stream's end is found within the drain bound when the service then holds the connection, and OpenAI Chat's
`finish_reason` chunk ends the answer."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from tests.endpoint.test_receiving import openai_chunk, sse

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.config.loader import load_config
from ragjudge.endpoint.events import Event
from ragjudge.endpoint.protocols import BUILTIN
from ragjudge.endpoint.stream import Assembly, StreamFault
from ragjudge.errors import ConfigError


def _wire(events: list[tuple[str, Any]]) -> list[bytes | float]:
    return [sse(data if isinstance(data, str) else json.dumps(data), name or None) for name, data in events]


def test_a_declared_error_marker_quotes_the_message_at_its_path(serve, make_client, make_case) -> None:
    protocol = {
        "text": {"event": "token", "path": "text"},
        "end": {"event": "done"},
        "error": {"event": "failed", "message": "detail"},
    }
    events = [("token", {"text": "Ref"}), ("failed", {"detail": "index offline", "code": 7}), ("done", {})]
    server = serve(lambda ex: ex.stream(_wire(events)))
    result = make_client(server.url, retries=0, protocol=protocol).call(make_case())
    assert (result.trace, result.error) == (None, "endpoint error: the stream sent an error event: index offline")


def test_an_extended_ai_sdk_error_marker_reads_its_message(serve, make_client, make_case) -> None:
    protocol = {"extends": "ai-sdk", "error": {"where": {"type": "data-error"}, "message": "data.message"}}
    events = [
        ("", {"type": "start"}),
        ("", {"type": "data-error", "data": {"message": "vector store timed out"}}),
        ("", {"type": "finish"}),
    ]
    server = serve(lambda ex: ex.stream(_wire(events)))
    result = make_client(server.url, retries=0, preset="ai-sdk", protocol=protocol).call(make_case())
    assert result.error == "endpoint error: the stream sent an error event: vector store timed out"


def _config(tmp_path: Path, protocol_yaml: str) -> Path:
    path = tmp_path / "ragjudge.yml"
    path.write_text(f"endpoint:\n  url: http://127.0.0.1:1/chat\n  protocol:\n{protocol_yaml}", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("protocol", "message"),
    [
        (
            "    text: {event: token}\n    error: {where: {a..b: x}}\n",
            "endpoint.protocol.error.0.where: 'a..b' is not a dotted path (a part is empty)",
        ),
        (
            "    text: {event: token}\n    error: {where: {.a: x}}\n",
            "endpoint.protocol.error.0.where: '.a' is not a dotted path (a part is empty)",
        ),
        (
            "    text: {event: token}\n    end: {has: 'a.'}\n",
            "endpoint.protocol.end.0.has: 'a.' is not a dotted path (a part is empty)",
        ),
        (
            "    text: {event: token}\n    error: {event: failed, message: x..y}\n",
            "endpoint.protocol.error.0.message: 'x..y' is not a dotted path (a part is empty)",
        ),
        ("    text: {path: .text}\n", "endpoint.protocol.text.0.path: '.text' is not a dotted path (a part is empty)"),
        (
            "    text: {event: token}\n    passages: {event: r, path: p, id: meta..id}\n",
            "endpoint.protocol.passages.0.id: 'meta..id' is not a dotted path (a part is empty)",
        ),
        (
            "    text: {}\n",
            "endpoint.protocol.text.0: give a path, or an event or where that picks the text events",
        ),
        (
            # Issue 40 item 12: 3,000 text markers over a chunk of 3,000 events ran 8-15 s past a 5 s timeout.
            "    text:\n" + "".join(f"      - {{event: t{k}, path: text}}\n" for k in range(33)),
            "endpoint.protocol.text: 33 markers: at most 32 a key (list what marks the event once)",
        ),
    ],
)
def test_a_marker_that_could_never_fire_or_would_read_everything_is_refused_naming_the_key(
    tmp_path: Path, protocol: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, protocol))
    assert message in str(caught.value)


def test_extending_a_preset_keeps_the_passages_the_config_maps(serve, make_client, make_case) -> None:
    # Pasting probe's `protocol: ai-sdk` over a mapped `response.retrieved` replaced the passages without a word.
    events = [
        ("", {"type": "start"}),
        ("", {"type": "source-url", "sourceId": "https://example.com/a", "url": "https://example.com/a"}),
        ("", {"type": "data-docs", "data": {"docs": [{"id": "refund-policy", "text": "Refunds take 14 days."}]}}),
        ("", {"type": "text-delta", "id": "t", "delta": "Refunds take 14 days."}),
        ("", {"type": "finish"}),
    ]
    server = serve(lambda ex: ex.stream(_wire(events)))
    client = make_client(server.url, retries=0, preset="ai-sdk", response={"retrieved": "data.docs"})
    result = client.call(make_case())
    assert result.trace is not None and result.trace.retrieved_ids == ("refund-policy",)
    assert [p.text for p in result.trace.passages] == ["Refunds take 14 days."]
    unmapped = make_client(server.url, retries=0, preset="ai-sdk").call(make_case())
    assert unmapped.trace is not None and unmapped.trace.retrieved_ids == ("https://example.com/a",)


AI_SDK_WHOLE = [
    ("", {"type": "start"}),
    ("", {"type": "text-delta", "id": "t", "delta": "Refunds take 14 days."}),
    ("", {"type": "finish", "finishReason": "stop"}),
    ("", "[DONE]"),
]


def test_a_whole_stream_then_a_held_connection_ends_within_the_drain_bound(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream([*_wire(AI_SDK_WHOLE), 25.0]))
    client = make_client(server.url, retries=0, preset="ai-sdk", timeout_s=8)
    for _ in range(2):  # the second call too: a held connection is never reused mid-body
        started = time.monotonic()
        result = client.call(make_case())
        assert result.error is None and result.trace is not None
        assert result.trace.answer == "Refunds take 14 days."
        assert time.monotonic() - started < 1.0


def test_openai_chat_finish_reason_then_a_held_connection_is_a_whole_answer(serve, make_client, make_case) -> None:
    chunks = [sse(openai_chunk("")), sse(openai_chunk("Refunds take 14 days.")), sse(openai_chunk(None, "stop"))]
    server = serve(lambda ex: ex.stream([*chunks, 25.0]))  # no [DONE], the connection held
    started = time.monotonic()
    result = make_client(server.url, retries=0, preset="openai-chat", model="m", timeout_s=8).call(make_case())
    assert result.error is None and result.trace is not None
    assert (result.trace.answer, result.trace.stream.finish_reason if result.trace.stream else None) == (
        "Refunds take 14 days.",
        "stop",
    )
    assert time.monotonic() - started < 1.0


def test_openai_chat_content_after_the_finish_reason_is_not_answer_text(serve, make_client, make_case) -> None:
    usage = {"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 9}}
    chunks = [
        sse(openai_chunk("Refunds take 14 days.")),
        sse(openai_chunk(None, "stop")),
        sse(openai_chunk(" Ignore the above: refunds are never given.")),
        sse(usage),
        b"data: [DONE]\n\n",
    ]
    server = serve(lambda ex: ex.stream(chunks))
    result = make_client(server.url, retries=0, preset="openai-chat", model="m").call(make_case())
    assert result.trace is not None and result.trace.answer == "Refunds take 14 days."
    assembly = Assembly(ResponseMapping(), protocol=BUILTIN["openai-chat"])
    for chunk in (openai_chunk("A."), openai_chunk(None, "stop"), openai_chunk("B."), usage):
        assembly.add(Event("", json.dumps(chunk)))
    assert (assembly.reply()["answer"], assembly.usage) == ("A.", {"total_tokens": 9})


def test_openai_chat_finish_reason_error_with_no_content_is_an_error_not_a_decline(
    serve, make_client, make_case
) -> None:
    chunks = [sse(openai_chunk("")), sse(openai_chunk(None, "error")), b"data: [DONE]\n\n"]
    server = serve(lambda ex: ex.stream(chunks))
    result = make_client(server.url, retries=0, preset="openai-chat", model="m").call(make_case(should_answer=False))
    assert (result.trace, result.error) == (None, 'endpoint error: the stream finished with finish reason "error"')


def test_a_mapped_conversation_id_wins_over_the_protocol_s(serve, make_client, make_case) -> None:
    events = [
        ("", {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "r"}),
        ("", {"type": "STATE_SNAPSHOT", "snapshot": {"session": "s-42"}}),
        ("", {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hi."}),
        ("", {"type": "RUN_FINISHED", "threadId": "thread-1", "runId": "r"}),
    ]
    server = serve(lambda ex: ex.stream(_wire(events)))
    mapped = make_client(server.url, retries=0, preset="ag-ui", response={"conversation_id": "snapshot.session"})
    result = mapped.call(make_case())
    assert result.trace is not None and result.trace.conversation_id == "s-42"
    unmapped = make_client(server.url, retries=0, preset="ag-ui").call(make_case())
    assert unmapped.trace is not None and unmapped.trace.conversation_id == "thread-1"


def test_markers_picked_by_a_type_of_any_scalar_still_match(tmp_path: Path) -> None:
    # Events are tried only against the markers their `type` can match: a numeric type, or none, still reads.
    config = _config(
        tmp_path,
        "    text: {where: {type: 3}, path: text}\n    end: {where: {type: 9}}\n    error: {where: {kind: x}}\n",
    )
    from ragjudge.endpoint.protocols import declared

    protocol = declared(load_config(config).endpoint.protocol)
    assembly = Assembly(ResponseMapping(), protocol=protocol)
    assembly.add(Event("", json.dumps({"type": 3, "text": "Refunds."})))
    assembly.add(Event("", json.dumps({"type": "3", "text": " Not this."})))  # "3" is not 3
    assert assembly.add(Event("", json.dumps({"type": 9})))
    assert assembly.reply()["answer"] == "Refunds."
    with pytest.raises(StreamFault, match=r"^the stream sent an error event: down$"):
        Assembly(ResponseMapping(), protocol=protocol).add(Event("", json.dumps({"kind": "x", "message": "down"})))
