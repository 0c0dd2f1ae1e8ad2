"""`ragjudge run` against the real AI SDK route with a tool (tests/fakes/ai_sdk_app/server.mjs, `/api/chat-tools`:
`streamText` with an order-lookup `tool`, its model calling it through OpenAI `tool_calls` deltas): the call is read
from the tool-input and tool-output parts, never answer text, and the case's tool conditions gate it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.commands.test_run_end_to_end import by_id, load, run
from tests.fakes.ai_sdk_server import RunningAiSdk

CASES = [
    {
        "id": "order-a123",
        "question": "Where is my order A123?",
        "must_mention": ["5 March"],
        "tools": {"called": ["lookup_order"], "args": {"lookup_order": {"order_id": "A123"}}},
    },
    {
        "id": "order-a124",
        "question": "What happened to order A124?",
        "tools": {"args": {"lookup_order": {"order_id": "A123"}}},
    },
]


def test_the_route_s_tool_call_is_read_and_gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(CASES), encoding="utf-8")
    config = {
        "endpoint": {"url": f"{ai_sdk.url}/api/chat-tools", "preset": "ai-sdk", "retries": 0},
        "judge": {"provider": "offline"},
        "cases": ["cases.yaml"],
    }
    (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    outcome = run(capsys, "run", "--report", "report.json")
    cases = by_id(load(tmp_path / "report.json"))
    a123 = cases["order-a123"]
    assert (a123["status"], a123["failed_conditions"], a123["tools_held"]) == ("pass", [], "held"), outcome.out
    assert a123["trace"]["answer"] == "Order A123 shipped on 3 March, arriving 5 March."
    assert a123["trace"]["tool_calls"] == [
        {
            "name": "lookup_order",
            "arguments": {"order_id": "A123"},
            "result": "A123 shipped on 3 March, arriving 5 March",
            "position": 1,
        }
    ]
    a124 = cases["order-a124"]
    assert a124["failed_conditions"] == ['lookup_order called with order_id "A124", expected "A123"']
    assert outcome.code == 1
