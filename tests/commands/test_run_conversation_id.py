"""`ragjudge run` against a stateful service whose conversation ids are long: an id is carried to the next turn
whole up to 8,192 characters (`endpoint.reply.MAX_CONVERSATION_ID_CHARS`), so a session token of 1,205
characters is not cut, and a longer id is that turn's error naming the bound, never an id silently cut (a cut id
names another conversation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.endpoint.test_receiving import sse
from tests.fakes.responder_server import Exchange, ResponderServer

Q1 = "How do I return my headphones?"
Q2 = "And who pays the shipping?"
A1 = "Returns are accepted within 15 days of delivery."
A2 = "The seller pays the shipping for a faulty item."
SESSION = "sess." + "".join(f"{i % 10}" for i in range(1200))
"""A session token of 1,205 characters, as some services issue for a conversation."""
ENDPOINT_BODY = '{"message": {{ question | tojson }}, "conversation_id": {{ conversation_id | tojson }}}'
CASES: list[dict[str, Any]] = [{"id": "returns", "turns": [{"question": Q1}, {"question": Q2}]}]


class Stateful:
    """Issues `issued` on turn 1, and answers turn 2 only when the request carries that id whole."""

    def __init__(self, issued: str, streamed: bool) -> None:
        self.issued = issued
        self.streamed = streamed
        self.carried: list[Any] = []

    def __call__(self, ex: Exchange) -> None:
        body = ex.request.json()
        self.carried.append(body["conversation_id"])
        if body["conversation_id"] is None:
            answer = A1
        elif body["conversation_id"] == self.issued:
            answer = A2
        else:
            answer = "I do not know that conversation."
        reply = {"answer": answer, "retrieved": [], "conversation_id": self.issued}
        if not self.streamed:
            ex.json(reply)
            return
        events = [sse({"text": answer}, "token"), sse({"conversation_id": self.issued}, "done")]
        ex.stream([*events, b"event: end\ndata:\n\n"])


STREAMED = {
    "protocol": {
        "text": {"event": "token", "path": "text"},
        "conversation_id": {"event": "done", "path": "conversation_id"},
        "end": {"event": "end"},
    },
}


@pytest.fixture(params=["json", "streamed"])
def streamed(request: pytest.FixtureRequest) -> bool:
    return request.param == "streamed"


def _run(ws: Path, capsys: pytest.CaptureFixture[str], service: Stateful) -> tuple[int, dict[str, Any], str]:
    endpoint: dict[str, Any] = {"body": ENDPOINT_BODY, **(STREAMED if service.streamed else {})}
    with ResponderServer(service) as server:
        write_config(ws, server.url, CASES, case_rules={"latency_ms": "<= 10000"}, endpoint=endpoint)
        outcome = run(capsys, "run", "--report", "report.json", "--junit", "junit.xml")
    return outcome.code, load(ws / "report.json"), outcome.out + outcome.err


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def test_a_1205_character_session_id_is_carried_whole_to_turn_2(
    ws: Path, capsys: pytest.CaptureFixture[str], streamed: bool
) -> None:
    assert len(SESSION) == 1205
    service = Stateful(SESSION, streamed)
    code, report, out = _run(ws, capsys, service)
    assert code == 0, out
    assert service.carried == [None, SESSION]
    chat = by_id(report)["returns"]
    assert [(t["status"], t["trace"]["answer"]) for t in chat["turns"]] == [("pass", A1), ("pass", A2)]
    assert [t["trace"]["conversation_id"] for t in chat["turns"]] == [SESSION, SESSION]


def test_an_id_at_the_bound_is_carried_whole(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    issued = "c" * 8192
    service = Stateful(issued, streamed=False)
    code, _, out = _run(ws, capsys, service)
    assert code == 0, out
    assert service.carried == [None, issued]


def test_an_id_over_the_bound_errors_its_turn_naming_the_bound_and_the_outputs_are_written(
    ws: Path, capsys: pytest.CaptureFixture[str], streamed: bool
) -> None:
    service = Stateful("x" * 9000, streamed)
    code, report, out = _run(ws, capsys, service)
    reason = (
        "endpoint error: the conversation id is 9,000 characters, over the 8,192 ragjudge carries "
        "(endpoint.response.conversation_id, read at conversation_id): an id is never cut, a cut one names "
        "another conversation"
    )
    # The only case errored: the verdict is error, and every output is still written.
    assert code == 3, out
    assert report["verdict"] == "error"
    assert service.carried == [None]  # turn 2 was never asked with a cut id
    chat = by_id(report)["returns"]
    not_asked = "not evaluated: turn 1 got no reply, and this turn follows it"
    assert chat["failed_conditions"] == [f"turn 1: {reason}", f"turns 2 to 2: {not_asked}"]
    assert [(t["status"], t["failed_conditions"]) for t in chat["turns"]] == [
        ("error", [reason]),
        ("not evaluated", [not_asked]),
    ]
    assert "x" * 100 not in json.dumps(report)
    assert (ws / "junit.xml").read_text(encoding="utf-8").count("the conversation id is 9,000 characters") >= 1
