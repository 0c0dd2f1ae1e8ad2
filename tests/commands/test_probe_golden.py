"""`ragjudge probe`'s check of a case's golden ids against the passage ids read (`commands.probe_golden`): where
the golden ids are when they are not the passage ids, and a reply without passages."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.commands.probing import HAYHOOKS_RESPONSE, REFUND_CASE, configure_case, probe
from tests.fakes.framework_servers import FrameworkServer, doc_hash
from tests.fakes.raw_server import RawServer, http_reply


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_golden_ids_not_among_the_passage_ids_are_named_with_where_they_are(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    response = {k: v for k, v in HAYHOOKS_RESPONSE.items() if k != "retrieved_id"}
    with FrameworkServer("hayhooks") as server:
        configure_case(ws, server.url, REFUND_CASE, body='{"query": {{ question | tojson }}}', response=response)
        code, out, _ = probe(capsys)
    assert code == 1
    warnings = [line for line in out.splitlines() if line.startswith("  warning: ")]
    assert warnings == [
        "  warning: none of case refund's golden_context_ids (doc-refund-1) is among the passage ids read "
        f"({doc_hash('doc-refund-1')[:19]}…, {doc_hash('doc-ship-2')[:19]}…), so context_recall is 0; the golden "
        "ids are at meta.doc_id inside each passage: map endpoint.response.retrieved_id: meta.doc_id"
    ]
    assert "result: the reply maps cleanly" not in out


def test_a_reply_without_passages_for_a_case_with_golden_ids_is_named(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # LangServe drops `context` when the chain's output type is inferred: only the answer comes back.
    reply = json.dumps({"output": "Refunds take 5 working days.", "metadata": {"run_id": str(uuid.UUID(int=7))}})
    with RawServer(lambda _request: http_reply(reply.encode("utf-8"))) as server:
        configure_case(ws, server.url + "/rag/invoke", REFUND_CASE, response={"answer": "output"})
        code, out, _ = probe(capsys)
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith("  warning: ")] == [
        # As a run reads the same reply: recall unknown, not failed.
        "  warning: case refund has golden_context_ids (doc-refund-1) but the service exposes no passages "
        "(endpoint.response.retrieved is not mapped and the reply has none), so context_recall is unknown and a "
        "rule on it makes the case an error: map endpoint.response.retrieved to the passage list (a LangServe chain "
        "whose output type is inferred leaves `context` out of the reply: return the documents); the reply holds "
        "no golden id anywhere: check the ids in your cases against your documents' ids"
    ]
