"""`ragjudge run` against stand-ins for hayhooks, LangServe, LlamaIndex and plain FastAPI services.

None of them has a boolean refusal field: they decline in English and Chinese sentences. With
only the documented config (a body template and a `response:` mapping) every refusal and every
in-scope decline must be classified right, and the report must say how each was decided.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.fakes.framework_servers import FrameworkServer, doc_hash

from ragjudge.cli import main

CASES = [
    {
        "id": "refund-en",
        "question": "How long do refunds take?",
        "golden_context_ids": ["doc-refund-1"],
        "must_mention": ["5 working days"],
    },
    {
        "id": "damaged",
        "question": "Do refunds for damaged goods need anything?",
        "golden_context_ids": ["doc-refund-3"],
    },
    {"id": "refund-zh", "question": "退款多久到账？", "golden_context_ids": ["doc-zh-refund"]},
    {"id": "weather", "question": "What is the weather in Paris?", "category": "Out-Of-Scope"},
    {"id": "stocks", "question": "明天股市会涨吗？", "category": "超纲"},
    {"id": "declined", "question": "Can I get a refund after 5 days?", "golden_context_ids": ["doc-refund-1"]},
    {"id": "worldcup", "question": "Who won the 1998 World Cup?", "category": "oos"},
]

QUERY_BODY = '{"query": {{ question | tojson }}}'
ENDPOINTS: dict[str, dict[str, Any]] = {
    "hayhooks": {
        "body": QUERY_BODY,
        "response": {
            "answer": "result.answer_builder.answers.0.data",
            "retrieved": "result.answer_builder.answers.0.documents",
            "retrieved_id": "meta.doc_id",
        },
    },
    "langserve": {
        "body": '{"input": {"question": {{ question | tojson }}}}',
        "response": {"answer": "output.answer", "retrieved": "output.context", "retrieved_id": "metadata.source"},
    },
    "llamaindex": {
        "body": QUERY_BODY,
        "response": {
            "answer": "response",
            "retrieved": "source_nodes",
            "retrieved_id": "node.metadata.doc_id",
            "retrieved_text": "node.text",
        },
    },
    "fastapi": {},
}

EXPECTED = {
    "refund-en": ("pass", [], None),
    "damaged": ("pass", [], None),  # "Sorry for the delay! ..." is an answer
    "refund-zh": ("pass", [], None),  # so is "抱歉让您久等了。..."
    "weather": ("pass", [], "builtin"),
    "stocks": ("pass", [], "builtin"),
    "declined": ("fail", ["declined a question the corpus covers"], "builtin"),
    "worldcup": ("fail", ['answered an out-of-scope question with confidence "not stated"'], None),
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(CASES, allow_unicode=True), encoding="utf-8")
    return tmp_path


def configure(folder: Path, url: str, endpoint: dict[str, Any]) -> None:
    config = {"endpoint": {"url": url, "retries": 0, **endpoint}, "cases": ["cases.yaml"]}
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def report(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("kind", list(ENDPOINTS))
def test_refusals_in_sentences_are_classified_with_only_the_documented_config(
    kind: str, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FrameworkServer(kind) as server:
        configure(ws, server.url, ENDPOINTS[kind])
        code, _, err = run(capsys, "run", "--report", "r.json", "--comment-file", "c.md")
    assert (code, err) == (1, "")
    data = report(ws)
    got = {c["id"]: (c["status"], c["failed_conditions"], c["trace"]["refused_by"]) for c in data["cases"]}
    assert got == EXPECTED
    assert data["suite"]["rejection_accuracy"] == pytest.approx(5 / 7)
    assert data["warnings"] == []
    refused = {c["id"]: c["trace"]["refused"] for c in data["cases"]}
    assert [cid for cid, r in refused.items() if r] == ["weather", "stocks", "declined"]
    # A refusal is not scored for faithfulness.
    weather = next(c for c in data["cases"] if c["id"] == "weather")
    assert (weather["judge"]["faithfulness"], weather["judge"]["claims"]) == (None, [])
    comment = (ws / "c.md").read_text(encoding="utf-8")
    assert "**Answer:** I can't help with that question. · declined (by builtin)" in comment
    assert "**Golden:** <code>doc-refund-1</code>" in comment


def test_the_hayhooks_reply_without_a_mapping_names_the_path_to_map(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, {"body": QUERY_BODY})
        code, _, _ = run(capsys, "run", "--report", "r.json")
    assert code == 3
    reasons = {c["failed_conditions"][0] for c in report(ws)["cases"]}
    assert reasons == {
        'endpoint error: reply has no "answer" field (keys: result); set endpoint.response.answer to the answer\'s '
        "dotted path (did you mean result.answer_builder.answers.0.data?)"
    }


def test_hash_ids_fail_recall_naming_what_was_missing_and_what_came_back(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint = {"body": QUERY_BODY, "response": dict(ENDPOINTS["hayhooks"]["response"])}
    del endpoint["response"]["retrieved_id"]  # the documents' own `id` is a content hash
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, endpoint)
        run(capsys, "run", "--report", "r.json")
    refund = next(c for c in report(ws)["cases"] if c["id"] == "refund-en")
    assert refund["failed_conditions"] == [
        f"context_recall 0.000 < 1 (missing doc-refund-1; retrieved {doc_hash('doc-refund-1')}, "
        f"{doc_hash('doc-ship-2')})"
    ]


def test_a_fastapi_422_says_what_the_server_wanted(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, {"response": ENDPOINTS["hayhooks"]["response"]})  # the default body sends `question`
        code, _, _ = run(capsys, "run", "--report", "r.json", "--log", "log.jsonl")
    assert code == 3
    first = report(ws)["cases"][0]
    assert first["failed_conditions"] == [
        f"endpoint error: HTTP 422 from POST {server.url} after 1 attempt: "
        '{"detail":[{"type":"missing","loc":["body","query"],"msg":"Field required",'
        '"input":{"question":"How long do refunds take?"}}]}'
    ]
    attempts = [json.loads(line) for line in (ws / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    failed = next(a for a in attempts if a.get("attempt") == 1 and a["case_id"] == "refund-en")
    assert failed["reply_excerpt"] == (
        '{"detail":[{"type":"missing","loc":["body","query"],"msg":"Field required",'
        '"input":{"question":"How long do refunds take?"}}]}'
    )
    assert "body" not in failed  # whole bodies only with --log-bodies


def test_log_bodies_keeps_every_reply_body_truncated(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("fastapi") as server:
        configure(ws, server.url, {"max_log_body_bytes": 40})
        code, _, _ = run(capsys, "run", "--log", "log.jsonl", "--log-bodies")
    assert code == 1
    lines = [json.loads(line) for line in (ws / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    ok = next(a for a in lines if a.get("attempt") == 1 and a["case_id"] == "refund-en")
    assert ok["body"] == '{"answer": "Refunds are paid back to the'
    assert ok["body_truncated"] is True
    assert ok["body_bytes"] > 40


def test_log_bodies_needs_log(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "--log-bodies")
    assert (code, err) == (2, "ragjudge: error: --log-bodies needs --log FILE\n")


def test_a_body_that_is_not_json_stops_the_run_before_any_call(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [*CASES, {"id": "quoted", "question": 'Is "free shipping" real?'}]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, {"body": '{"query": "{{ question }}"}'})
        code, out, err = run(capsys, "run")
        assert server.bodies == []
    assert (code, out) == (2, "")
    assert err == (
        "ragjudge: error: endpoint.body: the rendered body for case 'quoted' is not valid JSON: "
        "Expecting ',' delimiter (line 1, column 16)\n"
        'Tip: insert text with `| tojson`, which quotes and escapes it: {"question": {{ question | tojson }}}\n'
    )


def test_a_look_alike_category_is_a_warning_naming_the_case(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": "oops", "question": "What is the weather in Paris?", "category": "outofscope"}]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    with FrameworkServer("fastapi") as server:
        configure(ws, server.url, {})
        run(capsys, "run", "--report", "r.json")
    data = report(ws)
    assert data["warnings"] == [
        f"case 'oops' ({ws / 'cases.yaml'}:1): category 'outofscope' looks like out-of-scope but is not a recognised "
        "spelling, so the case is expected to be answered; write out_of_scope (or set should_answer: false)"
    ]
    assert data["cases"][0]["failed_conditions"] == ["declined a question the corpus covers"]


def test_refusal_judge_with_the_offline_judge_is_a_warning(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("fastapi") as server:
        configure(ws, server.url, {"refusal": {"judge": True}})
        run(capsys, "run", "--report", "r.json")
    assert report(ws)["warnings"] == [
        "endpoint.refusal.judge is on but the judge is the offline lexical one, which cannot classify declines: "
        "refusals were decided by the refused field, empty answers and phrases only; set judge.provider: openai "
        "to use it"
    ]


def test_hash_ids_are_a_run_warning_naming_the_stable_id(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    endpoint = {"body": QUERY_BODY, "response": dict(ENDPOINTS["hayhooks"]["response"])}
    del endpoint["response"]["retrieved_id"]
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, endpoint)
        run(capsys, "run", "--report", "r.json")
    assert report(ws)["warnings"] == [
        "passage ids in 4 replies look like content hashes (64 hex characters; cases refund-en, damaged, refund-zh, "
        "declined): golden_context_ids never match them; a stable id is at meta.doc_id: map "
        "endpoint.response.retrieved_id: meta.doc_id"
    ]


def test_an_echoed_question_is_a_run_warning_naming_the_cases_and_the_path(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint = {"body": QUERY_BODY, "response": dict(ENDPOINTS["hayhooks"]["response"])}
    endpoint["response"]["answer"] = "result.answer_builder.answers.0.query"
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, endpoint)
        run(capsys, "run", "--report", "r.json")
    assert report(ws)["warnings"] == [
        "endpoint.response.answer reads the echoed question (result.answer_builder.answers.0.query) in 7 of 7 "
        "replies (cases refund-en, damaged, refund-zh, weather, stocks and 2 more): did you mean "
        "result.answer_builder.answers.0.data?"
    ]


def test_an_id_as_the_answer_is_a_run_warning(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    endpoint = {"body": QUERY_BODY, "response": {"answer": "metadata.run_id", "retrieved": "output.context"}}
    endpoint["body"] = ENDPOINTS["langserve"]["body"]
    with FrameworkServer("langserve") as server:
        configure(ws, server.url, endpoint)
        run(capsys, "run", "--report", "r.json")
    warnings = report(ws)["warnings"]
    assert (
        "endpoint.response.answer reads an id (a UUID, a hex hash or a completion id), not text (metadata.run_id) in 7 "
        "of 7 replies (cases refund-en, damaged, refund-zh, weather, stocks and 2 more): did you mean output.answer?"
    ) in warnings


def test_a_passage_as_the_answer_in_a_conversations_turns_makes_those_turns_errors(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    turns = [
        {k: v for k, v in c.items() if k not in ("id", "source", "difficulty", "tags")}
        for c in CASES
        if c.get("golden_context_ids")
    ]
    (ws / "cases.yaml").write_text(yaml.safe_dump([{"id": "chat", "turns": turns}], allow_unicode=True), "utf-8")
    endpoint = {"body": QUERY_BODY, "response": dict(ENDPOINTS["hayhooks"]["response"])}
    endpoint["response"]["answer"] = "result.answer_builder.answers.0.documents.0.content"
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, endpoint)
        run(capsys, "run", "--report", "r.json")
    (chat,) = report(ws)["cases"]
    reason = (
        "endpoint.response.answer reads a retrieved passage, not the generated answer "
        "(result.answer_builder.answers.0.documents.0.content) in 4 of 4 replies: a mapping error, not an answer: "
        "did you mean result.answer_builder.answers.0.data?"
    )
    assert [(t["status"], t["failed_conditions"]) for t in chat["turns"]] == [("error", [reason])] * 4
    assert (chat["status"], chat["failed_conditions"]) == ("error", [f"turn {n}: {reason}" for n in range(1, 5)])


def test_a_passage_as_the_answer_in_most_replies_makes_those_cases_errors(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [c for c in CASES if c.get("golden_context_ids")]  # each retrieves documents
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    endpoint = {"body": QUERY_BODY, "response": dict(ENDPOINTS["hayhooks"]["response"])}
    endpoint["response"]["answer"] = "result.answer_builder.answers.0.documents.0.content"
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, endpoint)
        code, _, _ = run(capsys, "run", "--report", "r.json")
    data = report(ws)
    reason = (
        "endpoint.response.answer reads a retrieved passage, not the generated answer "
        "(result.answer_builder.answers.0.documents.0.content) in 4 of 4 replies: a mapping error, not an answer: "
        "did you mean result.answer_builder.answers.0.data?"
    )
    assert {c["id"]: (c["status"], c["failed_conditions"]) for c in data["cases"]} == {
        c["id"]: ("error", [reason]) for c in cases
    }
    assert code != 0
    assert (
        "endpoint.response.answer reads a retrieved passage, not the generated answer "
        "(result.answer_builder.answers.0.documents.0.content) in 4 of 4 replies (cases refund-en, damaged, "
        "refund-zh, declined): did you mean result.answer_builder.answers.0.data?"
    ) in data["warnings"]
