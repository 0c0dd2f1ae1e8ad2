"""`ragjudge probe` on an AG-UI stream from an empty config (only the URL): recognised by its `type` field, its
first suggestion `preset: ag-ui`, its tool calls shown apart from the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.probing import configure, probe
from tests.endpoint.test_ag_ui import HEALTHY
from tests.fakes.raw_server import RawServer, http_reply


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _reply(_request: bytes) -> bytes:
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in HEALTHY).encode()
    return http_reply(body, content_type="text/event-stream")


def test_an_ag_ui_stream_s_first_suggestion_is_the_preset(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RawServer(_reply) as server:
        configure(ws, server.url)
        code, out, _err = probe(capsys)
    lines = out.splitlines()
    assert (
        "stream: 18 events, read by protocol none declared: no answer_delta mapped: each event's answer, or a text "
        "stream's data, ending at the close"
    ) in lines
    at = lines.index("suggested first: paste under `endpoint:` in your config, then probe again")
    assert lines[at - 1].startswith("the events look like AG-UI events, but endpoint.protocol is not declared")
    assert lines[at + 1] == "  preset: ag-ui"
    assert "  tool calls: 2 (never part of the answer)" in lines
    assert '    2. lookup_order {"order_id": "A123"}' in lines
    assert code == 1, out


def test_with_the_preset_the_stream_maps_cleanly(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RawServer(_reply) as server:
        configure(ws, server.url, preset="ag-ui")
        code, out, _err = probe(capsys)
    assert "\nstream: 18 events, read by protocol ag-ui\n" in out
    assert '  answer: "Refunds take 14 days."' in out
    assert "result: the reply maps cleanly" in out
    assert code == 0, out


def test_with_its_own_body_it_keeps_the_body_and_never_suggests_answer_for_a_stream(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RawServer(_reply) as server:
        configure(ws, server.url, body='{"q": {{ question | tojson }}}')
        _code, out, _err = probe(capsys)
    lines = out.splitlines()
    at = lines.index("suggested first: paste under `endpoint:` in your config, then probe again")
    assert lines[at + 1] == "  protocol: ag-ui"
    assert (
        "  answer: nothing (tried answer): for a stream, map answer_delta to where each event carries its piece of "
        "the answer, or declare the stream's protocol (above)"
    ) in lines
    assert "    answer: " not in out  # no `response: {answer: ...}` to paste
