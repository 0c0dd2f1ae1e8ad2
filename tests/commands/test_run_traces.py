"""`ragjudge run` with `traces:` against a loopback RAG service whose reply is the answer alone: each request
carries a `traceparent`, the service's real OpenTelemetry SDK exports its spans to ragjudge's receiver, and
recall, precision and faithfulness come from the trace's passages; without the exporter they are unknown, with
one warning, and nothing fails for them (issue 41)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands.test_run_end_to_end import Outcome, by_id, load, run, write_config
from tests.commands.test_run_end_to_end import ws as ws  # the fixture
from tests.fakes._http import free_port
from tests.fakes.otlp_sink import OtlpSink
from tests.fakes.traced_rag import Answer, Doc, traced_server

Q_RETURNS = "How long do I have to return headphones?"
Q_SHIPPING = "Who pays the return shipping?"
RETURNS = Doc("policy-returns", "Headphones can be returned within 7 days of delivery for a full refund.")
MISC = Doc("faq-misc", "Gift cards cannot be exchanged for cash.")
ANSWERS = {
    Q_RETURNS: Answer("Headphones can be returned within 7 days of delivery.", [RETURNS]),
    Q_SHIPPING: Answer("Gift cards cannot be exchanged.", [MISC]),
}
CASES: list[dict[str, Any]] = [
    {"id": "returns", "question": Q_RETURNS, "golden_context_ids": ["policy-returns"]},
    {"id": "shipping", "question": Q_SHIPPING, "golden_context_ids": ["policy-shipping"]},
]
TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-01")


def traced_config(
    folder: Path,
    url: str,
    port: int,
    settle_s: float,
    cases: list[dict[str, Any]] = CASES,
    export: str | None = None,
    body: str | None = None,
    price: dict[str, float] | None = None,
) -> None:
    endpoint = {"body": body} if body is not None else None
    write_config(
        folder,
        url,
        cases,
        case_rules={"context_recall": ">= 1.0"},
        suite_rules={"pass_rate": ">= 1.0"},
        endpoint=endpoint,
    )
    path = folder / "ragjudge.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["traces"] = {"receive": f"127.0.0.1:{port}", "settle_s": settle_s}
    if export is not None:
        config["traces"]["export"] = {"url": export}
    if price is not None:
        config["traces"]["price"] = price
    path.write_text(yaml.safe_dump(config), encoding="utf-8")


def traced_run(
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    exporting: bool,
    answers: dict[str, Answer] = ANSWERS,
    continues: bool = True,
    **kw: Any,
) -> tuple[Outcome, dict[str, Any], list[str]]:
    port = free_port()
    server, service = traced_server(answers, f"http://127.0.0.1:{port}" if exporting else None, continues=continues)
    with server:
        traced_config(ws, server.url, port, 3.0 if exporting else 0.5, **kw)
        outcome = run(capsys, "run", "--config", "ragjudge.yml", "--report", "report.json")
        service.shutdown()
    sent = [r.headers.get("traceparent", "") for r in server.requests]
    return outcome, load(ws / "report.json"), sent


@pytest.fixture
def exported(ws: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[Outcome, dict[str, Any], list[str]]]:
    yield traced_run(ws, capsys, exporting=True)


def test_every_request_carries_its_own_traceparent_recorded_in_the_report(
    exported: tuple[Outcome, dict[str, Any], list[str]],
) -> None:
    _, report, sent = exported
    assert len(sent) == 2 and all(TRACEPARENT.fullmatch(s) for s in sent)
    ids = {TRACEPARENT.fullmatch(s).group(1): TRACEPARENT.fullmatch(s).group(2) for s in sent}  # type: ignore[union-attr]
    assert len(ids) == 2  # one trace id per case
    for case in report["cases"]:
        spans = case["trace"]["spans"]
        assert ids[spans["trace_id"]] == spans["parent_span_id"]
        assert spans["joined_by"] == ["traceparent"]
        assert spans["arrived"] == 4  # the server span, retrieval, the tool call, the model


def test_recall_and_faithfulness_come_from_the_trace(exported: tuple[Outcome, dict[str, Any], list[str]]) -> None:
    outcome, report, _ = exported
    cases = by_id(report)
    returns, shipping = cases["returns"], cases["shipping"]
    assert returns["metrics"]["context_recall"] == 1.0
    assert returns["metrics"]["context_precision"] == 1.0
    assert returns["metrics"]["faithfulness"] is not None and returns["metrics"]["faithfulness"] > 0
    assert returns["status"] == "pass"
    assert shipping["metrics"]["context_recall"] == 0.0
    assert shipping["status"] == "fail"
    assert outcome.code == 1
    passages = returns["trace"]["passages"]
    # The judge had the trace's text (faithfulness above); the run let it go once judged, as for reply passages.
    assert passages == [{"id": "policy-returns", "source": "trace"}]
    assert returns["trace"]["retrieved_ids"] == ["policy-returns"]
    assert returns["trace"]["passages_unknown"] is False
    spans = returns["trace"]["spans"]
    assert (spans["passages_from"], spans["passage_ids"], spans["passages_used"]) == (
        "gen_ai",
        ["policy-returns"],
        True,
    )
    assert not any("no spans arrived" in w for w in report["warnings"])


def test_tool_calls_tokens_and_timings_are_in_the_case_trace_block(
    exported: tuple[Outcome, dict[str, Any], list[str]],
) -> None:
    _, report, _ = exported
    spans = by_id(report)["returns"]["trace"]["spans"]
    assert spans["conventions"] == ["gen_ai"]
    assert spans["tool_calls"] == [
        {
            "name": "policy_lookup",
            # The key named like a credential is masked, and its value never reaches the report.
            "arguments": '{"topic": "How long do I have to return headphones?", "api_key": "***"}',
            "result": '{"found": 1}',
        }
    ]
    assert (spans["input_tokens"], spans["output_tokens"], spans["ttfc_ms"]) == (120, 30, 50.0)
    assert spans["retrieval_ms"] is not None and spans["generation_ms"] is not None
    assert spans["server_ms"] is not None and spans["server_ms"] >= spans["retrieval_ms"]
    assert "sk-test-abcdefghijklmnop" not in (Path.cwd() / "report.json").read_text(encoding="utf-8")


def test_without_the_exporter_recall_is_unknown_with_one_warning_and_nothing_fails(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, report, sent = traced_run(ws, capsys, exporting=False)
    assert len(sent) == 2 and all(TRACEPARENT.fullmatch(s) for s in sent)
    cases = by_id(report)
    for case in cases.values():
        assert case["metrics"]["context_recall"] is None
        assert case["status"] != "fail"
        assert case["trace"]["spans"]["arrived"] == 0
        assert case["trace"]["passages_unknown"] is True
        # Unmeasured: the rule on it is not applied, so the case neither fails nor errors for it.
        assert (case["status"], case["failed_conditions"]) == ("pass", [])
    trace_warnings = [w for w in report["warnings"] if "span" in w or "passages" in w]
    assert len(trace_warnings) == 1
    assert trace_warnings[0].startswith("no spans arrived for 2 of 2 cases within 0.5 s (traces.settle_s): ")
    assert "is the service exporting to http://127.0.0.1:" in trace_warnings[0]
    assert "is it sampling?" in trace_warnings[0]
    assert outcome.code == 0


def test_the_reply_passages_win_and_a_disagreement_is_a_warning(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answers = {
        Q_RETURNS: Answer("Within 7 days.", [RETURNS], reply_docs=[MISC]),
        Q_SHIPPING: Answer("Gift cards cannot be exchanged.", [MISC], reply_docs=[MISC]),
    }
    _, report, _ = traced_run(ws, capsys, exporting=True, answers=answers)
    cases = by_id(report)
    returns = cases["returns"]
    assert returns["trace"]["retrieved_ids"] == ["faq-misc"]
    assert returns["metrics"]["context_recall"] == 0.0
    assert "source" not in returns["trace"]["passages"][0]
    assert returns["trace"]["spans"]["passages_used"] is False
    assert returns["trace"]["warnings"] == [
        "the trace's passages (policy-returns) differ from the reply's (faq-misc): the reply's were used"
    ]
    assert cases["shipping"]["trace"]["warnings"] == []


def attributes(event_or_span: Any) -> dict[str, Any]:
    out = {}
    for kv in event_or_span.attributes:
        kind = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, kind)
    return out


def test_verdicts_go_back_as_evaluation_events_tied_to_each_case_trace(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpSink() as sink:
        _, report, _ = traced_run(ws, capsys, exporting=True, export=sink.url)
    assert not any(w.startswith("traces.export") for w in report["warnings"])
    spans = {s.trace_id.hex(): s for s in sink.spans()}
    assert len(spans) == 2
    for case in report["cases"]:
        sent = case["trace"]["spans"]
        span = spans[sent["trace_id"]]
        assert span.parent_span_id.hex() == sent["parent_span_id"]
        assert span.name == f"ragjudge evaluate {case['id']}"
        assert attributes(span)["ragjudge.case.id"] == case["id"]
        events = [attributes(e) for e in span.events]
        assert {e.name for e in span.events} == {"gen_ai.evaluation.result"}
        verdict = events[0]
        assert verdict["gen_ai.evaluation.name"] == "ragjudge.case"
        assert verdict["gen_ai.evaluation.score.label"] == case["status"]
        assert verdict["gen_ai.evaluation.score.value"] == (1.0 if case["status"] == "pass" else 0.0)
        recall = [e for e in events if e["gen_ai.evaluation.name"] == "context_recall"]
        assert recall == [
            {
                "gen_ai.evaluation.name": "context_recall",
                "gen_ai.evaluation.score.value": case["metrics"]["context_recall"],
            }
        ]
    shipping = attributes(spans[by_id(report)["shipping"]["trace"]["spans"]["trace_id"]].events[0])
    assert shipping["gen_ai.evaluation.explanation"] == by_id(report)["shipping"]["failed_conditions"][0]


def test_an_export_refused_is_a_warning_not_the_runs_failure(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with OtlpSink(status=503) as sink:
        outcome, report, _ = traced_run(ws, capsys, exporting=True, export=sink.url)
    assert f"traces.export: {sink.url}/v1/traces answered HTTP 503: the verdicts were not taken" in report["warnings"]
    assert outcome.code == 1  # the gate's own verdict (one case fails recall), not an error for the export


def test_a_service_that_starts_its_own_trace_joins_by_the_conversation_id_sent(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As an AG-UI request's threadId: the case's id, which the service records as gen_ai.conversation.id.
    body = '{"question": {{ question | tojson }}, "thread_id": {{ case.id | tojson }}}'
    _, report, _ = traced_run(ws, capsys, exporting=True, continues=False, body=body)
    cases = by_id(report)
    for case_id, recall in (("returns", 1.0), ("shipping", 0.0)):
        spans = cases[case_id]["trace"]["spans"]
        assert (spans["joined_by"], spans["conversation_ids"], spans["arrived"]) == (["conversation"], [case_id], 4)
        assert spans["server_ms"] is None  # its first span does not continue ragjudge's
        assert cases[case_id]["metrics"]["context_recall"] == recall
    assert not any("never sent" in w for w in report["warnings"])


def test_each_turn_of_a_conversation_has_its_own_trace(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        {
            "id": "chat",
            "turns": [{"question": Q_RETURNS, "golden_context_ids": ["policy-returns"]}, {"question": Q_SHIPPING}],
        }
    ]
    _, report, sent = traced_run(ws, capsys, exporting=True, cases=cases)
    turns = report["cases"][0]["turns"]
    ids = [t["trace"]["spans"]["trace_id"] for t in turns]
    assert ids == [TRACEPARENT.fullmatch(s).group(1) for s in sent]  # type: ignore[union-attr]
    assert len(set(ids)) == 2
    assert turns[0]["metrics"]["context_recall"] == 1.0
    assert [t["trace"]["spans"]["passage_ids"] for t in turns] == [["policy-returns"], ["faq-misc"]]


def test_the_services_token_cost_at_a_configured_price_apart_from_the_judges(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    price = {"input_usd_per_mtok": 2.5, "output_usd_per_mtok": 10.0}
    _, report, _ = traced_run(ws, capsys, exporting=True, price=price)
    case = by_id(report)["returns"]
    # 120 tokens in at $2.50/M and 30 out at $10/M.
    assert case["trace"]["spans"]["cost_usd"] == 0.0006
    assert case["trace"]["cost_usd"] is None  # what the reply said it cost: nothing
    assert case["judge"]["cost_usd"] == 0.0  # the offline judge's own, apart
    # In the suite too: the service's cost from its spans, apart from the judge's and from what replies reported.
    traced = [c["trace"]["spans"]["cost_usd"] for c in report["cases"] if c["trace"]["spans"]["cost_usd"]]
    assert report["suite"]["service_trace_cost_usd"] == round(sum(traced), 8) and len(traced) == 2
    assert report["suite"]["service_cost_usd"] is None


def test_without_a_price_there_is_no_service_cost(exported: tuple[Outcome, dict[str, Any], list[str]]) -> None:
    _, report, _ = exported
    assert by_id(report)["returns"]["trace"]["spans"]["cost_usd"] is None


def test_waiting_for_spans_never_sends_more_than_endpoint_concurrency(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Spans come 300 ms after each reply (the exporter's batch delay): the cases wait for them on threads of
    # their own while the next requests go, never more than endpoint.concurrency (2) at once.
    questions = [f"Question {i}?" for i in range(8)]
    answers = {q: Answer("An answer.", [Doc(f"doc-{i}", "An answer.")]) for i, q in enumerate(questions)}
    cases = [{"id": f"c{i}", "question": q, "golden_context_ids": [f"doc-{i}"]} for i, q in enumerate(questions)]
    port = free_port()
    server, service = traced_server(answers, f"http://127.0.0.1:{port}", delay_s=0.05, batch_delay_ms=300)
    with server:
        traced_config(ws, server.url, port, 3.0, cases=cases)
        config = yaml.safe_load((ws / "ragjudge.yml").read_text(encoding="utf-8"))
        config["endpoint"]["concurrency"] = 2
        (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        outcome = run(capsys, "run", "--config", "ragjudge.yml", "--report", "report.json")
        service.shutdown()
    report = load(ws / "report.json")
    assert outcome.code == 0
    assert service.most_in_flight == 2
    assert [c["metrics"]["context_recall"] for c in report["cases"]] == [1.0] * 8


def test_a_call_that_gives_no_reply_is_not_waited_for(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The service fails on a question it does not know (its handler raises): the case is an endpoint error,
    # its spans are not waited for, and no trace warning counts it as missing.
    cases = [*CASES, {"id": "unknown", "question": "Something else?"}]
    _, report, sent = traced_run(ws, capsys, exporting=True, cases=cases)
    assert len(sent) == 3
    unknown = by_id(report)["unknown"]
    assert unknown["status"] == "error"
    assert unknown["trace"]["spans"] is None
    assert by_id(report)["returns"]["trace"]["spans"]["arrived"] == 4
    assert not any(w.startswith("no spans arrived") for w in report["warnings"])


def test_tool_calls_from_the_spans_meet_a_cases_tools_conditions(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The reply exposes no tool calls; the service's `execute_tool` span does: the case's `tools:` conditions read
    # it as they would a stream's (issue 41, item 3), and fail naming what the span recorded.
    cases = [
        {**CASES[0], "tools": {"called": ["policy_lookup"], "args": {"policy_lookup": {"topic": Q_RETURNS}}}},
        {**CASES[0], "id": "forbidden", "tools": {"not_called": ["policy_lookup"]}},
    ]
    outcome, report, _ = traced_run(ws, capsys, exporting=True, cases=cases)
    cases_by_id = by_id(report)
    assert cases_by_id["returns"]["tools_held"] == "held"
    assert cases_by_id["forbidden"]["tools_held"] == "failed"
    assert "called policy_lookup, which this case forbids" in cases_by_id["forbidden"]["failed_conditions"]
    assert cases_by_id["returns"]["trace"]["tool_calls"][0]["name"] == "policy_lookup"
    assert outcome.code == 1
