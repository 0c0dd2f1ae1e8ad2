"""The conversation examples of docs/conversations.md, run as written: examples/chat-openai.yml (the openai-chat preset,
stateless, streamed) and examples/chat-stateful.yml (named events and a conversation id) against the example
service's chat routes, and the same routes answering each turn as if it were the first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml
from tests.examples.test_rag_service import _load_service

from ragjudge.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server, url = _load_service().serve_in_thread()
    try:
        yield url.removesuffix("/ask")
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("config", ["chat-openai.yml", "chat-stateful.yml"])
def test_the_example_conversations_pass_with_every_turn_timed(
    config: str, base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAG_URL", base_url)
    report = tmp_path / "report.json"
    code = main(["run", "--config", str(EXAMPLES / config), "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(report.read_text(encoding="utf-8"))
    cases = {c["id"]: c for c in data["cases"]}
    assert {cid: c["status"] for cid, c in cases.items()} == {
        "conv-quality-return": "pass",
        "conv-return-then-off-topic": "pass",
        "invoice-email": "pass",
    }
    follow_up = cases["conv-quality-return"]["turns"][1]
    assert "商家承担" in follow_up["trace"]["answer"] and follow_up["trace"]["retrieved_ids"][0] == "doc-refund-3"
    declined = cases["conv-return-then-off-topic"]["turns"][1]
    assert (declined["status"], declined["trace"]["refused"]) == ("pass", True)
    turns = [t for c in cases.values() for t in (c["turns"] or [c])]
    assert len(turns) == 5 and all(t["trace"]["ttft_ms"] is not None for t in turns)


def test_without_the_conversation_so_far_the_follow_up_is_declined(base_url: str) -> None:
    # What a forgetful client gets, and why turn 2 needs turn 1: the follow-up alone finds too little.
    alone = requests.post(f"{base_url}/ask", json={"question": "那运费谁出？"}, timeout=10).json()
    history = [{"role": "user", "content": "我想退货，耳机有质量问题"}, {"role": "assistant", "content": "..."}]
    carried = requests.post(f"{base_url}/ask", json={"question": "那运费谁出？", "history": history}, timeout=10)
    assert alone["refused"] is True
    assert "商家承担" in carried.json()["answer"]


def test_the_stateful_route_names_a_conversation_and_remembers_it(base_url: str) -> None:
    first = requests.post(f"{base_url}/chat", json={"message": "我想退货，耳机有质量问题", "conversation_id": None})
    done = [line for line in first.text.splitlines() if line.startswith('data: {"conversation_id"')]
    conversation = json.loads(done[0].removeprefix("data: "))["conversation_id"]
    second = requests.post(f"{base_url}/chat", json={"message": "那运费谁出？", "conversation_id": conversation})
    lines = second.text.splitlines()
    tokens = [
        json.loads(lines[i + 1].removeprefix("data: "))["text"] for i, x in enumerate(lines) if x == "event: token"
    ]
    assert "商家承担" in "".join(tokens)
    # Its last event is `done`: no LangServe `end` follows.
    assert second.text.rstrip().splitlines()[-2] == "event: done"


def test_the_stateful_route_ending_in_done_passes_with_no_stream_config_and_a_declared_end_it_never_sends_is_a_cut(
    base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = yaml.safe_load((EXAMPLES / "chat-stateful.yml").read_text(encoding="utf-8"))
    cases = str((EXAMPLES / "cases" / "conversations.yaml").resolve())
    endpoint = {
        "url": f"{base_url}/chat",
        "body": config["endpoint"]["body"],
        "response": {"answer_delta": "text", "retrieved": "passages"},  # no protocol: read to the close
    }
    path = tmp_path / "ragjudge.yml"
    path.write_text(yaml.safe_dump({**config, "endpoint": endpoint, "cases": [cases]}), encoding="utf-8")
    code = main(["run", "--config", str(path), "--report", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert {c["status"] for c in data["cases"]} == {"pass"}
    assert {t["trace"]["protocol"] for c in data["cases"] for t in (c["turns"] or [c])} == {"generic"}
    # Declared with an end the service never sends (`end` is LangServe's; this one ends with `done`): every reply is
    # a cut stream, never its text.
    declared = {**config["endpoint"], "url": f"{base_url}/chat"}
    declared["protocol"] = {**declared["protocol"], "end": {"event": "end"}}
    path.write_text(yaml.safe_dump({**config, "endpoint": declared, "cases": [cases]}), encoding="utf-8")
    code = main(["run", "--config", str(path), "--report", str(tmp_path / "r.json")])
    capsys.readouterr()
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    reasons = {c["failed_conditions"][0].split(" (")[0] for c in data["cases"]}
    assert reasons == {
        "turn 1: endpoint error: stream ended before its end",
        "endpoint error: stream ended before its end",
    }
    assert code == 3
