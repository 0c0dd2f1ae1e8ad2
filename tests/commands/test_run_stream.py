"""`ragjudge run` against services that stream their replies: an OpenAI-compatible `stream: true` chat and a
LangServe-shaped `/stream`, judged offline; faults are case errors, TTFT is reported and gated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.endpoint.test_client_stream import langserve_stream, openai_chunk, sse
from tests.fakes.responder_server import Exchange, ResponderServer

OPENAI_BODY = '{"model": "m", "messages": [{"role": "user", "content": {{ question | tojson }}}], "stream": true}'
CASES = [
    {"id": "refund", "question": "How long do refunds take?", "must_mention": ["30 days"]},
    {"id": "shipping", "question": "Who pays shipping?", "must_mention": ["seller"]},
    {"id": "cut", "question": "Can I cancel?"},
    {"id": "stalled", "question": "Is there a warranty?"},
]
TOKENS = {
    "How long do refunds take?": ["Refunds ", "take ", "30 days."],
    "Who pays shipping?": ["The seller ", "pays ", "return shipping."],
}


def _chat(ex: Exchange) -> None:
    body = ex.request.json()
    assert body["stream"] is True
    question = body["messages"][-1]["content"]
    role: list[bytes | float] = [sse(openai_chunk("")), 0.2]  # 200 ms to the first token
    if question == "Can I cancel?":
        ex.stream([*role, sse(openai_chunk("You can ")), sse(openai_chunk("cancel"))])  # no [DONE]
    elif question == "Is there a warranty?":
        ex.stream([*role, sse(openai_chunk("Yes")), 5.0, b"data: [DONE]\n\n"])
    else:
        tokens = [sse(openai_chunk(t)) for t in TOKENS[question]]
        ex.stream([*role, *tokens, sse(openai_chunk(None, "stop")), b"data: [DONE]\n\n"])


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def test_an_openai_stream_is_assembled_judged_and_timed(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    endpoint: dict[str, Any] = {
        "body": OPENAI_BODY,
        "idle_timeout_s": 0.8,
        "response": {"answer_delta": "choices.0.delta.content"},
    }
    with ResponderServer(_chat) as server:
        write_config(
            ws,
            server.url,
            CASES,
            case_rules={"ttft_ms": "<= 2000"},
            suite_rules={"p95_ttft_ms": "<= 100"},
            endpoint=endpoint,
        )
        outcome = run(capsys, "run", "--report", "report.json")
    assert outcome.code == 1, outcome.out
    report = load(ws / "report.json")
    cases = by_id(report)
    assert {cid: (c["status"], c["failed_conditions"]) for cid, c in cases.items()} == {
        "refund": ("pass", []),
        "shipping": ("pass", []),
        "cut": ("error", ["endpoint error: stream ended before its end (3 events, 14 characters)"]),
        "stalled": (
            "error",
            ["endpoint error: idle timeout: no bytes for 0.8 s (endpoint.idle_timeout_s, 1 attempt)"],
        ),
    }
    refund = cases["refund"]
    assert refund["trace"]["answer"] == "Refunds take 30 days."
    ttft = refund["trace"]["ttft_ms"]
    assert 200 <= ttft <= 250
    assert refund["metrics"]["ttft_ms"] == ttft
    assert refund["trace"]["latency_ms"] >= ttft
    suite = report["suite"]
    ttfts = sorted(cases[c]["trace"]["ttft_ms"] for c in ("refund", "shipping"))
    assert (suite["p50_ttft_ms"], suite["p95_ttft_ms"]) == (ttfts[0], ttfts[1])
    (rule,) = [r for r in report["rules"] if r["metric"] == "p95_ttft_ms"]
    assert rule["passed"] is False and rule["value"] == pytest.approx(ttfts[1], abs=0.1)


def _langserve(ex: Exchange) -> None:
    question = ex.request.json()["input"]["question"]
    if question == "Will it break?":
        ex.stream(
            [
                sse({"run_id": "r-2"}, "metadata"),
                sse({"answer": "Refu"}, "data"),
                sse({"status_code": 500, "message": "Internal Server Error"}, "error"),
            ]
        )
    else:
        ex.stream(langserve_stream("Refunds are issued ", "within 30 days."))


def test_a_langserve_stream_reads_passages_from_its_first_event(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        {"id": "refund", "question": "How long do refunds take?", "golden_context_ids": ["doc-1"]},
        {"id": "broken", "question": "Will it break?"},
    ]
    endpoint = {
        "body": '{"input": {"question": {{ question | tojson }}}}',
        "response": {
            "answer_delta": "answer",
            "retrieved": "context",
            "retrieved_id": "metadata.source",
            "retrieved_text": "page_content",
        },
    }
    with ResponderServer(_langserve) as server:
        write_config(ws, server.url, cases, case_rules={"context_recall": ">= 1"}, endpoint=endpoint)
        outcome = run(capsys, "run", "--report", "report.json")
    assert outcome.code == 1, outcome.out
    got = by_id(load(ws / "report.json"))
    assert got["refund"]["status"] == "pass", got["refund"]["failed_conditions"]
    assert got["refund"]["trace"]["answer"] == "Refunds are issued within 30 days."
    assert got["refund"]["trace"]["retrieved_ids"] == ["doc-1", "doc-2"]
    assert got["refund"]["metrics"]["context_recall"] == 1.0
    assert got["broken"]["status"] == "error"
    assert got["broken"]["failed_conditions"] == [
        'endpoint error: the stream sent an error event: {"message":"Internal Server Error"}'
    ]
