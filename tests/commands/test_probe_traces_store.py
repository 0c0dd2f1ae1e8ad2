"""`ragjudge probe` with `traces.store`: the one traced question's spans read from a real Arize Phoenix, shown as
from the receiver; a store that is down is named, exit 1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.commands.probing import probe, section
from tests.commands.test_probe_traces import ANSWERS, QUESTION, SPANS_READ, TIMINGS
from tests.commands.test_probe_traces import ws as ws  # the fixture
from tests.fakes._http import free_port
from tests.fakes.phoenix_server import RunningPhoenix
from tests.fakes.responder_server import ResponderServer
from tests.fakes.traced_rag import traced_server


def probe_store(
    ws: Path, capsys: pytest.CaptureFixture[str], store_url: str, exports_to: str | None, settle_s: float = 5
) -> tuple[int, str, list[str]]:
    server, service = traced_server(ANSWERS, exports_to)
    with server:
        config = {
            "endpoint": {"url": server.url},
            "traces": {"store": {"kind": "phoenix", "url": store_url}, "settle_s": settle_s},
        }
        (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code, out, _ = probe(capsys, "--question", QUESTION)
        service.shutdown()
    return code, out, [r.headers.get("traceparent", "") for r in server.requests]


def test_probe_reads_the_traced_question_from_phoenix(
    ws: Path, capsys: pytest.CaptureFixture[str], phoenix_server: RunningPhoenix
) -> None:
    code, out, sent = probe_store(ws, capsys, phoenix_server.url, phoenix_server.url)
    spans = section(out, "spans")
    assert spans[:2] == [
        f"spans (the trace store {phoenix_server.url}, project default, waited up to 5 s)",
        f"  traceparent sent: {sent[0]}",
    ]
    assert spans[2:7] == SPANS_READ  # as from the receiver
    assert re.fullmatch(TIMINGS, spans[7])
    assert code == 0


def test_probe_names_a_store_that_is_down_and_is_exit_1(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    code, out, sent = probe_store(ws, capsys, down, None)
    assert len(sent) == 1
    assert section(out, "spans")[2:] == [f"  the trace store {down} could not be reached: connection refused"]
    assert code == 1


def test_probe_with_no_spans_in_the_store_says_where_to_export(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ResponderServer(lambda ex: ex.json({"data": [], "next_cursor": None})) as store:
        code, out, _ = probe_store(ws, capsys, store.origin, None, settle_s=0.3)
    assert section(out, "spans")[2:] == [
        "  no span arrived for this question",
        f"  hint: point the service's exporter at the store (Phoenix: OTEL_EXPORTER_OTLP_ENDPOINT={store.origin}, "
        "project default); is its sampler dropping the trace? raise traces.settle_s if it exports late",
    ]
    assert code == 1
