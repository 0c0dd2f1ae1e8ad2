"""`ragjudge run` gating tool calls: a case about order A123 passes only when `lookup_order` was called with
`order_id: "A123"`, a service that calls `issue_refund` fails the case that forbids it naming the call, the same
conditions read right from AG-UI, the AI SDK and OpenAI Chat, and a service exposing no tool calls leaves them
unknown with one warning; `tool_condition_accuracy` is the suite's figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.endpoint.test_receiving import openai_chunk, sse
from tests.fakes.responder_server import Exchange, ResponderServer

CASES = [
    {
        "id": "order",
        "question": "Where is my order A123?",
        "tools": {
            "called": ["lookup_order"],
            "order": "superset",
            "args": {"lookup_order": {"order_id": "A123"}},
            "not_called": ["issue_refund"],
        },
    },
    {"id": "refund-question", "question": "How do refunds work?", "tools": {"not_called": ["issue_refund"]}},
]
ANSWERS = {"Where is my order A123?": "Order A123 has shipped.", "How do refunds work?": "Refunds take 14 days."}


def _question(body: dict[str, Any]) -> str:
    last = body["messages"][-1]
    if "parts" in last:
        return str(last["parts"][0]["text"])
    return str(last["content"])


def _plan(question: str, variant: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls the agent makes: (tool, arguments)."""
    if "A123" in question:
        return [("lookup_order", {"order_id": "A124" if variant == "wrong-order" else "A123"})]
    calls = [("search_docs", {"query": "refunds"})]
    if variant == "refunder":
        calls.append(("issue_refund", {"order_id": "A123"}))
    return calls


def _ag_ui(question: str, variant: str) -> list[bytes | float]:
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    for i, (tool, args) in enumerate(_plan(question, variant)):
        events += [
            {"type": "TOOL_CALL_START", "toolCallId": f"c{i}", "toolCallName": tool},
            {"type": "TOOL_CALL_ARGS", "toolCallId": f"c{i}", "delta": json.dumps(args)},
            {"type": "TOOL_CALL_END", "toolCallId": f"c{i}"},
            {"type": "TOOL_CALL_RESULT", "messageId": f"r{i}", "toolCallId": f"c{i}", "content": "ok"},
        ]
    events += [
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": ANSWERS[question]},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    return [sse(e) for e in events]


def _ai_sdk(question: str, variant: str) -> list[bytes | float]:
    events: list[Any] = [{"type": "start"}]
    for i, (tool, args) in enumerate(_plan(question, variant)):
        events += [
            {"type": "tool-input-start", "toolCallId": f"c{i}", "toolName": tool},
            {"type": "tool-input-available", "toolCallId": f"c{i}", "toolName": tool, "input": args},
            {"type": "tool-output-available", "toolCallId": f"c{i}", "output": "ok"},
        ]
    events += [{"type": "text-delta", "id": "t", "delta": ANSWERS[question]}, {"type": "finish"}, "[DONE]"]
    return [sse(e) for e in events]


def _openai(question: str, variant: str) -> list[bytes | float]:
    events: list[Any] = [openai_chunk("")]
    for i, (tool, args) in enumerate(_plan(question, variant)):
        call = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": tool, "arguments": ""}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
        more = {"index": i, "function": {"arguments": json.dumps(args)}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]})
    events += [openai_chunk(ANSWERS[question]), openai_chunk(None, "stop"), "[DONE]"]
    return [sse(e) for e in events]


