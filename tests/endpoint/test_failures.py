"""Outage detection belongs to the reader: every common failure shape, sent in an HTTP 200 before the stream's
normal end, is a case error quoting its message under every preset, a declared protocol with no `error:` (with
and without an `end`), an extended one, and no protocol at all; and a shape turned off by name is read as data."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.endpoint.test_receiving import sse

from ragjudge.config.protocol import FailureShapeName
from ragjudge.endpoint.failures import SHAPES

OUTAGE = "upstream LLM unavailable"
_FINISHED = 'the stream finished with finish reason "error"'

# The 16 cross-family outage shapes: (SSE event name, data), the reason their case error opens with.
SHAPES_SENT: list[tuple[str, tuple[str, Any], str]] = [
    ("event-error-json", ("error", {"message": OUTAGE}), f"the stream sent an error event: {OUTAGE}"),
    ("event-error-text", ("error", OUTAGE), f"the stream sent an error event: {OUTAGE}"),
    ("event-error-detail", ("error", {"detail": OUTAGE}), f"the stream sent an error event: {OUTAGE}"),
    (
        "error-object",
        ("", {"error": {"message": OUTAGE, "type": "server_error"}}),
        f"the stream sent an error event: {OUTAGE}",
    ),
    ("error-string", ("", {"error": OUTAGE}), f"the stream sent an error event: {OUTAGE}"),
    (
        "gateway-chunk-error",
        ("", {"id": "x", "object": "chat.completion.chunk", "choices": [], "error": {"message": OUTAGE}}),
        f"the stream sent an error event: {OUTAGE}",
    ),
    ("ai-sdk-error-part", ("", {"type": "error", "errorText": OUTAGE}), OUTAGE),
    ("responses-error", ("error", {"type": "error", "code": "server_error", "message": OUTAGE}), OUTAGE),
    ("anthropic-error", ("", {"type": "error", "error": {"type": "overloaded_error", "message": OUTAGE}}), OUTAGE),
    ("ag-ui-run-error", ("", {"type": "RUN_ERROR", "message": OUTAGE}), f"the run failed: {OUTAGE}"),
    (
        "ag-ui-run-error-coded",
        ("RUN_ERROR", {"type": "RUN_ERROR", "message": OUTAGE, "code": "MODEL_ERROR", "timestamp": 1}),
        f"the run failed: {OUTAGE}",
    ),
    (
        "response-failed",
        (
            "response.failed",
            {"type": "response.failed", "response": {"status": "failed", "error": {"code": "x", "message": OUTAGE}}},
        ),
        f"the response failed: {OUTAGE}",
    ),
    (
        "chat-finish-error",
        ("", {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "error"}]}),
        _FINISHED,
    ),
    ("ai-sdk-finish-error", ("", {"type": "finish", "finishReason": "error"}), "finish"),
    ("ai-sdk-step-error", ("", {"type": "finish-step", "finishReason": "error"}), _FINISHED),
    ("top-finish-reason-error", ("", {"finish_reason": "error"}), _FINISHED),
]
assert len(SHAPES_SENT) == 16


def _chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


# Each config, with a healthy stream's opening and normal end: the failure is sent between them.
DECLARED_NO_ERROR = {"text": {"event": "token", "path": "text"}, "end": {"event": "done"}}
CONFIGS: dict[str, tuple[dict[str, Any], list[tuple[str, Any]], list[tuple[str, Any]]]] = {
    "preset openai-chat": (
        {"preset": "openai-chat", "model": "m"},
        [("", _chunk(""))],
        [("", _chunk(None, "stop")), ("", "[DONE]")],
    ),
    "preset openai-responses": (
        {"preset": "openai-responses", "model": "m"},
        [("response.created", {"type": "response.created", "response": {"status": "in_progress"}})],
        [("response.completed", {"type": "response.completed", "response": {"status": "completed"}})],
    ),
    "preset ai-sdk": (
        {"preset": "ai-sdk"},
        [("", {"type": "start"}), ("", {"type": "text-start", "id": "t"})],
        [("", {"type": "finish", "finishReason": "stop"}), ("", "[DONE]")],
    ),
    "preset langserve": (
        {"preset": "langserve"},
        [("metadata", {"run_id": "r-1"})],
        [("end", "")],
    ),
    "preset ag-ui": (
        {"preset": "ag-ui"},
        [("", {"type": "RUN_STARTED", "threadId": "t", "runId": "r"})],
        [("", {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})],
    ),
    "declared, no error": (
        {"protocol": DECLARED_NO_ERROR},
        [("token", {"text": ""})],
        [("done", {})],
    ),
    "declared, no error, no end": (
        {"protocol": {"text": {"event": "token", "path": "text"}}},
        [("token", {"text": ""})],
        [("done", {})],
    ),
    "extends ai-sdk, its own error only": (
        {"preset": "ai-sdk", "protocol": {"extends": "ai-sdk", "error": {"where": {"type": "data-error"}}}},
        [("", {"type": "start"})],
        [("", {"type": "finish", "finishReason": "stop"}), ("", "[DONE]")],
    ),
    "none declared": ({"response": {"answer_delta": "text"}}, [("token", {"text": ""})], [("done", {})]),
}


def _wire(events: list[tuple[str, Any]]) -> list[bytes | float]:
    return [sse(data if isinstance(data, str) else json.dumps(data), name or None) for name, data in events]


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize(("shape", "failure", "reason"), SHAPES_SENT, ids=[s[0] for s in SHAPES_SENT])
def test_every_outage_shape_is_a_case_error_under_every_config(
    serve, make_client, make_case, config: str, shape: str, failure: tuple[str, Any], reason: str
) -> None:
    settings, opening, end = CONFIGS[config]
    server = serve(lambda ex: ex.stream(_wire([*opening, failure, *end])))
    result = make_client(server.url, retries=0, **settings).call(make_case(should_answer=False))
    assert result.trace is None, f"{shape} under {config} read as the answer {result.trace.answer!r}"
    assert result.error is not None and result.error.startswith("endpoint error: ")
    assert reason in result.error


def test_the_message_is_masked_and_bounded(serve, make_client, make_case) -> None:
    secret = "sk-live-abcdef123456"
    failure = ("", {"type": "RUN_ERROR", "message": f"key {secret} refused " + "x" * 2000})
    server = serve(lambda ex: ex.stream(_wire([failure])))
    client = make_client(server.url, retries=0, headers={"Authorization": f"Bearer {secret}"})
    result = client.call(make_case())
    assert result.error is not None and result.error.startswith("endpoint error: the run failed: key ")
    assert secret not in result.error
    assert len(result.error) < 400 and result.error.endswith("…")


@pytest.mark.parametrize(
    ("ignored", "event", "answer"),
    [
        ("error-object", {"text": "Refunds take 14 days.", "error": "none of note"}, "Refunds take 14 days."),
        ("type-error", {"type": "error", "text": "Refunds take 14 days."}, "Refunds take 14 days."),
        ("finish-reason-error", {"text": "Refunds take 14 days.", "finish_reason": "error"}, "Refunds take 14 days."),
    ],
)
def test_a_shape_turned_off_by_name_is_read_as_data(
    serve, make_client, make_case, ignored: FailureShapeName, event: dict[str, Any], answer: str
) -> None:
    server = serve(lambda ex: ex.stream(_wire([("token", event), ("done", {})])))
    on = make_client(server.url, retries=0, protocol=DECLARED_NO_ERROR).call(make_case())
    assert on.trace is None and on.error is not None  # on by default, whatever was declared
    off = make_client(server.url, retries=0, protocol=DECLARED_NO_ERROR, ignore_failure_shapes=[ignored])
    result = off.call(make_case())
    assert result.error is None and result.trace is not None and result.trace.answer == answer


def test_turning_a_shape_off_turns_off_the_preset_s_marker_of_that_shape_too(serve, make_client, make_case) -> None:
    events = [("", {"type": "start"}), ("", {"type": "error", "errorText": "not really"}), ("", {"type": "finish"})]
    server = serve(lambda ex: ex.stream(_wire(events)))
    result = make_client(server.url, retries=0, preset="ai-sdk", ignore_failure_shapes=["type-error"]).call(make_case())
    assert result.error is None and result.trace is not None and result.trace.answer == ""


def test_every_shape_is_named_in_the_config_and_documented() -> None:
    import importlib.util
    import sys
    from pathlib import Path

    docs = Path(__file__).parents[2] / "docs"
    assert "<!-- generated: failure-shapes -->" in (docs / "streams.md").read_text(encoding="utf-8")
    sys.path.insert(0, str(docs / "hooks"))
    try:
        spec = importlib.util.spec_from_file_location("ragjudge_docs_hook_failures", docs / "hooks" / "generate.py")
        assert spec is not None and spec.loader is not None
        hook = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(hook)
    finally:
        sys.path.remove(str(docs / "hooks"))
    table = hook.failure_table(SHAPES)
    for shape in SHAPES:
        assert f"| `{shape.name}` |" in table, shape.name
    assert "| `run-error` | AG-UI's `RUN_ERROR`, its `message` | `the run failed: <its message>` |" in table
