"""`ragjudge probe` on a streamed reply (`commands/probe_stream.py`): assembled, its protocol named, the preset or
declared protocol to paste first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.commands.probing import configure, probe
from tests.fakes.raw_server import RawServer, http_reply

TOKEN = "tok-probe-s3cr3t-77"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _sse_reply(events: list[str]) -> bytes:
    body = "".join(f"data: {e}\n\n" for e in events).encode()
    return http_reply(body, content_type="text/event-stream")


def test_a_streamed_reply_is_shown_assembled_and_mapped(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chunks = [
        json.dumps({"object": "chat.completion.chunk", "choices": [{"delta": {"content": t}}]})
        for t in ("Refunds ", "take 30 days.")
    ]
    with RawServer(lambda _request: _sse_reply([*chunks, "[DONE]"])) as server:
        configure(ws, server.url, protocol="openai-chat")
        code, out, _err = probe(capsys)
    assert "assembled from the stream's events" in out
    assert "\nstream: 3 events, read by protocol openai-chat\n  time to the first token: " in out
    assert '  answer: "Refunds take 30 days."' in out
    assert (
        "  passages: unknown (none in the reply, and endpoint.response.retrieved is not mapped: retrieval metrics "
        "and faithfulness will be null; map it if the service sends them)"
    ) in out.splitlines()
    assert code == 0, out


def test_an_undeclared_stream_s_first_suggestion_is_the_preset_that_reads_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = [
        json.dumps({"object": "chat.completion.chunk", "choices": [{"delta": {"content": t}}]})
        for t in ("Refunds ", "take 30 days.")
    ]
    with RawServer(lambda _request: _sse_reply([*chunks, "[DONE]"])) as server:
        configure(ws, server.url, response={"answer_delta": "choices.0.delta.content"})
        code, out, _err = probe(capsys)
    lines = out.splitlines()
    at = lines.index("suggested first: paste under `endpoint:` in your config, then probe again")
    assert lines[at - 1 : at + 3] == [
        "the events look like OpenAI Chat Completions chunks, but endpoint.protocol is not declared: read without "
        "it, a failure the stream reports its own way, or a cut before its end, would read as an answer",
        "suggested first: paste under `endpoint:` in your config, then probe again",
        "  preset: openai-chat",
        "  model: <the model; for hayhooks, the pipeline's name>",
    ]
    assert at < lines.index("mapping (endpoint.response)")  # before any mapping key
    assert "  warning: the stream's protocol is not declared (preset: openai-chat reads it)" in lines
    assert lines[-1] == "result: the reply maps, with the warnings above"
    assert code == 1


def test_a_cut_stream_is_an_endpoint_error_in_probe(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chunk = json.dumps({"object": "chat.completion.chunk", "choices": [{"delta": {"content": "Refu"}}]})
    with RawServer(lambda _request: _sse_reply([chunk])) as server:
        configure(ws, server.url, protocol="openai-chat")
        code, out, _err = probe(capsys)
    assert "\nresult: endpoint error: stream ended before its end (1 events, 4 characters)\n" in out
    assert code == 1


def _langserve_stream(_request: Any) -> bytes:
    events = [
        ("metadata", {"run_id": "r-1"}),
        ("data", {"context": [{"page_content": "Refunds take 30 days.", "metadata": {"source": "doc-1"}}]}),
    ]
    events += [("data", {"answer": t}) for t in ("Refunds ", "take ", "30 days.", "")]
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events) + "event: end\n\n"
    return http_reply(body.encode(), content_type="text/event-stream")


def test_a_langserve_stream_read_as_invoke_s_reply_gets_the_langserve_preset_first(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `answer: output.answer` is /invoke's shape; on /stream it reads nothing. The first word is the preset.
    with RawServer(_langserve_stream) as server:
        configure(
            ws,
            server.url + "/rag/stream",
            body='{"input": {"question": {{ question | tojson }}}}',
            response={"answer": "output.answer"},
        )
        code, out, _ = probe(capsys)
    lines = out.splitlines()
    at = lines.index("suggested first: paste under `endpoint:` in your config, then probe again")
    assert lines[at - 1].startswith("the events look like LangServe events, but endpoint.protocol is not declared")
    assert lines[at + 1] == "  protocol: langserve"  # the team's own body stays
    assert code == 1


def test_named_events_of_no_known_protocol_get_a_declared_protocol_to_paste(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        ("retrieval", {"passages": []}),
        ("token", {"text": "Refunds "}),
        ("token", {"text": "ok."}),
        ("done", {"conversation_id": "c-1"}),
    ]
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
    with RawServer(lambda _request: http_reply(body, content_type="text/event-stream")) as server:
        configure(ws, server.url, response={"answer_delta": "text"})
        code, out, _ = probe(capsys)
    lines = out.splitlines()
    at = lines.index("suggested first: paste under `endpoint:` in your config, then probe again")
    assert lines[at - 1].startswith("the events look like named events (retrieval, token, done), but")
    assert lines[at + 1 : at + 5] == [
        "  protocol:",
        "    text: {event: token, path: text}",
        "    end: {event: done}",
        "    error: {event: error}",
    ]
    assert '  answer: "Refunds ok."' in lines  # read meanwhile, to the close
    assert code == 1
