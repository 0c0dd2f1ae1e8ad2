"""Replies read within their bounds, against loopback servers: a body's size cap, and streams (OpenAI chunks,
LangServe's named events, their faults, the idle timeout and the time to the first token)."""

from __future__ import annotations

import json
import time
from typing import Any

from ragjudge.endpoint.client import EndpointClient


def sse(data: Any, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n").encode()


def openai_chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


OPENAI = {"response": {"answer_delta": "choices.0.delta.content"}}
LANGSERVE = {
    "protocol": "langserve",
    "response": {
        "retrieved": "context",
        "retrieved_id": "metadata.source",
        "retrieved_text": "page_content",
    },
}
CONTEXT = [
    {"page_content": "Refunds are issued within 30 days.", "metadata": {"source": "doc-1"}, "type": "Document"},
    {"page_content": "Shipping is paid by the seller.", "metadata": {"source": "doc-2"}, "type": "Document"},
]


def openai_stream(*tokens: str, wait_first: float = 0.0, done: bool = True) -> list[bytes | float]:
    pieces: list[bytes | float] = [sse(openai_chunk(""))]  # the role chunk: no text
    if wait_first:
        pieces.append(wait_first)
    pieces += [sse(openai_chunk(t)) for t in tokens]
    if done:
        pieces += [sse(openai_chunk(None, "stop")), b"data: [DONE]\n\n"]
    return pieces


def langserve_stream(*tokens: str, end: bool = True) -> list[bytes | float]:
    pieces: list[bytes | float] = [
        sse({"run_id": "r-1"}, "metadata"),
        sse({"context": CONTEXT}, "data"),
        *(sse({"answer": t}, "data") for t in tokens),
        sse({"answer": ""}, "data"),
    ]
    if end:
        pieces.append(b"event: end\n\n")
    return pieces


def _client(make_client, url: str, **config: Any) -> EndpointClient:
    client: EndpointClient = make_client(url, retries=0, **config)
    return client


def test_an_openai_stream_is_assembled_and_timed(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(openai_stream("Refunds ", "take ", "30 days.")))
    result = _client(make_client, server.url, **OPENAI).call(make_case())
    assert result.error is None
    assert result.trace is not None
    assert result.trace.answer == "Refunds take 30 days."
    assert result.trace.passages == ()
    assert result.trace.ttft_ms is not None and 0 <= result.trace.ttft_ms <= result.trace.latency_ms


def test_a_json_reply_has_no_ttft(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.json({"answer": "ok", "retrieved": []}))
    result = _client(make_client, server.url, **OPENAI).call(make_case())
    assert result.trace is not None
    assert (result.trace.answer, result.trace.ttft_ms) == ("ok", None)


def test_stream_none_reads_an_event_stream_as_one_json_body(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(openai_stream("Hi")))
    result = _client(make_client, server.url, stream="none", **OPENAI).call(make_case())
    assert result.error == "endpoint error: reply is not valid JSON (text/event-stream, 464 bytes)"


def test_ndjson_by_content_type(serve, make_client, make_case) -> None:
    lines = [
        b'{"retrieved": [{"id": "doc-1", "text": "Refunds."}]}\n',
        b'{"delta": "Refunds "}\n',
        b'{"delta": "ok."}\n',
    ]
    server = serve(lambda ex: ex.stream(list(lines), content_type="application/x-ndjson"))
    result = _client(make_client, server.url, response={"answer_delta": "delta"}).call(make_case())
    assert result.trace is not None
    assert (result.trace.answer, result.trace.retrieved_ids) == ("Refunds ok.", ("doc-1",))


def test_an_ndjson_error_line_is_a_case_error_quoting_it(serve, make_client, make_case) -> None:
    lines = [b'{"delta": "Refunds "}\n', b'{"error": "model overloaded", "code": 503}\n']
    server = serve(lambda ex: ex.stream(list(lines), content_type="application/x-ndjson"))
    result = _client(make_client, server.url, response={"answer_delta": "delta"}).call(make_case())
    assert result.trace is None
    assert result.error == "endpoint error: the stream sent an error event: model overloaded"


def test_a_langserve_stream_reads_its_passages_from_the_first_data_event(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(langserve_stream("Refunds ", "within ", "30 days.")))
    result = _client(make_client, server.url, **LANGSERVE).call(make_case())
    assert result.error is None
    assert result.trace is not None
    assert result.trace.answer == "Refunds within 30 days."
    assert result.trace.retrieved_ids == ("doc-1", "doc-2")
    assert result.trace.passages[0].text == "Refunds are issued within 30 days."


def test_an_error_event_in_a_200_is_a_case_error_quoting_it(serve, make_client, make_case) -> None:
    pieces = [
        sse({"run_id": "r-1"}, "metadata"),
        sse({"answer": "Refu"}, "data"),
        sse({"status_code": 500, "message": "Internal Server Error"}, "error"),
    ]
    server = serve(lambda ex: ex.stream(pieces))
    result = _client(make_client, server.url, **LANGSERVE).call(make_case())
    assert result.trace is None
    assert result.error == "endpoint error: the stream sent an error event: Internal Server Error"


def test_an_openai_stream_cut_before_done_is_an_exact_error(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(openai_stream("Refunds ", "take", done=False)))
    result = _client(make_client, server.url, protocol="openai-chat").call(make_case())
    assert result.trace is None
    assert result.error == "endpoint error: stream ended before its end (3 events, 12 characters)"


def test_an_undeclared_openai_stream_ends_at_its_close_and_says_what_it_looks_like(
    serve, make_client, make_case
) -> None:
    server = serve(lambda ex: ex.stream(openai_stream("Refunds ", "take", done=False)))
    result = _client(make_client, server.url, **OPENAI).call(make_case())
    assert result.error is None and result.trace is not None and result.trace.stream is not None
    assert result.trace.answer == "Refunds take"
    assert (result.trace.stream.protocol, result.trace.stream.suggestion) == ("generic", "openai-chat")
    assert result.trace.stream.looks_like == "OpenAI Chat Completions chunks"


def test_a_named_event_stream_cut_before_end_is_an_exact_error(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(langserve_stream("Refunds", end=False)))
    result = _client(make_client, server.url, **LANGSERVE).call(make_case())
    assert result.error == "endpoint error: stream ended before its end (4 events, 7 characters)"


def test_a_non_json_event_names_its_number(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream([sse(openai_chunk("a")), b"data: oops {\n\n", b"data: [DONE]\n\n"]))
    result = _client(make_client, server.url, **OPENAI).call(make_case())
    assert result.error == "endpoint error: stream event 2 is not valid JSON"


def test_a_stall_past_the_idle_timeout_is_a_timeout_within_bound(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream([sse(openai_chunk("Refunds ")), 5.0, b"data: [DONE]\n\n"]))
    started = time.monotonic()
    result = _client(make_client, server.url, idle_timeout_s=0.5, timeout_s=10, **OPENAI).call(make_case())
    elapsed = time.monotonic() - started
    assert result.error == "endpoint error: idle timeout: no bytes for 0.5 s (endpoint.idle_timeout_s, 1 attempt)"
    assert 0.4 < elapsed < 1.5


def test_timeout_s_bounds_a_stream_that_keeps_sending(serve, make_client, make_case) -> None:
    pieces: list[bytes | float] = []
    for _ in range(40):
        pieces += [sse(openai_chunk("x")), 0.1]
    server = serve(lambda ex: ex.stream(pieces))
    started = time.monotonic()
    result = _client(make_client, server.url, idle_timeout_s=1, timeout_s=0.8, **OPENAI).call(make_case())
    assert result.error == "endpoint error: timeout after 0.8 s (1 attempt)"
    assert time.monotonic() - started < 2.0


def test_max_response_bytes_bounds_the_whole_stream(serve, make_client, make_case) -> None:
    server = serve(lambda ex: ex.stream(openai_stream(*(["word "] * 50))))
    result = _client(make_client, server.url, max_response_bytes=2000, **OPENAI).call(make_case())
    assert result.error == "endpoint error: reply over 2000 bytes"


def test_ttft_is_the_wait_for_the_first_token(serve, make_client, make_case) -> None:
    tail: list[bytes | float] = [0.2, sse(openai_chunk("done.")), sse(openai_chunk(None, "stop")), b"data: [DONE]\n\n"]
    server = serve(
        lambda ex: ex.stream([*openai_stream("", wait_first=0.2, done=False)[:2], sse(openai_chunk("Hi ")), *tail])
    )
    result = _client(make_client, server.url, **OPENAI).call(make_case())
    assert result.trace is not None
    assert result.trace.answer == "Hi done."
    assert result.trace.ttft_ms is not None
    assert 200 <= result.trace.ttft_ms <= 250
    assert result.trace.latency_ms >= 400


# --- size cap ------------------------------------------------------------------------------------


def test_oversized_body_with_content_length(serve, make_client, make_case):
    body = json.dumps({"answer": "x" * 200})
    server = serve(lambda ex: ex.send(200, body))
    result = make_client(server.url, max_response_bytes=100, retries=2).call(make_case())

    assert result.error == "endpoint error: reply over 100 bytes"
    assert result.attempts == 1
    assert len(server.requests) == 1


def test_body_of_exactly_the_cap_is_accepted(serve, make_client, make_case):
    body = json.dumps({"answer": "y" * 20}).encode()
    server = serve(lambda ex: ex.send(200, body))
    result = make_client(server.url, max_response_bytes=len(body)).call(make_case())
    assert result.error is None
    assert result.trace is not None
    assert result.trace.answer == "y" * 20
    over = make_client(server.url, max_response_bytes=len(body) - 1).call(make_case())
    assert over.error == f"endpoint error: reply over {len(body) - 1} bytes"


def test_oversized_chunked_body_without_content_length(serve, make_client, make_case):
    server = serve(lambda ex: ex.chunked([b'{"answer": "', b"z" * 80, b"z" * 80, b'"}']))
    result = make_client(server.url, max_response_bytes=100).call(make_case())

    assert result.error == "endpoint error: reply over 100 bytes"
    assert result.attempts == 1


def test_chunked_body_under_the_cap_is_read_whole(serve, make_client, make_case):
    server = serve(lambda ex: ex.chunked([b'{"answer": ', b'"chunked ', b'reply"}']))
    result = make_client(server.url, max_response_bytes=100).call(make_case())
    assert result.error is None
    assert result.trace is not None
    assert result.trace.answer == "chunked reply"
