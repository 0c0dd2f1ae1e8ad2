"""`ragjudge probe` showing the response mapping (`commands/probe_mapping.py`): a reply read key by key, and the
mapping it suggests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.commands.probing import HAYHOOKS_RESPONSE, configure, probe, section
from tests.fakes.framework_servers import FrameworkServer

TOKEN = "tok-probe-s3cr3t-77"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_unmapped_hayhooks_reply_gets_a_suggested_mapping(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, body='{"query": {{ question | tojson }}}')
        code, out, err = probe(capsys, "--question", "How long do refunds take?")
    assert (code, err) == (1, "")
    assert section(out, "request") == [
        "request",
        f"  POST {server.url}",
        "  Accept: application/json",
        "  User-Agent: ragjudge",
        "  Content-Type: application/json",
        "  body:",
        "    {",
        '      "query": "How long do refunds take?"',
        "    }",
    ]
    assert section(out, "reply")[1] == "  status: 200 OK"
    assert section(out, "reply")[2].startswith("  content type: application/json, ")
    assert section(out, "mapping") == [
        "mapping (endpoint.response)",
        "  answer: nothing (tried answer): did you mean result.answer_builder.answers.0.data?",
        "  refused: no field (tried refused); declines are decided from the answer, see `declined` below",
        "  confidence: nothing (tried confidence)",
        "  retrieved: nothing (tried retrieved, sources, contexts): did you mean "
        "result.answer_builder.answers.0.documents?",
        "  retrieved_ids: nothing (tried retrievedIds, retrieved_ids)",
        "  citations: nothing (tried citations)",
        "  cost_usd: nothing (tried cost_usd, costUsd)",
        "  latency_ms: nothing (tried latencyMs, latency_ms)",
        "  hint: passage ids look like content hashes; the document id may be at meta.doc_id (retrieved_id)",
        "  hint: the passages' title may be at meta.title (retrieved_title)",
    ]
    assert section(out, "suggested mapping") == [
        "suggested mapping: paste under `endpoint:` in your config, replacing any `response:`, then probe again",
        "  response:",
        "    answer: result.answer_builder.answers.0.data",
        "    retrieved: result.answer_builder.answers.0.documents",
        "    retrieved_id: meta.doc_id",
        "    retrieved_title: meta.title",
    ]
    assert section(out, "result: mapping error")[0] == (
        'result: mapping error: reply has no "answer" field (keys: result); set endpoint.response.answer to the '
        "answer's dotted path (did you mean result.answer_builder.answers.0.data?)"
    )


def test_the_suggested_mapping_maps_cleanly(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(
            ws,
            server.url,
            body='{"query": {{ question | tojson }}}',
            response={**HAYHOOKS_RESPONSE, "retrieved_title": "meta.title"},
        )
        code, out, _ = probe(capsys, "--case", "refund")
    assert code == 0
    assert section(out, "mapping")[1] == (
        '  answer (result.answer_builder.answers.0.data): "Refunds are paid back to the original card within 5 '
        'working days."'
    )
    assert section(out, "read as") == [
        "read as",
        '  answer: "Refunds are paid back to the original card within 5 working days."',
        "  declined: no; confidence: (none)",
        "  passages: 2",
        '    [1] id doc-refund-1 · title Refunds · text "Refunds are paid back to the original card within 5 working '
        'days of the return …"',
        '    [2] id doc-ship-2 · title Shipping · text "Shipping is free for orders over 99 yuan."',
        "  citations: (none)",
        section(out, "read as")[7],  # the measured latency varies
    ]
    assert out.endswith("\nresult: the reply maps cleanly\n")
