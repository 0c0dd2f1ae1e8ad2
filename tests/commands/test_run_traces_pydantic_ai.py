"""`ragjudge run` and `probe` with `traces:` against a real Pydantic AI agent with its instrumentation on
(`Agent.instrument_all()`, GenAI conventions, the real SDK exporting to ragjudge's receiver;
tests/fakes/pydantic_ai_server.py, `traced_agent`): the same cases' tool conditions hold and fail alike whether the
calls are read from its AG-UI stream or, on a route that shows none, from its `execute_tool` spans; without the ASGI
middleware each request starts a trace of its own, which joins by `gen_ai.conversation.id` = the AG-UI threadId,
and probe says so (issue 41)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands.probing import probe, section
from tests.commands.test_run_end_to_end import Outcome, by_id, load, run
from tests.fakes.pydantic_ai_server import TracedAgent

Q_ORDER = "Where is my order A123?"
Q_REFUND = "How long do refunds take?"
Q_SHIPPING = "How long does express shipping take?"
CASES: list[dict[str, Any]] = [
    {
        "id": "order",
        "question": Q_ORDER,
        "tools": {"called": ["lookup_order"], "args": {"lookup_order": {"order_id": "A123"}}},
    },
    {"id": "wrong-tool", "question": Q_REFUND, "tools": {"called": ["lookup_order"]}},
    {
        "id": "missing-arg",
        "question": Q_SHIPPING,
        "tools": {"args": {"search_docs": {"query": Q_SHIPPING, "limit": 2}}},
    },
    {"id": "forbidden", "question": Q_REFUND, "tools": {"not_called": ["search_docs"]}},
]
VERDICTS = {
    "order": ("held", []),
    "wrong-tool": (
        "failed",
        ["did not call lookup_order", "called search_docs, which `called` does not list (order: unordered)"],
    ),
    "missing-arg": ("failed", ["search_docs called without limit, expected 2"]),
    "forbidden": ("failed", ["called search_docs, which this case forbids"]),
}
"""Each case's tool verdict and reasons, the same from the stream and from the spans."""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(CASES), encoding="utf-8")
    return tmp_path


def configure(ws: Path, agent: TracedAgent, route: str, **traces: Any) -> None:
    """`ag-ui`: the AG-UI route, its stream read by the preset (tool calls and all); `plain`: the same agent's plain
    route, whose reply is the answer alone."""
    endpoint: dict[str, Any] = (
        {"url": f"{agent.origin}/agent", "preset": "ag-ui"}
        if route == "ag-ui"
        else {
            "url": f"{agent.origin}/ask",
            "body": '{"question": {{ question | tojson }}}',
            "response": {"answer": "answer"},
        }
    )
    config = {
        "endpoint": {**endpoint, "retries": 0},
        "judge": {"provider": "offline"},
        "cases": ["cases.yaml"],
        "traces": {"receive": f"127.0.0.1:{agent.otlp_port}", "settle_s": 5, **traces},
    }
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")


def traced_run(
    ws: Path, capsys: pytest.CaptureFixture[str], agent: TracedAgent, route: str
) -> tuple[Outcome, dict[str, Any]]:
    configure(ws, agent, route)
    outcome = run(capsys, "run", "--report", "report.json")
    return outcome, load(ws / "report.json")