SERVICES = {
    "ag-ui": ({"preset": "ag-ui"}, _ag_ui),
    "ai-sdk": ({"preset": "ai-sdk"}, _ai_sdk),
    "openai-chat": ({"preset": "openai-chat", "model": "m"}, _openai),
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def _run(ws: Path, capsys: pytest.CaptureFixture[str], protocol: str, variant: str) -> tuple[int, dict[str, Any]]:
    endpoint, stream = SERVICES[protocol]

    def answer(ex: Exchange) -> None:
        ex.stream(stream(_question(ex.request.json()), variant))

    with ResponderServer(answer) as server:
        write_config(ws, server.url, CASES, endpoint=endpoint)
        outcome = run(capsys, "run", "--report", "report.json")
    return outcome.code, load(ws / "report.json")


@pytest.mark.parametrize("protocol", list(SERVICES))
def test_the_conditions_hold_for_a_healthy_agent(ws: Path, capsys: pytest.CaptureFixture[str], protocol: str) -> None:
    code, report = _run(ws, capsys, protocol, "healthy")
    cases = by_id(report)
    assert {cid: (c["status"], c["failed_conditions"], c["tools_held"]) for cid, c in cases.items()} == {
        "order": ("pass", [], "held"),
        "refund-question": ("pass", [], "held"),
    }
    assert [(t["name"], t["arguments"], t["position"]) for t in cases["order"]["trace"]["tool_calls"]] == [
        ("lookup_order", {"order_id": "A123"}, 1)
    ]
    assert cases["order"]["trace"]["answer"] == "Order A123 has shipped."  # never the tool's arguments
    assert report["suite"]["tool_condition_accuracy"] == 1.0
    assert code == 0


@pytest.mark.parametrize("protocol", list(SERVICES))
@pytest.mark.parametrize(
    ("variant", "failing", "reason"),
    [
        ("wrong-order", "order", 'lookup_order called with order_id "A124", expected "A123"'),
        ("refunder", "refund-question", "called issue_refund, which this case forbids"),
    ],
)
def test_a_broken_agent_fails_the_case_naming_the_call(
    ws: Path, capsys: pytest.CaptureFixture[str], protocol: str, variant: str, failing: str, reason: str
) -> None:
    code, report = _run(ws, capsys, protocol, variant)
    cases = by_id(report)
    assert (cases[failing]["status"], cases[failing]["failed_conditions"], cases[failing]["tools_held"]) == (
        "fail",
        [reason],
        "failed",
    )
    assert report["suite"]["tool_condition_accuracy"] == 0.5
    assert code == 1


def test_a_service_that_exposes_no_tool_calls_leaves_the_conditions_unknown(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def answer(ex: Exchange) -> None:
        ex.json({"answer": ANSWERS[ex.request.json()["question"]]})

    with ResponderServer(answer) as server:
        write_config(ws, server.url, CASES)
        run(capsys, "run", "--report", "report.json")
    report = load(ws / "report.json")
    cases = by_id(report)
    assert {cid: (c["failed_conditions"], c["tools_held"]) for cid, c in cases.items()} == {
        "order": ([], "unknown"),
        "refund-question": ([], "unknown"),
    }
    assert report["suite"]["tool_condition_accuracy"] is None
    warned = [w for w in report["warnings"] if "tool conditions" in w]
    assert warned == [
        "2 case(s) have tool conditions but the service exposes no tool calls (cases order, refund-question): "
        "their tool conditions are unknown, neither passed nor failed; use a protocol that streams them "
        "(preset: ag-ui, ai-sdk, openai-chat, openai-responses) or map endpoint.response.tool_calls"
    ]


def test_the_comment_shows_a_failing_case_s_tool_calls_and_main_s_beside_the_pr_s(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint, stream = SERVICES["ag-ui"]
    variant = {"now": "healthy"}

    def answer(ex: Exchange) -> None:
        ex.stream(stream(_question(ex.request.json()), variant["now"]))

    with ResponderServer(answer) as server:
        write_config(ws, server.url, CASES, endpoint=endpoint)
        assert run(capsys, "run", "--report", "main.json").code == 0
        variant["now"] = "refunder"
        outcome = run(
            capsys,
            "run",
            "--report",
            "pr.json",
            "--baseline",
            "main.json",
            "--comment-file",
            "comment.md",
            "--html",
            "pr.html",
        )
    assert outcome.code == 1
    comment = (ws / "comment.md").read_text(encoding="utf-8")
    assert (
        '**Tool calls:** <code>search\\_docs</code> {"query": "refunds"}, <code>issue\\_refund</code> '
        '{"order\\_id": "A123"}'
    ) in comment.splitlines(), comment
    assert "| Tool calls | search\\_docs | search\\_docs → issue\\_refund |" in comment.splitlines(), comment
    regression = by_id(load(ws / "pr.json"))["refund-question"]
    assert regression["change"] == "regression" and regression["baseline"]["tool_calls"] == ["search_docs"]
    html = (ws / "pr.html").read_text(encoding="utf-8")
    assert '<div class="tool-call"><code>issue_refund</code> <span class="text">{"order_id": "A123"}</span>' in html


def test_a_retrieval_tool_the_agent_never_called_is_a_retrieval_failure(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint, stream = SERVICES["ag-ui"]
    cases = [
        {"id": "searched", "question": "How do refunds work?", "golden_context_ids": ["refund-policy"]},
        {"id": "never-searched", "question": "Where is my order A123?", "golden_context_ids": ["refund-policy"]},
    ]

    def answer(ex: Exchange) -> None:
        events = stream(_question(ex.request.json()), "healthy")
        # search_docs returns the refund policy as its result
        ex.stream([e.replace(b'"content": "ok"', b'"content": "[{\\"id\\": \\"refund-policy\\"}]"') for e in events])

    with ResponderServer(answer) as server:
        write_config(ws, server.url, cases, endpoint={**endpoint, "response": {"retrieval_tool": "search_docs"}})
        run(capsys, "run", "--report", "report.json")
    report = by_id(load(ws / "report.json"))
    assert report["searched"]["trace"]["retrieved_ids"] == ["refund-policy"]
    assert report["searched"]["status"] == "pass"
    missed = report["never-searched"]
    assert missed["trace"]["retrieved_ids"] == [] and missed["metrics"]["context_recall"] == 0.0
    assert missed["failed_conditions"][0] == (
        "never called its retrieval tool search_docs: nothing was retrieved (context_recall 0)"
    )


def test_recorded_traces_carry_their_tool_calls_and_conditions(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {
            "id": "order",
            "question": "Where is my order A123?",
            "answer": "Order A123 has shipped.",
            "latencyMs": 300,
            "tools": {"args": {"lookup_order": {"order_id": "A123"}}},
            "tool_calls": [{"name": "lookup_order", "arguments": '{"order_id": "A124"}'}],
        }
    ]
    (ws / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    write_config(ws, "http://127.0.0.1:9/unused", [], suite_rules={})
    run(capsys, "run", "--traces", "traces.jsonl", "--report", "report.json")
    case = by_id(load(ws / "report.json"))["order"]
    assert case["failed_conditions"] == ['lookup_order called with order_id "A124", expected "A123"']
    assert case["trace"]["tool_calls"] == [
        {"name": "lookup_order", "arguments": {"order_id": "A124"}, "result": None, "position": 1}
    ]
