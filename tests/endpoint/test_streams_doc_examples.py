"""Every YAML example in docs/streams.md loads and runs against a loopback fake of the service it describes, so a
documented example can never crash (the Dify-style one did: `error: {message: ...}` was a TypeError, exit 3)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.endpoint.test_protocols import AI_OK, FILE_SEARCH, RETRIEVAL_TOKEN_DONE
from tests.endpoint.test_receiving import openai_chunk, sse

from ragjudge.config.loader import load_config
from ragjudge.endpoint.client import EndpointClient

DOC = Path(__file__).parents[2] / "docs" / "streams.md"
EXAMPLES = [
    block for block in re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S) if "endpoint:" in block
]

_RESPONSES = [
    ("response.created", {"type": "response.created", "response": {"status": "in_progress"}}),
    ("response.output_item.done", {"type": "response.output_item.done", "item": FILE_SEARCH}),
    ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "Refunds take 14 days."}),
    ("response.completed", {"type": "response.completed", "response": {"status": "completed"}}),
]
_CHAT = [("", openai_chunk("")), ("", openai_chunk("Refunds take 14 days.")), ("", openai_chunk(None, "stop"))]
_AG_UI = [
    ("", {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
    ("", {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
    ("", {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Refunds take 14 days."}),
    ("", {"type": "TEXT_MESSAGE_END", "messageId": "m"}),
    ("", {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
]
STREAMS: dict[str, list[tuple[str, Any]]] = {
    "ai-sdk": [*AI_OK[:-3], ("", {"type": "finish", "finishReason": "stop"}), ("", "[DONE]")],
    "openai-responses": _RESPONSES,
    "openai-chat": [*_CHAT, ("", "[DONE]")],
    "ag-ui": _AG_UI,
    "declared": RETRIEVAL_TOKEN_DONE,
}
"""The stream each kind of example is run against: what the service its comment describes sends."""


def _kind(endpoint: dict[str, Any]) -> str:
    protocol = endpoint.get("protocol")
    if isinstance(protocol, str):
        return protocol
    if isinstance(protocol, dict) and protocol.get("extends"):
        return str(protocol["extends"])
    return str(endpoint.get("preset") or "declared")


def test_the_page_has_its_examples() -> None:
    assert len(EXAMPLES) >= 5
    assert {_kind(yaml.safe_load(block)["endpoint"]) for block in EXAMPLES} <= set(STREAMS)


@pytest.mark.parametrize("block", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_every_example_loads_and_reads_its_service(tmp_path: Path, serve, make_case, block: str) -> None:
    data = yaml.safe_load(block)
    kind = _kind(data["endpoint"])
    events = STREAMS[kind]
    server = serve(
        lambda ex: ex.stream([sse(d if isinstance(d, str) else json.dumps(d), name or None) for name, d in events])
    )
    data["endpoint"]["url"] = server.url
    path = tmp_path / "ragjudge.yml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    config = load_config(path)
    result = EndpointClient(config.endpoint, server.url).call(make_case())
    assert result.error is None, f"{kind}: {result.error}"
    assert result.trace is not None and result.trace.answer.replace("Refunds take 14 days.", "") == ""
    assert result.trace.answer
