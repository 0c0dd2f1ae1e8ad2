"""`ragjudge probe` and `ragjudge run` against a real Pydantic AI agent served over AG-UI on loopback
(tests/fakes/pydantic_ai_server.py): from a config of only the URL, probe's first suggestion is `preset: ag-ui`;
with it the agent's 12 cases (English and Chinese, two out of scope, an order lookup, an archived-policy answer
key that fails naming the contradicted point, a two-turn conversation) read right, its tool calls gated; with its
model failing every case is an error quoting the `RUN_ERROR` message and the run is exit 3; a stream cut before
`RUN_FINISHED` by a proxy is an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.commands.probing import hints, probe
from tests.commands.test_run_end_to_end import by_id, load, run
from tests.fakes.responder_server import Exchange, ResponderServer

CASES: list[dict[str, Any]] = [
    {
        "id": "refund-en",
        "question": "How long do refunds take?",
        "golden_context_ids": ["refund-policy"],
        "must_mention": ["14 days"],
        "tools": {"called": ["search_docs"], "not_called": ["issue_refund"]},
    },
    {
        "id": "shipping-en",
        "question": "How long does express shipping take?",
        "golden_context_ids": ["shipping-times"],
        "must_mention": ["2 business days"],
    },
    {"id": "paypal", "question": "Do you accept PayPal?", "golden_context_ids": ["paypal"], "must_mention": ["PayPal"]},
    {"id": "refund-zh", "question": "退款需要多久？", "golden_context_ids": ["退款政策"], "must_mention": ["14天"]},
    {
        "id": "shipping-zh",
        "question": "快递配送需要几天？",
        "golden_context_ids": ["运费"],
        "must_mention": ["2个工作日"],
    },
    # An answer key written against last year's policy: the agent's 14 days contradicts it.
    {
        "id": "archived-refund",
        "question": "How long do refunds take?",
        "golden_context_ids": ["refund-policy"],
        "expected": ["Refunds are issued within 7 days of the return reaching our warehouse."],
    },
    {"id": "visa", "question": "Can I pay with Visa?", "golden_context_ids": ["paypal"], "must_mention": ["Visa"]},
    {
        "id": "standard-zh",
        "question": "标准配送需要几天？",
        "golden_context_ids": ["运费"],
        "must_mention": ["5个工作日"],
    },
    {"id": "penguins", "question": "Can penguins fly?", "category": "out-of-scope"},
    {"id": "stocks-zh", "question": "明天股市会涨吗？", "category": "超纲"},
    {
        "id": "order-a123",
        "question": "Where is my order A123?",
        "must_mention": ["shipped"],
        "tools": {"called": ["lookup_order"], "args": {"lookup_order": {"order_id": "A123"}}},
    },
    {
        "id": "order-chat",
        "turns": [
            {"question": "I placed order A123 last week.", "tools": {"not_called": ["issue_refund"]}},
            {
                "question": "When will it arrive?",
                "must_mention": ["5 March"],
                "tools": {"called": ["lookup_order"], "args": {"lookup_order": {"order_id": "A123"}}},
            },
        ],
    },
]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(CASES, allow_unicode=True), encoding="utf-8")
    return tmp_path


def _config(ws: Path, url: str, **endpoint: Any) -> None:
    config = {
        "endpoint": {"url": url, **endpoint},
        "judge": {"provider": "offline"},
        "cases": ["cases.yaml"],
        "gate": {"case": {"context_recall": ">= 1.0", "reference_contradictions": "<= 0"}},
    }
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


WIRED = {"preset": "ag-ui", "retries": 0, "response": {"retrieval_tool": "search_docs"}}


def test_from_only_the_url_probe_s_first_suggestion_is_the_ag_ui_preset(
    ws: Path, capsys: pytest.CaptureFixture[str], pydantic_ai_agent: Any
) -> None:
    _config(ws, pydantic_ai_agent("healthy"))
    _code, out, _err = probe(capsys, "--question", "How long do refunds take?")
    # The agent refuses ragjudge's default body, naming AG-UI's run input fields: the first hint is the preset.
    assert hints(out)[0] == (
        "  hint: /agent looks like an AG-UI agent route: set `preset: ag-ui` under endpoint: (it sends the body "
        "that API takes and reads its stream)"
    )
    # The second try, with the preset: the answer maps, and the passages are named by the tool that returns them,
    # not by a path to one call (tool_calls.0.result would be lookup_order's on an order question).
    _config(ws, pydantic_ai_agent("healthy"), preset="ag-ui")
    _code, out, _err = probe(capsys, "--question", "How long do refunds take?")
    assert (
        "  retrieved: nothing (tried retrieved, sources, contexts): search_docs's calls return them: set "
        "retrieval_tool: search_docs\n" in out
    ), out
    assert "  response:\n    retrieval_tool: search_docs\n" in out
    # The third, as pasted: it maps.
    _config(ws, pydantic_ai_agent("healthy"), preset="ag-ui", response={"retrieval_tool": "search_docs"})
    code, out, _err = probe(capsys, "--question", "How long do refunds take?")
    assert "\nstream: " in out and "read by protocol ag-ui" in out
    assert '  answer: "Refunds are issued within 14 days of the return reaching our warehouse."' in out
    assert "  tool calls: 1 (never part of the answer)" in out
    assert code == 0, out


def test_the_healthy_agent_s_cases_read_right(
    ws: Path, capsys: pytest.CaptureFixture[str], pydantic_ai_agent: Any
) -> None:
    _config(ws, pydantic_ai_agent("healthy"), **WIRED)
    outcome = run(capsys, "run", "--report", "report.json")
    report = load(ws / "report.json")
    cases = by_id(report)
    failing = {cid: c["failed_conditions"] for cid, c in cases.items() if c["status"] != "pass"}
    assert failing == {
        "archived-refund": [
            'contradicts the reference: "Refunds are issued within 7 days of the return reaching our warehouse." '
            '(answer: "Refunds are issued within 14 days of the return reaching our warehouse", from passage '
            "refund-policy)",
            "reference_contradictions 1 > 0",
        ]
    }, outcome.out
    assert len(cases) == 12
    refund = cases["refund-en"]["trace"]
    assert refund["protocol"] == "ag-ui" and refund["retrieved_ids"][0] == "refund-policy"
    assert [t["name"] for t in refund["tool_calls"]] == ["search_docs"]
    assert not refund["answer"].startswith("{")  # never the tool's arguments
    assert cases["order-a123"]["tools_held"] == "held"
    second = cases["order-chat"]["turns"][1]
    assert second["tools_held"] == "held" and "5 March" in second["trace"]["answer"]
    assert [t["arguments"] for t in second["trace"]["tool_calls"]] == [{"order_id": "A123"}]
    assert report["suite"]["tool_condition_accuracy"] == 1.0
    assert report["suite"]["endpoint_error_rate"] == 0.0
    assert outcome.code == 0, outcome.out


def test_an_agent_that_refunds_on_a_question_fails_the_case_naming_the_call(
    ws: Path, capsys: pytest.CaptureFixture[str], pydantic_ai_agent: Any
) -> None:
    _config(ws, pydantic_ai_agent("refunder"), **WIRED)
    outcome = run(capsys, "run", "--report", "report.json")
    cases = by_id(load(ws / "report.json"))
    assert (cases["refund-en"]["status"], cases["refund-en"]["failed_conditions"]) == (
        "fail",
        ["called issue_refund, which this case forbids"],
    )
    assert outcome.code == 1


def test_with_its_model_failing_every_case_is_an_error_quoting_run_error(
    ws: Path, capsys: pytest.CaptureFixture[str], pydantic_ai_agent: Any
) -> None:
    _config(ws, pydantic_ai_agent("failing"), **WIRED)
    outcome = run(capsys, "run", "--report", "report.json")
    report = load(ws / "report.json")
    cases = by_id(report)
    assert {cid: c["status"] for cid, c in cases.items()} == {cid: "error" for cid in cases}
    assert cases["penguins"]["failed_conditions"] == ["endpoint error: the run failed: upstream LLM unavailable"]
    assert report["suite"]["passed"] == 0
    assert outcome.code == 3, outcome.out


def test_a_stream_cut_before_run_finished_is_an_error(
    ws: Path, capsys: pytest.CaptureFixture[str], pydantic_ai_agent: Any
) -> None:
    upstream = pydantic_ai_agent("healthy")

    def proxy(ex: Exchange) -> None:
        """Forwards the agent's stream, closing the connection after its first text."""
        reply = requests.post(upstream, data=ex.request.body, headers={"Content-Type": "application/json"}, timeout=10)
        events = [e + "\n\n" for e in reply.text.split("\n\n") if e.strip()]
        first_text = next(i for i, e in enumerate(events) if "TEXT_MESSAGE_CONTENT" in e)
        ex.stream([e.encode() for e in events[: first_text + 1]])

    with ResponderServer(proxy) as server:
        _config(ws, server.url, **WIRED)
        outcome = run(capsys, "run", "--report", "report.json")
    cases = by_id(load(ws / "report.json"))
    assert cases["penguins"]["status"] == "error"
    assert cases["refund-en"]["failed_conditions"][0].startswith("endpoint error: stream ended before its end (")
    assert outcome.code == 3, outcome.out


def test_a_missing_install_skips_here_but_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from tests.fakes import pydantic_ai_server

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="pydantic_ai, ag_ui, uvicorn, starlette not installed"):
        pydantic_ai_server.require_pydantic_ai()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI the Pydantic AI tests must run, not skip"):
        pydantic_ai_server.require_pydantic_ai()
