"""`ragjudge run` against a RAG service on the OpenAI Responses API (`preset: openai-responses`), the loopback
`FakeResponsesRag`: answers streamed and whole, passages from a `file_search_call`'s results, a conversation's
history in `input`. Every failure the API reports is a case error quoting it, never a pass or a decline, with the
protocol declared and without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_run_end_to_end import Outcome, by_id, load, run, write_config
from tests.fakes.responses_server import DECLINE_EN, DECLINE_ZH, FAILED_ERROR, STREAM_ERROR, FakeResponsesRag

BODY = (
    '{"model": {{ model | tojson }}, "input": {{ messages | tojson }}, "stream": true, '
    '"include": ["file_search_call.results"]}'
)
NO_STREAM = BODY.replace('"stream": true', '"stream": false')
# A team whose document ids live in each result's attributes, not in the API's `file_id`.
PROTOCOL = {
    "extends": "openai-responses",
    "passages": {
        "where": {"type": "response.output_item.done", "item.type": "file_search_call"},
        "path": "item.results",
        "id": "attributes.doc_id",
        "text": "text",
        "title": "filename",
    },
}
ENDPOINT: dict[str, Any] = {"preset": "openai-responses", "model": "gpt-4o-mini", "body": BODY, "protocol": PROTOCOL}
CASE_RULES = {"context_recall": ">= 1.0", "latency_ms": "<= 10000"}

Q_WARRANTY = "Is there a warranty on the headphones?"
Q_MONEY = "And if I want my money back?"
A_REFUND = "Refunds are issued within 14 days of the return being received. [refund-policy]"
A_WARRANTY = "Every device carries a 12-month limited warranty. [warranty]"
CASES: list[dict[str, Any]] = [
    {
        "id": "refund-en",
        "question": "How long do refunds take?",
        "golden_context_ids": ["refund-policy"],
        "must_mention": ["14 days"],
    },
    {
        "id": "shipping",
        "question": "How fast is express shipping?",
        "golden_context_ids": ["shipping-times"],
        "must_mention": ["2 business days"],
    },
    {"id": "refund-zh", "question": "退款多久到账？", "golden_context_ids": ["退款政策"], "must_mention": ["14 天"]},
    {"id": "oos-en", "question": "What's the weather in Paris?", "category": "out_of_scope"},
    {"id": "oos-zh", "question": "明天股票会涨吗？", "category": "out_of_scope"},
    {
        "id": "chat",
        "turns": [
            {"question": Q_WARRANTY, "golden_context_ids": ["warranty"], "must_mention": ["12-month"]},
            {"question": Q_MONEY, "golden_context_ids": ["refund-policy"], "must_mention": ["14 days"]},
        ],
    },
]
SINGLE = ["refund-en", "shipping", "refund-zh", "oos-en", "oos-zh"]
ALL = [*SINGLE, "chat"]
ANSWERS = {
    "refund-en": A_REFUND,
    "shipping": "Express shipping takes 2 business days. [shipping-times]",
    "refund-zh": "退款将在收到退货后 14 天内退回。 [退款政策]",
    "oos-en": DECLINE_EN,
    "oos-zh": DECLINE_ZH,
}

FAILED = f"endpoint error: the response failed: {FAILED_ERROR['message']}"
INCOMPLETE = "endpoint error: the response is incomplete: max_output_tokens"
ERROR_EVENT = f"endpoint error: the stream sent an error event: {STREAM_ERROR['message']}"
NOT_ASKED = "turns 2 to 2: not evaluated: turn 1 got no reply, and this turn follows it"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def _run(
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    *,
    cases: list[dict[str, Any]] = CASES,
    case_rules: dict[str, str] = CASE_RULES,
    **endpoint: Any,
) -> tuple[Outcome, dict[str, Any], FakeResponsesRag]:
    with FakeResponsesRag(mode) as rag:
        url = f"{rag.base_url}/responses"
        write_config(ws, url, cases, case_rules=case_rules, endpoint={**ENDPOINT, **endpoint})
        outcome = run(capsys, "run", "--report", "report.json")
    return outcome, load(ws / "report.json"), rag


def _statuses(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {cid: (c["status"], c["failed_conditions"]) for cid, c in by_id(report).items()}


def _all_errors(reasons: dict[str, str]) -> dict[str, tuple[str, list[str]]]:
    """Every single case an error with its reason; the conversation errored at turn 1, turn 2 never asked."""
    out = {cid: ("error", [reasons[cid]]) for cid in SINGLE}
    out["chat"] = ("error", [f"turn 1: {reasons['chat']}", NOT_ASKED])
    return out


def test_a_streamed_run_passes_reading_answers_passages_and_history(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, report, rag = _run(ws, capsys, "healthy")
    assert outcome.code == 0, outcome.out
    assert report["verdict"] == "pass"
    assert _statuses(report) == {cid: ("pass", []) for cid in ALL}
    cases = by_id(report)
    assert {cid: cases[cid]["trace"]["answer"] for cid in SINGLE} == ANSWERS
    assert [cases[cid]["trace"]["refused"] for cid in SINGLE] == [False, False, False, True, True]
    # Passages are the file_search results, each id read from its attributes.doc_id (not the API's file-... id).
    asked = [cases[cid] for cid in SINGLE[:3]] + cases["chat"]["turns"]
    assert [(c["trace"]["retrieved_ids"], c["metrics"]["context_recall"]) for c in asked] == [
        (["refund-policy"], 1.0),
        (["shipping-times"], 1.0),
        (["退款政策"], 1.0),
        (["warranty"], 1.0),
        (["refund-policy"], 1.0),
    ]
    turns = cases["chat"]["turns"]
    assert [(t["turn"], t["status"], t["trace"]["answer"]) for t in turns] == [
        (1, "pass", A_WARRANTY),
        (2, "pass", A_REFUND),
    ]
    # Every streamed reply is timed to its first text delta, within its latency.
    timed = [cases[cid]["trace"] for cid in SINGLE] + [t["trace"] for t in turns]
    for trace in timed:
        assert isinstance(trace["ttft_ms"], float) and 0 < trace["ttft_ms"] <= trace["latency_ms"], trace
    assert report["suite"]["p95_ttft_ms"] == max(t["ttft_ms"] for t in timed)  # nearest rank of 7: the slowest
    assert report["suite"]["endpoint_error_rate"] == 0.0
    # Seven calls, each the body docs/streams.md shows; turn 2's `input` carries turn 1 as asked and as answered.
    bodies = rag.bodies
    assert len(bodies) == 7
    assert {(b["model"], b["stream"], tuple(b["include"])) for b in bodies} == {
        ("gpt-4o-mini", True, ("file_search_call.results",))
    }
    (to_turn_2,) = [b for b in bodies if b["input"][-1]["content"] == Q_MONEY]
    assert to_turn_2["input"] == [
        {"role": "user", "content": Q_WARRANTY},
        {"role": "assistant", "content": A_WARRANTY},
        {"role": "user", "content": Q_MONEY},
    ]
    (to_refund,) = [b for b in bodies if b["input"][-1]["content"] == "How long do refunds take?"]
    assert to_refund["input"] == [{"role": "user", "content": "How long do refunds take?"}]


CUT = {
    "refund-en": "endpoint error: stream ended before its end (12 events, 19 characters)",
    "shipping": "endpoint error: stream ended before its end (12 events, 23 characters)",
    "refund-zh": "endpoint error: stream ended before its end (12 events, 3 characters)",
    "oos-en": "endpoint error: stream ended before its end (12 events, 13 characters)",
    "oos-zh": "endpoint error: stream ended before its end (12 events, 3 characters)",
    "chat": "endpoint error: stream ended before its end (12 events, 21 characters)",
}


@pytest.mark.parametrize(
    ("mode", "reasons", "dominant"),
    [
        ("failed", dict.fromkeys(ALL, FAILED), f"(5 of 6): {FAILED}"),
        ("incomplete", dict.fromkeys(ALL, INCOMPLETE), f"(5 of 6): {INCOMPLETE}"),
        ("error", dict.fromkeys(ALL, ERROR_EVENT), f"(5 of 6): {ERROR_EVENT}"),
        ("error_nested", dict.fromkeys(ALL, ERROR_EVENT), f"(5 of 6): {ERROR_EVENT}"),
        # 12 events: created, in_progress, the search item (added, 3 phases, done), the message item and its part
        # added, then 3 text deltas (the fake's partial_deltas) and the close.
        ("cut", CUT, f"(2 of 6): {CUT['refund-zh']}"),
    ],
)
def test_a_failed_stream_is_an_error_for_every_case_even_out_of_scope(
    ws: Path, capsys: pytest.CaptureFixture[str], mode: str, reasons: dict[str, str], dominant: str
) -> None:
    outcome, report, rag = _run(ws, capsys, mode)
    assert outcome.code == 3, outcome.out
    assert _statuses(report) == _all_errors(reasons)
    assert [(t["turn"], t["status"]) for t in by_id(report)["chat"]["turns"]] == [(1, "error"), (2, "not evaluated")]
    assert rag.call_count == 6  # turn 2 was never sent
    suite = report["suite"]
    assert (suite["passed"], suite["errored"], suite["endpoint_error_rate"]) == (0, 6, 1.0)
    assert report["verdict"] == "error"
    assert report["error_reason"] == f"all 6 cases errored: the verdict is error; the error that dominated {dominant}"


def test_a_response_in_one_json_body_is_read_from_its_output_items(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, report, rag = _run(ws, capsys, "healthy", body=NO_STREAM)
    assert outcome.code == 0, outcome.out
    assert [b["stream"] for b in rag.bodies] == [False] * 7
    assert _statuses(report) == {cid: ("pass", []) for cid in ALL}
    cases = by_id(report)
    assert {cid: cases[cid]["trace"]["answer"] for cid in SINGLE} == ANSWERS
    assert {cid: cases[cid]["trace"]["ttft_ms"] for cid in SINGLE} == dict.fromkeys(SINGLE)
    assert [t["trace"]["retrieved_ids"] for t in cases["chat"]["turns"]] == [["warranty"], ["refund-policy"]]
    assert cases["refund-zh"]["trace"]["retrieved_ids"] == ["退款政策"]
    assert cases["refund-zh"]["metrics"]["context_recall"] == 1.0
    # Without `include` the API leaves `results` null: what was retrieved is unknown, never "nothing".
    body = NO_STREAM.replace(', "include": ["file_search_call.results"]', "")
    outcome, report, _ = _run(ws, capsys, "healthy", cases=CASES[:1], body=body)
    assert outcome.code == 3, outcome.out
    assert _statuses(report) == {
        "refund-en": (
            "error",
            [
                "context_recall unknown: the service exposes no passages "
                "(endpoint.response.retrieved is not mapped and the reply has none)"
            ],
        )
    }


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("failed", FAILED),
        ("incomplete", INCOMPLETE),
        ("cut", "endpoint error: connection dropped while reading the reply after 1 attempt"),
    ],
)
def test_a_failed_json_response_is_an_error_not_a_crash(
    ws: Path, capsys: pytest.CaptureFixture[str], mode: str, reason: str
) -> None:
    # A failed or incomplete Response once raised inside the HTTP read and crashed the run (exit 3, no report).
    outcome, report, _ = _run(ws, capsys, mode, body=NO_STREAM)
    assert outcome.code == 3, outcome.out
    assert "internal error" not in outcome.err
    assert _statuses(report) == _all_errors(dict.fromkeys(ALL, reason))


def test_an_http_500_is_an_error_quoting_the_body(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeResponsesRag("http500") as rag:
        url = f"{rag.base_url}/responses"
        write_config(ws, url, CASES[:1], case_rules=CASE_RULES, endpoint=ENDPOINT)
        outcome = run(capsys, "run", "--report", "report.json")
    assert outcome.code == 3, outcome.out
    said = (
        '{"error":{"message":"The server had an error while processing your request. Sorry about that!",'
        '"type":"server_error","param":null,"code":null}}'
    )
    reason = f"endpoint error: HTTP 500 from POST {url} after 1 attempt: {said}"
    assert _statuses(load(ws / "report.json")) == {"refund-en": ("error", [reason])}
    assert rag.call_count == 1  # retries: 0


GENERIC: dict[str, Any] = {
    "preset": None,
    "model": None,
    "protocol": None,
    "body": BODY.replace("{{ model | tojson }}", '"gpt-4o-mini"'),
    "response": {"answer_delta": "delta"},
}


@pytest.mark.parametrize("mode", ["healthy", "failed", "incomplete"])
def test_without_a_declared_protocol_a_failed_response_is_still_an_error(
    ws: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    # No protocol: the generic reader. A `response.failed` used to read as an empty answer, a decline: the in-scope
    # cases failed as "declined a question the corpus covers" and both out-of-scope cases passed.
    rules = {"latency_ms": "<= 10000"}
    outcome, report, _ = _run(ws, capsys, mode, case_rules=rules, **GENERIC)
    if mode == "healthy":
        assert outcome.code == 0, outcome.out
        assert _statuses(report) == {cid: ("pass", []) for cid in ALL}
        assert {cid: c["trace"]["answer"] for cid, c in by_id(report).items() if cid in SINGLE} == ANSWERS
        return
    assert outcome.code == 3, outcome.out
    assert _statuses(report) == _all_errors(dict.fromkeys(ALL, FAILED if mode == "failed" else INCOMPLETE))
    assert report["suite"]["endpoint_error_rate"] == 1.0
