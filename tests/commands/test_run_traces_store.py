"""`ragjudge run` with `traces.store`: each case's trace read from the team's trace store by the trace id sent,
instead of received (issue 41, item 2). The same traced loopback service (the real OpenTelemetry SDK exporter)
runs once exporting to ragjudge's receiver and once to a real Arize Phoenix: the figures are the same. A store
that is down or answers badly leaves the trace metrics unknown with a warning naming it, never fails the run."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands.test_run_end_to_end import Outcome, by_id, load, run
from tests.commands.test_run_end_to_end import ws as ws  # the fixture
from tests.commands.test_run_traces import ANSWERS, TRACEPARENT, traced_config, traced_run
from tests.fakes._http import free_port
from tests.fakes.phoenix_server import RunningPhoenix
from tests.fakes.responder_server import Exchange, ResponderServer
from tests.fakes.traced_rag import traced_server

PRICE = {"input_usd_per_mtok": 2.5, "output_usd_per_mtok": 10.0}


def store_run(
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    store: dict[str, Any],
    exports_to: str | None,
    settle_s: float = 5.0,
    **traces: Any,
) -> tuple[Outcome, dict[str, Any], list[str]]:
    """The traced service exporting to `exports_to` (None: nowhere), ragjudge reading `store`."""
    server, service = traced_server(ANSWERS, exports_to)
    with server:
        traced_config(ws, server.url, 0, settle_s, price=PRICE)
        path = ws / "ragjudge.yml"
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        del config["traces"]["receive"]
        config["traces"].update({"store": store, **traces})
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        outcome = run(capsys, "run", "--config", "ragjudge.yml", "--report", "report.json")
        service.shutdown()
    return outcome, load(ws / "report.json"), [r.headers.get("traceparent", "") for r in server.requests]


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """What a case's trace gave the run, and the run's totals: all that must not depend on how spans came."""
    out: dict[str, Any] = {"suite_cost": report["suite"]["service_trace_cost_usd"]}
    for case_id, case in by_id(report).items():
        spans = case["trace"]["spans"]
        out[case_id] = {
            "status": case["status"],
            "failed": case["failed_conditions"],
            "metrics": {k: case["metrics"][k] for k in ("context_recall", "context_precision", "faithfulness")},
            "passages": case["trace"]["passages"],
            "retrieved_ids": case["trace"]["retrieved_ids"],
            "tool_calls": case["trace"]["tool_calls"],
            "spans": {
                k: spans[k]
                for k in (
                    "arrived",
                    "joined_by",
                    "conventions",
                    "passages_from",
                    "passage_ids",
                    "passages_used",
                    "tool_calls",
                    "input_tokens",
                    "output_tokens",
                    "cost_usd",
                    "ttfc_ms",
                )
            },
        }
    return out


def test_the_same_run_against_phoenix_as_the_store_gives_the_same_figures(
    ws: Path, capsys: pytest.CaptureFixture[str], phoenix_server: RunningPhoenix
) -> None:
    received_outcome, received, _ = traced_run(ws, capsys, exporting=True, price=PRICE)
    store = {"kind": "phoenix", "url": phoenix_server.url, "project": "default"}
    outcome, stored, sent = store_run(ws, capsys, store, exports_to=phoenix_server.url)
    assert figures(stored) == figures(received)
    assert (outcome.code, received_outcome.code) == (1, 1)  # the shipping case fails recall, both ways
    returns = by_id(stored)["returns"]
    # The figures themselves, so the comparison cannot pass on two empty runs.
    assert returns["metrics"]["context_recall"] == 1.0
    assert returns["metrics"]["faithfulness"] is not None and returns["metrics"]["faithfulness"] > 0
    assert returns["trace"]["passages"] == [{"id": "policy-returns", "source": "trace"}]
    spans = returns["trace"]["spans"]
    assert (spans["arrived"], spans["conventions"], spans["input_tokens"], spans["cost_usd"]) == (
        4,
        ["gen_ai"],
        120,  # not 240: Phoenix's derived OpenInference token counts are not read a second time
        0.0006,
    )
    assert spans["tool_calls"] == [
        {
            "name": "policy_lookup",
            "arguments": '{"topic": "How long do I have to return headphones?", "api_key": "***"}',
            "result": '{"found": 1}',
        }
    ]
    assert stored["suite"]["service_trace_cost_usd"] == 0.0012
    # The trace ids sent are the ones read; the service's own span continues ragjudge's.
    ids = {m.group(1): m.group(2) for s in sent if (m := TRACEPARENT.fullmatch(s))}
    assert {c["trace"]["spans"]["trace_id"] for c in stored["cases"]} == set(ids)
    assert spans["server_ms"] is not None and spans["server_ms"] >= spans["retrieval_ms"]
    assert not any("span" in w or "trace store" in w for w in stored["warnings"])
    assert "sk-test-abcdefghijklmnop" not in (ws / "report.json").read_text(encoding="utf-8")


def test_a_project_the_store_does_not_have_is_a_warning_naming_it(
    ws: Path, capsys: pytest.CaptureFixture[str], phoenix_server: RunningPhoenix
) -> None:
    store = {"kind": "phoenix", "url": phoenix_server.url, "project": "no-such-project"}
    outcome, report, _ = store_run(ws, capsys, store, exports_to=phoenix_server.url)
    assert f"the trace store {phoenix_server.url} answered HTTP 404 (is traces.store.project the project the " in (
        "\n".join(report["warnings"])
    )
    assert all(c["metrics"]["context_recall"] is None for c in report["cases"])
    assert outcome.code == 0


def unknown_for_every_case(outcome: Outcome, report: dict[str, Any]) -> None:
    """A missing trace: unmeasured, never a fail, never an error."""
    for case in report["cases"]:
        assert case["metrics"]["context_recall"] is None
        assert case["trace"]["passages_unknown"] is True
        assert case["trace"]["spans"]["arrived"] == 0
        assert (case["status"], case["failed_conditions"]) == ("pass", [])
    assert report["suite"]["service_trace_cost_usd"] is None
    assert outcome.code == 0
    assert "Traceback" not in outcome.out + outcome.err


def trace_warnings(report: dict[str, Any]) -> list[str]:
    return [w for w in report["warnings"] if "trace" in w or "span" in w]


def test_a_store_that_is_down_leaves_the_trace_metrics_unknown_with_a_warning_naming_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    outcome, report, sent = store_run(ws, capsys, {"kind": "phoenix", "url": down}, exports_to=None)
    assert len(sent) == 2 and all(TRACEPARENT.fullmatch(s) for s in sent)  # traceparent is still sent
    unknown_for_every_case(outcome, report)
    assert trace_warnings(report) == [
        f"the trace store {down} could not be reached: connection refused: the trace of 2 of 2 cases was not "
        "read; their trace metrics stay unknown"
    ]


def misbehaving(answer: Callable[[Exchange], None]) -> ResponderServer:
    return ResponderServer(answer)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda ex: ex.send(500, b'{"detail": "boom"}'), "answered HTTP 500"),
        (lambda ex: ex.send(200, b"<html>not json</html>", "text/html"), "answered with a body that is not JSON"),
        (
            lambda ex: ex.json({"data": [{"name": "x", "context": {"trace_id": "nothex"}}]}),
            "answered with spans ragjudge cannot read: a span's `context.trace_id` is not 32 hex digits",
        ),
        (lambda ex: ex.json({"spans": []}), "answered with spans ragjudge cannot read: the reply has no `data` list"),
        (lambda ex: ex.send(200, b'{"data": [' + b" " * 20_000 + b"]}"), "answered more than 4096 bytes"),
        (lambda ex: ex.send(401, b"{}"), "answered HTTP 401 (set traces.store.api_key_env to the variable that"),
        # Past what is left of settle_s (0.5 s here), and 2 s at least: a hanging store costs what a missing trace does.
        (lambda ex: ex.hang(30), "did not answer in time"),
    ],
    ids=["500", "garbage", "bad-span", "other-shape", "huge", "unauthorised", "hangs"],
)
def test_a_store_that_answers_badly_leaves_the_trace_metrics_unknown_with_a_warning_naming_it(
    ws: Path, capsys: pytest.CaptureFixture[str], answer: Callable[[Exchange], None], reason: str
) -> None:
    started = time.monotonic()
    with misbehaving(answer) as store:
        outcome, report, _ = store_run(
            ws, capsys, {"kind": "phoenix", "url": store.origin}, exports_to=None, settle_s=0.5, max_body_bytes=4096
        )
    assert time.monotonic() - started < 8  # two cases, one request each, 2 s at most
    unknown_for_every_case(outcome, report)
    warnings = trace_warnings(report)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"the trace store {store.origin} {reason}")
    assert warnings[0].endswith(": the trace of 2 of 2 cases was not read; their trace metrics stay unknown")
    # One ask a case: a store that answers badly is not asked again.
    assert [r.path.split("?")[0] for r in store.requests] == ["/v1/projects/default/spans"] * 2


def test_the_api_key_goes_to_the_store_and_never_into_the_report(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHOENIX_KEY_FOR_TEST", "px-secret-key-0123456789")
    with misbehaving(lambda ex: ex.send(403, b'{"detail": "px-secret-key-0123456789 is wrong"}')) as store:
        outcome, report, _ = store_run(
            ws, capsys, {"kind": "phoenix", "url": store.origin, "api_key_env": "PHOENIX_KEY_FOR_TEST"}, exports_to=None
        )
    assert [r.headers["authorization"] for r in store.requests] == ["Bearer px-secret-key-0123456789"] * 2
    assert "px-secret-key-0123456789" not in (ws / "report.json").read_text(encoding="utf-8")
    assert "px-secret-key-0123456789" not in outcome.out + outcome.err
    assert trace_warnings(report)[0].startswith(f"the trace store {store.origin} answered HTTP 403")


def test_spans_that_never_come_leave_one_warning_naming_the_store(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with misbehaving(lambda ex: ex.json({"data": [], "next_cursor": None})) as store:
        outcome, report, _ = store_run(
            ws, capsys, {"kind": "phoenix", "url": store.origin}, exports_to=None, settle_s=0.3
        )
    unknown_for_every_case(outcome, report)
    assert trace_warnings(report) == [
        f"no spans came from the trace store {store.origin} (project default) for 2 of 2 cases within 0.3 s "
        "(traces.settle_s): does the service export to it? does it continue the `traceparent` ragjudge sends? is "
        "it sampling? Their retrieval metrics stay unknown"
    ]
    assert len(store.requests) > 2  # asked again until settle_s passed


@pytest.mark.parametrize(
    ("traces", "message"),
    [
        (
            {"store": {"kind": "tempo", "url": "http://127.0.0.1:3200"}},
            "traces.store.kind: unknown trace store 'tempo'",
        ),
        (
            {"store": {"kind": "phoenix", "url": "ftp://127.0.0.1:6006"}},
            "traces.store.url: ",
        ),
        (
            {"receive": "127.0.0.1:4318", "store": {"kind": "phoenix", "url": "http://127.0.0.1:6006"}},
            "traces.store: `receive` is set too: spans are received, or read from the store, not both",
        ),
        (
            {"store": {"kind": "phoenix", "url": "http://127.0.0.1:6006", "api_key_env": "RAGJUDGE_NO_SUCH_VAR"}},
            "traces.store.api_key_env: the variable RAGJUDGE_NO_SUCH_VAR is not set or empty",
        ),
    ],
    ids=["kind", "url", "receive-too", "key-unset"],
)
def test_a_bad_store_setting_is_exit_2_naming_the_key(
    ws: Path, capsys: pytest.CaptureFixture[str], traces: dict[str, Any], message: str
) -> None:
    server, service = traced_server(ANSWERS, None)
    with server:
        traced_config(ws, server.url, 0, 1.0)
        path = ws / "ragjudge.yml"
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        config["traces"] = traces
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        outcome = run(capsys, "run", "--config", "ragjudge.yml", "--report", "report.json")
        service.shutdown()
    assert outcome.code == 2
    assert message in outcome.err
    assert "Traceback" not in outcome.err
    assert server.requests == []  # before any call


def test_a_store_needs_no_traces_extra_but_the_export_does(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when opentelemetry-proto is not installed: the store is read with requests alone.
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1", None)
    with ResponderServer(lambda ex: ex.json({"data": [], "next_cursor": None})) as store:
        outcome, report, _ = store_run(ws, capsys, {"kind": "phoenix", "url": store.origin}, None, settle_s=0.1)
        unknown_for_every_case(outcome, report)
        assert len(store.requests) >= 2
        exporting, _, _ = store_run(
            ws, capsys, {"kind": "phoenix", "url": store.origin}, None, export={"url": store.origin}
        )
    assert exporting.code == 2
    assert "ragjudge.yml: traces: reading OpenTelemetry spans needs the `traces` extra" in exporting.err
