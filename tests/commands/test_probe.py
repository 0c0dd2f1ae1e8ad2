"""`ragjudge probe`: one request, shown and read key by key, against the framework stand-ins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.commands.probing import HAYHOOKS_RESPONSE, REFUND_CASE, configure, configure_case, probe, section
from tests.fakes.framework_servers import FrameworkServer
from tests.fakes.rag import closed_port_url
from tests.fakes.raw_server import RawServer, http_reply

TOKEN = "tok-probe-s3cr3t-77"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_refusal_in_chinese_shows_how_it_was_decided(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, body='{"query": {{ question | tojson }}}', response=HAYHOOKS_RESPONSE)
        code, out, _ = probe(capsys, "--case", "stocks")
    assert code == 0
    assert "  declined: yes (by builtin); confidence: (none)" in out.splitlines()


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


def test_a_500_says_the_service_failed_not_the_request(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = b"Internal Server Error"
    reply = b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 21\r\n\r\n" + body
    with RawServer(lambda _request: reply) as server:
        configure(ws, server.url + "/rag/invoke")
        code, out, _ = probe(capsys)
    assert code == 1
    assert out.splitlines()[-3:] == [
        f"result: HTTP 500 from POST {server.url}/rag/invoke",
        "  the server said: Internal Server Error",
        "  the service failed while answering (a 5xx is its own error, not a malformed request): its logs say why; "
        "probe again once it answers",
    ]
    assert "fix the request" not in out


def test_a_big_reply_is_read_whole_as_a_run_reads_it(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Ten long passages: 73,617 bytes, over the 64 KiB that an error reply's excerpt is cut at.
    sources = [{"id": f"doc-{i}", "title": f"T{i}", "text": "Refunds take five days. " * 300} for i in range(10)]
    reply = {"answer": "Refunds take five days.", "sources": sources, "pad": ""}
    reply["pad"] = "x" * (73_617 - len(json.dumps(reply).encode("utf-8")))
    body = json.dumps(reply).encode("utf-8")
    assert len(body) == 73_617
    with RawServer(lambda _request: http_reply(body)) as server:
        configure(ws, server.url)
        code, out, _ = probe(capsys, "--question", "How long do refunds take?")
    assert section(out, "reply")[2].startswith("  content type: application/json, 73617 bytes, ")
    assert "  passages: 10" in out.splitlines()
    assert out.endswith("\nresult: the reply maps cleanly\n")
    assert code == 0


def test_a_success_over_max_response_bytes_is_an_endpoint_error(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps({"answer": "a" * 5000}).encode("utf-8")
    with RawServer(lambda _request: http_reply(body)) as server:
        configure(ws, server.url, max_response_bytes=4096)
        code, _, err = probe(capsys, "--question", "q")
    assert (code, err) == (3, "ragjudge: error: endpoint error: reply over 4096 bytes\n")


def test_with_only_a_url_probe_sends_a_sample_question(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("fastapi") as server:
        (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": {"url": server.url}}), encoding="utf-8")
        code, out, err = probe(capsys)
        assert server.bodies == [{"question": "What can you help me with?"}]
    assert out.startswith(
        'question: "What can you help me with?" (a sample: no --question, --case or `cases:` given)\n'
    )
    assert (code, err) == (0, "")


def test_a_case_id_without_cases_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": {"url": "http://127.0.0.1:9/ask"}}), encoding="utf-8")
    code, out, err = probe(capsys, "--case", "refund")
    assert (code, out) == (2, "")
    assert err == (
        "ragjudge: error: --case refund: the config lists no `cases:`\n"
        "Tip: pass --cases FILE, or --question TEXT instead\n"
    )


def test_an_echoed_question_as_the_answer_is_a_probe_warning(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    response = {**HAYHOOKS_RESPONSE, "answer": "result.answer_builder.answers.0.query"}
    with FrameworkServer("hayhooks") as server:
        configure_case(ws, server.url, REFUND_CASE, body='{"query": {{ question | tojson }}}', response=response)
        code, out, _ = probe(capsys)
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith("  warning: ")] == [
        "  warning: endpoint.response.answer reads the echoed question (result.answer_builder.answers.0.query): "
        "did you mean result.answer_builder.answers.0.data?"
    ]
    assert "    answer: result.answer_builder.answers.0.data" in section(out, "suggested mapping")


OPENAI_REPLY = {
    "id": "chatcmpl-9xQ2bW1kZq7t3LmN0pRsTuVw",
    "object": "chat.completion",
    "created": 1767225600,
    "model": "gpt-4o-mini",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Five days."}, "finish_reason": "stop"}],
}


def test_an_openai_completion_gets_the_message_content_not_its_id(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps(OPENAI_REPLY).encode("utf-8")
    with RawServer(lambda _request: http_reply(body)) as server:
        configure(ws, server.url)
        code, out, _ = probe(capsys, "--question", "q")
        assert section(out, "mapping")[1] == (
            "  answer: nothing (tried answer): did you mean choices.0.message.content?"
        )
        configure(ws, server.url, response={"answer": "id"})
        code, out, _ = probe(capsys, "--question", "q")
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith("  warning: ")] == [
        "  warning: endpoint.response.answer reads an id (a UUID, a hex hash or a completion id), not text (id): "
        "did you mean choices.0.message.content?"
    ]


def test_the_refusal_decision_is_shown_once(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("hayhooks") as server:
        configure(ws, server.url, body='{"query": {{ question | tojson }}}', response=HAYHOOKS_RESPONSE)
        _, out, _ = probe(capsys, "--case", "stocks")
    lines = out.splitlines()
    assert [line for line in lines if "refused" in line or "declined" in line] == [
        "  refused: no field (tried refused); declines are decided from the answer, see `declined` below",
        "  declined: yes (by builtin); confidence: (none)",
    ]


def test_cases_names_the_files_case_ids_are_read_from(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The comment's repro line passes the case file the run read: `run --cases` may name one `cases:` does not.
    configure(ws, "http://127.0.0.1:9/ask")
    (ws / "pr.yaml").write_text("- id: pr-only\n  question: where is my parcel?\n", encoding="utf-8")
    code, out, err = probe(capsys, "--cases", "pr.yaml", "--case", "nope")
    assert (code, out) == (2, "")
    assert err == "ragjudge: error: --case nope: no such case id (ids: pr-only)\n"
    with FrameworkServer("fastapi") as server:
        configure(ws, server.url)
        code, out, _ = probe(capsys, "--cases", "pr.yaml", "--case", "pr-only")
    assert code == 0
    assert '      "question": "where is my parcel?"' in out.splitlines()
