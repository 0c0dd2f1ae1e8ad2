"""`ragjudge run` against services that stream their replies: an OpenAI-compatible `stream: true` chat and a
LangServe-shaped `/stream`, judged offline; faults are case errors, TTFT is reported and gated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.endpoint.test_receiving import langserve_stream, openai_chunk, sse
from tests.fakes.openai_server import FakeOpenAI, Reply
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
        "protocol": "openai-chat",
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
        "endpoint error: the stream sent an error event: Internal Server Error"
    ]


def _chat_answer(body: dict[str, Any], call_index: int) -> Reply:
    answers = {"How long do refunds take?": "Refunds take 30 days.", "Who pays shipping?": "The seller pays shipping."}
    return Reply(content=answers[body["messages"][-1]["content"]])


def test_the_openai_chat_preset_streams_and_a_json_body_reads_its_message(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = CASES[:2]
    no_stream = '{"model": {{ model | tojson }}, "messages": {{ messages | tojson }}, "stream": false}'
    with FakeOpenAI(_chat_answer) as fake:
        url = f"{fake.base_url}/chat/completions"
        write_config(
            ws, url, cases, case_rules={"ttft_ms": "<= 2000"}, endpoint={"preset": "openai-chat", "model": "rag"}
        )
        streamed = run(capsys, "run", "--report", "streamed.json")
        sent = sorted(fake.bodies, key=lambda b: b["messages"][0]["content"])
        fake.reset()
        # A team's own body wins over the preset's: here the service is asked for one JSON body.
        write_config(ws, url, cases, endpoint={"preset": "openai-chat", "model": "rag", "body": no_stream})
        whole = run(capsys, "run", "--report", "whole.json")
        assert [b["stream"] for b in fake.bodies] == [False, False]
    assert sent == [
        {"model": "rag", "messages": [{"role": "user", "content": "How long do refunds take?"}], "stream": True},
        {"model": "rag", "messages": [{"role": "user", "content": "Who pays shipping?"}], "stream": True},
    ]
    assert streamed.code == 0, streamed.out
    got = by_id(load(ws / "streamed.json"))
    assert got["refund"]["trace"]["answer"] == "Refunds take 30 days."
    assert got["refund"]["trace"]["ttft_ms"] is not None and got["refund"]["status"] == "pass"
    assert whole.code == 0, whole.out
    got = by_id(load(ws / "whole.json"))
    assert (got["shipping"]["trace"]["answer"], got["shipping"]["trace"]["ttft_ms"]) == (
        "The seller pays shipping.",
        None,
    )
    assert {c["status"] for c in got.values()} == {"pass"}


def test_the_langserve_preset_wires_its_stream(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": "refund", "question": "How long do refunds take?", "golden_context_ids": ["doc-1"]}]
    with ResponderServer(_langserve) as server:
        write_config(ws, server.url, cases, case_rules={"context_recall": ">= 1"}, endpoint={"preset": "langserve"})
        outcome = run(capsys, "run", "--report", "report.json")
    assert outcome.code == 0, outcome.out
    refund = by_id(load(ws / "report.json"))["refund"]
    assert (refund["status"], refund["trace"]["answer"]) == ("pass", "Refunds are issued within 30 days.")
    assert (refund["trace"]["retrieved_ids"], refund["metrics"]["context_recall"]) == (["doc-1", "doc-2"], 1.0)


def test_recorded_traces_carry_their_time_to_the_first_token(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"id": "quick", "question": "How long do refunds take?", "answer": "30 days.", "latencyMs": 900, "ttftMs": 120},
        {"id": "slow", "question": "Who pays shipping?", "answer": "The seller.", "latency_ms": 950, "ttft_ms": 700},
        {"id": "whole", "question": "Can I cancel?", "answer": "Yes.", "latencyMs": 300},
    ]
    (ws / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    write_config(ws, "http://127.0.0.1:9/unused", [], case_rules={"ttft_ms": "<= 500"}, suite_rules={})
    outcome = run(capsys, "run", "--traces", "traces.jsonl", "--report", "report.json")
    assert outcome.code == 1, outcome.out
    report = load(ws / "report.json")
    cases = by_id(report)
    assert {cid: c["trace"]["ttft_ms"] for cid, c in cases.items()} == {"quick": 120, "slow": 700, "whole": None}
    assert cases["slow"]["failed_conditions"] == ["ttft_ms 700 > 500"]
    assert cases["quick"]["status"] == cases["whole"]["status"] == "pass"
    assert (report["suite"]["p50_ttft_ms"], report["suite"]["p95_ttft_ms"]) == (120, 700)


NO_PASSAGES = "the service exposes no passages (endpoint.response.retrieved is not mapped and the reply has none)"


def test_passages_a_chat_service_does_not_expose_are_unknown_never_a_zero_or_a_pass(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        {"id": "recall", "question": "How long do refunds take?", "golden_context_ids": ["doc-1"]},
        {"id": "faith", "question": "Who pays shipping?"},
    ]
    with FakeOpenAI(_chat_answer) as fake:
        url = f"{fake.base_url}/chat/completions"
        endpoint = {"preset": "openai-chat", "model": "rag"}
        write_config(ws, url, cases, case_rules={"context_recall": ">= 1", "faithfulness": ">= 0.8"}, endpoint=endpoint)
        ruled = run(capsys, "run", "--report", "ruled.json")
        write_config(ws, url, cases, case_rules={"latency_ms": "<= 5000"}, endpoint=endpoint)
        plain = run(capsys, "run", "--report", "plain.json")
    assert ruled.code == 3, ruled.out
    report = load(ws / "ruled.json")
    got = by_id(report)
    assert got["recall"]["status"] == "error"
    assert got["recall"]["failed_conditions"] == [
        f"context_recall unknown: {NO_PASSAGES}",
        f"faithfulness unknown: {NO_PASSAGES}",
    ]
    assert got["faith"]["failed_conditions"] == [f"faithfulness unknown: {NO_PASSAGES}"]
    assert got["faith"]["status"] == "error"
    metrics = got["recall"]["metrics"]
    assert (metrics["context_recall"], metrics["context_precision"], metrics["faithfulness"]) == (None, None, None)
    assert got["recall"]["trace"]["passages_unknown"] is True
    assert got["recall"]["judge"]["claims"] == [] and got["recall"]["judge"]["notes"][-1] == (
        "no sources were recorded (the service exposes no passages): faithfulness, grounding and citations not assessed"
    )
    (warning,) = [w for w in report["warnings"] if w.startswith("endpoint.response.retrieved")]
    assert warning.startswith(
        "endpoint.response.retrieved is not mapped and 2 of 2 replies carried no passages under retrieved, sources, "
        "contexts (cases recall, faith): what the service retrieved is unknown"
    )
    assert ruled.out.count("warning: endpoint.response.retrieved is not mapped") == 1
    # Without rules that need passages the cases pass on their other checks.
    assert plain.code == 0, plain.out
    assert {c["status"] for c in by_id(load(ws / "plain.json")).values()} == {"pass"}


def test_a_mapped_retrieved_that_comes_back_empty_is_nothing_retrieved(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [{"id": "recall", "question": "How long do refunds take?", "golden_context_ids": ["doc-1"]}]

    def empty(ex: Exchange) -> None:
        ex.stream([*langserve_stream("Refunds take 30 days.")[:1], sse({"context": []}, "data"),
                   *langserve_stream("Refunds take 30 days.")[2:]])  # fmt: skip

    with ResponderServer(empty) as server:
        write_config(ws, server.url, cases, case_rules={"context_recall": ">= 1"}, endpoint={"preset": "langserve"})
        outcome = run(capsys, "run", "--report", "report.json")
    assert outcome.code == 1, outcome.out
    recall = by_id(load(ws / "report.json"))["recall"]
    assert recall["status"] == "fail" and recall["trace"]["passages_unknown"] is False
    assert recall["failed_conditions"] == ["context_recall 0.000 < 1 (missing doc-1; retrieved nothing)"]
