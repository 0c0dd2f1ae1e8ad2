"""`ragjudge probe` with `traces:` set (`commands/probe_traces.py`): one traced question, the spans the real SDK
exporter sent back, what they gave, and what to set when nothing came or the service started a trace of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.commands.probing import probe, section
from tests.fakes._http import free_port
from tests.fakes.traced_rag import Answer, Doc, traced_server

QUESTION = "How long do I have to return headphones?"
ANSWERS = {QUESTION: Answer("Within 7 days.", [Doc("policy-returns", "Returns within 7 days.")])}
SPANS_READ = [
    "  4 span(s) arrived, joined by traceparent",
    "  conventions found: gen_ai",
    "  passages (gen_ai): policy-returns (used: the reply shows none)",
    '  tool call: policy_lookup({"topic": "How long do I have to return headphones?", "api_key": "***"}) -> '
    '{"found": 1}',
    "  tokens: 120 in, 30 out",
]
"""What probe says of the traced question's spans, received or read from a store alike."""
TIMINGS = r"  timings: server [\d.]+ ms, retrieval [\d.]+ ms, generation [\d.]+ ms, time to first chunk 50 ms"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def probe_traced(
    ws: Path, capsys: pytest.CaptureFixture[str], exporting: bool = True, continues: bool = True
) -> tuple[int, str, list[str]]:
    port = free_port()
    server, service = traced_server(ANSWERS, f"http://127.0.0.1:{port}" if exporting else None, continues=continues)
    with server:
        config = {
            "endpoint": {"url": server.url},
            "traces": {"receive": f"127.0.0.1:{port}", "settle_s": 2 if exporting else 0.3},
        }
        (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code, out, _ = probe(capsys, "--question", QUESTION)
        service.shutdown()
    return code, out, [r.headers.get("traceparent", "") for r in server.requests]


def test_probe_sends_one_traced_question_and_shows_what_the_spans_gave(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, sent = probe_traced(ws, capsys)
    assert len(sent) == 1
    assert f"  traceparent: {sent[0]}" in section(out, "request")
    spans = section(out, "spans")
    port = spans[0].split("127.0.0.1:")[1].split(",")[0]
    assert spans[0] == f"spans (the receiver on 127.0.0.1:{port}, waited up to 2 s)"
    assert spans[1] == f"  traceparent sent: {sent[0]}"
    assert spans[2:7] == SPANS_READ
    assert re.fullmatch(TIMINGS, spans[7])
    assert code == 0


def test_no_spans_names_the_exporter_setting_and_is_exit_1(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = probe_traced(ws, capsys, exporting=False)
    spans = section(out, "spans")
    port = spans[0].split("127.0.0.1:")[1].split(",")[0]
    assert spans[2:] == [
        "  no span arrived for this question",
        f"  hint: point the service's exporter here: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:{port} (OTLP/HTTP); "
        "is its sampler dropping the trace? raise traces.settle_s if it exports late",
    ]
    assert code == 1


def test_a_service_that_starts_its_own_trace_is_named(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = probe_traced(ws, capsys, continues=False)
    spans = section(out, "spans")
    assert spans[2] == "  no span arrived for this question"
    assert spans[3].startswith(
        "  hint: 4 span(s) came in traces ragjudge never sent: the service starts a new trace per request instead of "
        "continuing `traceparent` (wrap its ASGI app in opentelemetry-instrumentation-asgi's OpenTelemetryMiddleware"
    )
    assert code == 1


def test_each_turn_of_a_conversation_is_traced_and_shown(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    server, service = traced_server(ANSWERS, f"http://127.0.0.1:{port}")
    with server:
        (ws / "cases.yaml").write_text(
            yaml.safe_dump([{"id": "chat", "turns": [{"question": QUESTION}, {"question": QUESTION}]}]),
            encoding="utf-8",
        )
        config = {
            "endpoint": {"url": server.url},
            "cases": ["cases.yaml"],
            "traces": {"receive": f"127.0.0.1:{port}", "settle_s": 2},
        }
        (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code, out, _ = probe(capsys, "--case", "chat")
        service.shutdown()
    sent = [r.headers["traceparent"] for r in server.requests]
    assert len(set(sent)) == 2
    shown = [line.removeprefix("  traceparent sent: ") for line in out.splitlines() if "traceparent sent:" in line]
    assert shown == sent
    assert out.count("  4 span(s) arrived, joined by traceparent") == 2
    # 1 for the conversation's own warning (the default body sends no history), not for the traces.
    assert code == 1 and "but endpoint.body and endpoint.url use none of" in out