def verdicts(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {cid: (c["tools_held"], c["failed_conditions"]) for cid, c in by_id(report).items()}


def test_tool_calls_from_the_spans_hold_and_fail_as_from_the_ag_ui_stream(
    ws: Path, capsys: pytest.CaptureFixture[str], traced_agent: Callable[[bool], TracedAgent]
) -> None:
    agent = traced_agent(True)
    streamed_outcome, streamed = traced_run(ws, capsys, agent, "ag-ui")
    spanned_outcome, spanned = traced_run(ws, capsys, agent, "plain")
    assert verdicts(streamed) == VERDICTS
    assert verdicts(spanned) == VERDICTS
    assert (streamed_outcome.code, spanned_outcome.code) == (1, 1)
    assert streamed["suite"]["tool_condition_accuracy"] == spanned["suite"]["tool_condition_accuracy"] == 0.25
    for case_id in VERDICTS:
        stream_case, span_case = by_id(streamed)[case_id], by_id(spanned)[case_id]
        # The plain route showed no tool call: the trace's calls stood for it, as the stream's calls are.
        assert stream_case["trace"]["protocol"] == "ag-ui" and span_case["trace"]["protocol"] is None
        calls = [(t["name"], t["arguments"]) for t in span_case["trace"]["tool_calls"]]
        assert calls == [(t["name"], t["arguments"]) for t in stream_case["trace"]["tool_calls"]]
        # Both runs continued ragjudge's trace (the middleware) and read the agent's `execute_tool` spans.
        for case in (stream_case, span_case):
            spans = case["trace"]["spans"]
            assert spans["joined_by"] == ["traceparent"] and spans["conventions"] == ["gen_ai"]
            assert spans["server_ms"] is not None
    order = by_id(spanned)["order"]["trace"]
    assert order["tool_calls"][0]["arguments"] == {"order_id": "A123"}
    assert order["spans"]["tool_calls"] == [
        {
            "name": "lookup_order",
            "arguments": '{"order_id": "A123"}',
            "result": "A123: shipped on 3 March, arriving 5 March",
        }
    ]
    # Two model calls (the tool call, then the answer), 50 tokens in each, as the function model counts them; the
    # first chunk's time from `gen_ai.client.operation.time_to_first_chunk`.
    assert order["spans"]["input_tokens"] == 100
    assert order["spans"]["ttfc_ms"] is not None and order["spans"]["ttfc_ms"] < order["spans"]["generation_ms"]
    assert not any("never sent" in w or "no spans arrived" in w for w in streamed["warnings"] + spanned["warnings"])


def test_without_the_middleware_the_agent_s_own_traces_join_by_the_thread_id(
    ws: Path, capsys: pytest.CaptureFixture[str], traced_agent: Callable[[bool], TracedAgent]
) -> None:
    # Each request starts a trace of its own; its spans carry gen_ai.conversation.id = the threadId sent (the case id).
    outcome, report = traced_run(ws, capsys, traced_agent(False), "ag-ui")
    assert verdicts(report) == VERDICTS
    for case_id, case in by_id(report).items():
        spans = case["trace"]["spans"]
        assert (spans["joined_by"], spans["conversation_ids"]) == (["conversation"], [case_id])
        assert spans["server_ms"] is None  # no span of its continues ragjudge's
        assert [t["name"] for t in spans["tool_calls"]] == [t["name"] for t in case["trace"]["tool_calls"]]
    assert not any("never sent" in w or "no spans arrived" in w for w in report["warnings"]), report["warnings"]
    assert outcome.code == 1


def test_probe_says_the_agent_starts_traces_of_its_own(
    ws: Path, capsys: pytest.CaptureFixture[str], traced_agent: Callable[[bool], TracedAgent]
) -> None:
    agent = traced_agent(False)
    configure(ws, agent, "ag-ui")
    code, out, _ = probe(capsys, "--question", Q_ORDER)
    spans = section(out, "spans")
    assert spans[2:4] == [
        "  4 span(s) arrived, joined by conversation",
        "  note: the service started a trace of its own (joined by its conversation id): it does not continue "
        "`traceparent`",
    ], out
    assert code == 0, out
    # The plain route sends no conversation id: nothing joins, and probe names the one-line fix.
    configure(ws, agent, "plain")
    code, out, _ = probe(capsys, "--question", Q_ORDER)
    spans = section(out, "spans")
    assert spans[2] == "  no span arrived for this question"
    assert spans[3].startswith(
        "  hint: 4 span(s) came in traces ragjudge never sent: the service starts a new trace per request instead of "
        "continuing `traceparent` (wrap its ASGI app in opentelemetry-instrumentation-asgi's OpenTelemetryMiddleware"
    ), out
    assert code == 1


RETRIEVAL_CASES: list[dict[str, Any]] = [
    {"id": "refund", "question": Q_REFUND, "golden_context_ids": ["refund-policy"]},
    {"id": "shipping", "question": Q_SHIPPING, "golden_context_ids": ["shipping-times"]},
]


def test_a_declared_retrieval_tool_s_results_give_recall_and_faithfulness(
    ws: Path, capsys: pytest.CaptureFixture[str], traced_agent: Callable[[bool], TracedAgent]
) -> None:
    # The agent retrieves with its `search_docs` tool; its plain route shows only the answer. Named in
    # traces.retrieval_tools, each call's result (a JSON list of {id, text}) is the passages.
    (ws / "cases.yaml").write_text(yaml.safe_dump(RETRIEVAL_CASES), encoding="utf-8")
    agent = traced_agent(True)
    configure(ws, agent, "plain", retrieval_tools=["search_docs"])
    outcome = run(capsys, "run", "--report", "report.json")
    report = load(ws / "report.json")
    for case_id, golden in (("refund", "refund-policy"), ("shipping", "shipping-times")):
        case = by_id(report)[case_id]
        assert case["metrics"]["context_recall"] == 1.0 and case["metrics"]["faithfulness"] == 1.0, case
        assert case["trace"]["passages"][0] == {"id": golden, "source": "trace"}
        assert case["trace"]["spans"]["passages_from"] == "retrieval_tools"
        assert case["status"] == "pass"
    assert outcome.code == 0, outcome.err
    # Not named: the same run cannot see what was retrieved, says so once, and names the key.
    configure(ws, agent, "plain")
    run(capsys, "run", "--report", "report.json")
    report = load(ws / "report.json")
    assert all(c["metrics"]["context_recall"] is None for c in report["cases"])
    [warning] = [w for w in report["warnings"] if "carried retrieved documents" in w]
    assert warning.endswith("or does it retrieve with a tool (name it in traces.retrieval_tools)?")
    # probe names the tool whose result reads as documents.
    code, out, _ = probe(capsys, "--question", Q_REFUND)
    # The reply shows none; with traces: set, probe does not call them lost before the spans are read.
    assert "  passages: none in the reply: the spans below may give them (traces:)\n" in out
    passages = next(line for line in section(out, "spans") if line.startswith("  passages:"))
    assert passages.endswith("; if it retrieves with a tool, name it: traces.retrieval_tools: [search_docs]"), out
    assert code == 0, out
