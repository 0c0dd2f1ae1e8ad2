"""A declared protocol without an `end`, in `ragjudge run` and `ragjudge probe`: one warning each (a cut stream
cannot be told from a whole one), and probe proposes the end marker from the events it saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.probing import configure, probe
from tests.commands.test_run_end_to_end import load, run, write_config
from tests.fakes.raw_server import RawServer, http_reply

NO_END = (
    "endpoint.protocol declares no end: without one a stream cut before it finished cannot be told from a whole "
    "one, and reads as a shorter answer (or an empty one, a decline); declare `end:`, the event your stream ends "
    "with (`ragjudge probe` proposes one from the events it sees)"
)


def _named(events: list[tuple[str, dict[str, str]]]) -> bytes:
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
    return http_reply(body, content_type="text/event-stream")


STREAM = [("token", {"text": "Refunds take "}), ("token", {"text": "30 days."}), ("done", {"id": "c-1"})]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def test_run_warns_once_about_a_declared_protocol_without_an_end(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": f"c{i}", "question": f"How long do refunds take ({i})?"} for i in range(3)]
    with RawServer(lambda _request: _named(STREAM)) as server:
        write_config(ws, server.url, cases, endpoint={"protocol": {"text": {"event": "token", "path": "text"}}})
        outcome = run(capsys, "run", "--report", "report.json")
    report = load(ws / "report.json")
    assert report["warnings"].count(NO_END) == 1, report["warnings"]
    assert outcome.code in (0, 1)


def test_run_says_nothing_when_the_end_is_declared(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    protocol = {"text": {"event": "token", "path": "text"}, "end": {"event": "done"}}
    with RawServer(lambda _request: _named(STREAM)) as server:
        write_config(ws, server.url, [{"id": "c", "question": "Refunds?"}], endpoint={"protocol": protocol})
        run(capsys, "run", "--report", "report.json")
    assert NO_END not in load(ws / "report.json")["warnings"]


@pytest.mark.parametrize(
    ("events", "proposed"),
    [
        (STREAM, "end: {event: done}"),
        (
            [("", {"type": "TEXT", "text": "Refunds take 30 days."}), ("", {"type": "DONE"})],
            "end: {where: {type: DONE}}",
        ),
    ],
)
def test_probe_warns_and_proposes_the_end_marker_from_the_last_event(
    ws: Path, capsys: pytest.CaptureFixture[str], events: list[tuple[str, dict[str, str]]], proposed: str
) -> None:
    def reply(_request: bytes) -> bytes:
        body = "".join((f"event: {n}\n" if n else "") + f"data: {json.dumps(d)}\n\n" for n, d in events)
        return http_reply(body.encode(), content_type="text/event-stream")

    with RawServer(reply) as server:
        configure(ws, server.url, protocol={"text": {"path": "text"}})
        code, out, _err = probe(capsys)
    lines = out.splitlines()
    assert f"warning: {NO_END}" in lines
    at = lines.index("suggested: add under `endpoint.protocol:` (the last event this stream sent), then probe again")
    assert lines[at + 1] == f"  {proposed}"
    assert code == 1, out
