"""`ragjudge probe`: one request, shown and read key by key, against the framework stand-ins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.framework_servers import FrameworkServer
from tests.fakes.rag import closed_port_url
from tests.fakes.raw_server import RawServer, http_reply

TOKEN = "tok-probe-s3cr3t-77"
HAYHOOKS_RESPONSE = {
    "answer": "result.answer_builder.answers.0.data",
    "retrieved": "result.answer_builder.answers.0.documents",
    "retrieved_id": "meta.doc_id",
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def configure(folder: Path, url: str, **endpoint: Any) -> None:
    config: dict[str, Any] = {"endpoint": {"url": url, **endpoint}}
    cases = [
        {"id": "refund", "question": "How long do refunds take?"},
        {"id": "stocks", "question": "明天股市会涨吗？", "category": "超纲"},
    ]
    (folder / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    config["cases"] = ["cases.yaml"]
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


def probe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["probe", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def section(out: str, title: str) -> list[str]:
    lines = out.split("\n\n")
    block = next(b for b in lines if b.startswith(title))
    return block.splitlines()


def test_an_unmapped_hayhooks_reply_gets_a_suggested_mapping(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, body='{"query": {{ question | tojson }}}')
        code, out, err = probe(capsys, "--question", "How long do refunds take?")
    assert (code, err) == (1, "")
    assert section(out, "request") == [
        "request",
        f"  POST {server.url}",
        "  Accept: application/json",
        "  User-Agent: ragjudge",
        "  Content-Type: application/json",
        "  body:",
        "    {",
        '      "query": "How long do refunds take?"',
        "    }",
    ]
    assert section(out, "reply")[1] == "  status: 200 OK"
    assert section(out, "reply")[2].startswith("  content type: application/json, ")
    assert section(out, "mapping") == [
        "mapping (endpoint.response)",
        "  answer: nothing (tried answer): did you mean result.answer_builder.answers.0.data?",
        "  refused: nothing (tried refused)",
        "  confidence: nothing (tried confidence)",
        "  retrieved: nothing (tried retrieved, sources, contexts): did you mean "
        "result.answer_builder.answers.0.documents?",
        "  retrieved_ids: nothing (tried retrievedIds, retrieved_ids)",
        "  citations: nothing (tried citations)",
        "  cost_usd: nothing (tried cost_usd, costUsd)",
        "  latency_ms: nothing (tried latencyMs, latency_ms)",
        "  hint: passage ids look like content hashes; the document id may be at meta.doc_id (retrieved_id)",
        "  hint: the passages' title may be at meta.title (retrieved_title)",
    ]
    assert section(out, "suggested mapping") == [
        "suggested mapping: paste under `endpoint:` in your config, replacing any `response:`, then probe again",
        "  response:",
        "    answer: result.answer_builder.answers.0.data",
        "    retrieved: result.answer_builder.answers.0.documents",
        "    retrieved_id: meta.doc_id",
        "    retrieved_title: meta.title",
    ]
    assert section(out, "result: mapping error")[0] == (
        'result: mapping error: reply has no "answer" field (keys: result); set endpoint.response.answer to the '
        "answer's dotted path (did you mean result.answer_builder.answers.0.data?)"
    )


def test_the_suggested_mapping_maps_cleanly(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(
            ws,
            server.url,
            body='{"query": {{ question | tojson }}}',
            response={**HAYHOOKS_RESPONSE, "retrieved_title": "meta.title"},
        )
        code, out, _ = probe(capsys, "--case", "refund")
    assert code == 0
    assert section(out, "mapping")[1] == (
        '  answer (result.answer_builder.answers.0.data): "Refunds are paid back to the original card within 5 '
        'working days."'
    )
    assert section(out, "read as") == [
        "read as",
        '  answer: "Refunds are paid back to the original card within 5 working days."',
        "  declined: no; confidence: (none)",
        "  passages: 2",
        '    [1] id doc-refund-1 · title Refunds · text "Refunds are paid back to the original card within 5 working '
        'days."',
        '    [2] id doc-ship-2 · title Shipping · text "Shipping is free for orders over 99 yuan."',
        "  citations: (none)",
        section(out, "read as")[7],  # the measured latency varies
    ]
    assert out.endswith("\nresult: the reply maps cleanly\n")


def test_a_refusal_in_chinese_shows_how_it_was_decided(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, body='{"query": {{ question | tojson }}}', response=HAYHOOKS_RESPONSE)
        code, out, _ = probe(capsys, "--case", "stocks")
    assert code == 0
    assert "  declined: yes (by builtin); confidence: (none)" in out.splitlines()


def test_a_422_names_the_field_the_server_wanted(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url)
        code, out, _ = probe(capsys)  # the first case of `cases:`
    assert code == 1
    assert out.splitlines()[-4:] == [
        f"result: HTTP 422 from POST {server.url}",
        '  the server said: {"detail":[{"type":"missing","loc":["body","query"],"msg":"Field required",'
        '"input":{"question":"How long do refunds take?"}}]}',
        "  hint: the server wants a body field 'query': set endpoint.body to something like "
        "'{\"query\": {{ question | tojson }}}'",
        "  fix the request (endpoint.body, endpoint.headers, the URL) until the status is 2xx",
    ]


@pytest.mark.parametrize(
    ("detail", "hint"),
    [
        (
            {"loc": ["body", "query"], "msg": "field required", "type": "value_error.missing"},
            "the server wants a body field 'query': set endpoint.body to something like "
            "'{\"query\": {{ question | tojson }}}'",
        ),
        (
            {"loc": ["body", "input"], "msg": "value is not a valid dict", "type": "type_error.dict"},
            "the server wants body field 'input' to be an object of the fields it takes (a LangServe route lists "
            'them at .../input_schema): e.g. \'{"input": {"question": {{ question | tojson }}}}\'',
        ),
    ],
    ids=["missing", "not-an-object"],
)
def test_a_422_from_fastapi_on_pydantic_1_gets_the_same_hint(
    ws: Path, capsys: pytest.CaptureFixture[str], detail: dict[str, Any], hint: str
) -> None:
    # FastAPI before 0.100 (pydantic 1) spells the error types `value_error.missing` and `type_error.dict`.
    body = json.dumps({"detail": [detail]}).encode("utf-8")
    head = b"HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    with RawServer(lambda request: head % len(body) + body) as server:
        configure(ws, server.url + "/rag/run")
        code, out, _ = probe(capsys)
    assert code == 1
    assert out.splitlines()[-2:] == [
        f"  hint: {hint}",
        "  fix the request (endpoint.body, endpoint.headers, the URL) until the status is 2xx",
    ]


def test_credentials_are_removed_and_secrets_masked(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_TOKEN", TOKEN)
    with FrameworkServer("fastapi") as server:
        url = f"http://user:{TOKEN}@127.0.0.1:{server.port}/ask"
        configure(ws, url, headers={"Authorization": "Bearer ${RAG_TOKEN}", "X-Api-Key": "${RAG_TOKEN}"})
        code, out, _ = probe(capsys, "--question", f"echo {TOKEN}")
    assert code == 0
    assert TOKEN not in out
    assert section(out, "request")[1:2] == [f"  POST http://127.0.0.1:{server.port}/ask"]
    assert "  Authorization: Bearer ***" in out.splitlines()
    assert "  X-Api-Key: ***" in out.splitlines()
    assert '      "question": "echo ***"' in out.splitlines()


def test_an_unreachable_endpoint_is_exit_3(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = closed_port_url()
    configure(ws, url)
    code, out, err = probe(capsys, "--question", "hi")
    assert code == 3
    assert out.startswith("request\n")
    port = url.split(":")[2].split("/")[0]
    assert err == f"ragjudge: error: endpoint error: connection refused by 127.0.0.1:{port}\n"


def test_an_unknown_case_id_lists_the_ids(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(ws, "http://127.0.0.1:9/ask")
    code, out, err = probe(capsys, "--case", "nope")
    assert (code, out) == (2, "")
    assert err == "ragjudge: error: --case nope: no such case id (ids: refund, stocks)\n"


def test_question_and_case_are_exclusive(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = probe(capsys, "--question", "q", "--case", "c")
    assert code == 2
    assert "not allowed with argument" in err


def test_an_endpoint_that_is_not_http_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = probe(capsys, "--endpoint", "ftp://example.org/ask", "--question", "q")
    assert code == 2
    assert err == ("ragjudge: error: --endpoint: must be an http:// or https:// URL with a host (found a ftp:// URL)\n")


def test_langserve_hints_lead_to_the_nested_input_and_never_repeat(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each hint, followed as written, must move the user on: LangServe's `input` is an object.
    def hints(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.startswith("  hint: ")]

    with FrameworkServer("langserve") as server:
        configure(ws, server.url)
        code, out, _ = probe(capsys, "--case", "refund")
        assert code == 1
        assert hints(out) == [
            "  hint: the server wants a body field 'input': set endpoint.body to something like "
            "'{\"input\": {{ question | tojson }}}'"
        ]
        configure(ws, server.url, body='{"input": {{ question | tojson }}}')
        code, out, _ = probe(capsys, "--case", "refund")
        assert code == 1
        assert hints(out) == [
            "  hint: the server wants body field 'input' to be an object of the fields it takes (a LangServe "
            'route lists them at .../input_schema): e.g. \'{"input": {"question": {{ question | tojson }}}}\''
        ]
        configure(ws, server.url, body='{"input": {"query": {{ question | tojson }}}}')
        code, out, _ = probe(capsys, "--case", "refund")
        assert hints(out) == [
            "  hint: the server wants a body field 'input.question': set endpoint.body to something like "
            '\'{"input": {"question": {{ question | tojson }}}}\''
        ]
        configure(ws, server.url, body='{"input": {"question": {{ question | tojson }}}}')
        code, out, _ = probe(capsys, "--case", "refund")
    assert "  status: 200 OK" in out.splitlines()
    assert hints(out) == [] or all("body field" not in h for h in hints(out))


def _sse_reply(events: list[str]) -> bytes:
    body = "".join(f"data: {e}\n\n" for e in events).encode()
    return http_reply(body, content_type="text/event-stream")


def test_a_streamed_reply_is_shown_assembled_and_mapped(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chunks = [
        json.dumps({"object": "chat.completion.chunk", "choices": [{"delta": {"content": t}}]})
        for t in ("Refunds ", "take 30 days.")
    ]
    with RawServer(lambda _request: _sse_reply([*chunks, "[DONE]"])) as server:
        configure(ws, server.url, response={"answer_delta": "choices.0.delta.content"})
        code, out, _err = probe(capsys)
    assert "assembled from the stream's events (endpoint.stream, response.answer_delta)" in out
    assert '  answer: "Refunds take 30 days."' in out
    assert (
        "  passages: unknown (none in the reply, and endpoint.response.retrieved is not mapped: retrieval metrics "
        "and faithfulness will be null; map it if the service sends them)"
    ) in out.splitlines()
    assert code == 0, out


def test_a_cut_stream_is_an_endpoint_error_in_probe(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chunk = json.dumps({"object": "chat.completion.chunk", "choices": [{"delta": {"content": "Refu"}}]})
    with RawServer(lambda _request: _sse_reply([chunk])) as server:
        configure(ws, server.url, response={"answer_delta": "choices.0.delta.content"})
        code, out, _err = probe(capsys)
    assert "\nresult: endpoint error: stream ended before its end (1 events, 4 characters)\n" in out
    assert code == 1
