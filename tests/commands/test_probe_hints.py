"""`ragjudge probe`'s hints from an HTTP error (`commands.probe_hints`): the body fields a 422 names, a LangServe
chain's input schema, and the route a 404 on a bare LangServe path meant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.commands.probing import configure, hints, probe
from tests.fakes.framework_servers import FrameworkServer
from tests.fakes.raw_server import RawServer, http_reply


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


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


LANGSERVE_SCHEMA_HINT = (
    '  hint: the chain\'s input schema (GET /rag/input_schema) is {"properties":{"question":{"title":"Question",'
    '"type":"string"}},"required":["question"],"title":"Question","type":"object"}: set endpoint.body to something '
    'like \'{"input": {"question": {{ question | tojson }}}}\''
)


@pytest.mark.parametrize(
    "body",
    [None, '{"input": {{ question | tojson }}}', '{"input": {"query": {{ question | tojson }}}}'],
    ids=["no-body", "input-a-string", "input-without-question"],
)
def test_a_langserve_422_quotes_the_chains_input_schema(ws: Path, capsys: pytest.CaptureFixture[str], body) -> None:
    # LangServe's own 422s (loc ["input"], [] and ["question"], as langserve 0.3.3 sends them) all lead to the
    # body its input_schema route asks for, in one step.
    with FrameworkServer("langserve") as server:
        configure(ws, server.url, **({"body": body} if body else {}))
        code, out, _ = probe(capsys, "--case", "refund")
        assert code == 1
        assert hints(out) == [LANGSERVE_SCHEMA_HINT]
        configure(ws, server.url, body='{"input": {"question": {{ question | tojson }}}}')
        code, out, _ = probe(capsys, "--case", "refund")
    assert "  status: 200 OK" in out.splitlines()
    assert [h for h in hints(out) if "body" in h] == []


@pytest.mark.parametrize(
    ("detail", "hint"),
    [
        (
            {"type": "missing", "loc": ["input"], "msg": "Field required"},
            "the server wants a body field 'input': set endpoint.body to something like "
            "'{\"input\": {{ question | tojson }}}'",
        ),
        (
            {"type": "model_type", "loc": [], "msg": "Input should be a valid dictionary or instance of Question"},
            "the server wants body field 'input' to be an object of the fields it takes (a LangServe route lists "
            'them at .../input_schema): e.g. \'{"input": {"question": {{ question | tojson }}}}\'',
        ),
        (
            {"type": "missing", "loc": ["question"], "msg": "Field required"},
            "the server wants a body field 'input.question': set endpoint.body to something like "
            '\'{"input": {"question": {{ question | tojson }}}}\'',
        ),
    ],
    ids=["input-missing", "input-not-an-object", "question-missing"],
)
def test_langserve_422s_outside_body_get_hints_without_a_schema_route(
    ws: Path, capsys: pytest.CaptureFixture[str], detail: dict[str, Any], hint: str
) -> None:
    body = json.dumps({"detail": [detail]}).encode("utf-8")
    head = b"HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    not_found = (
        b'HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n{"detail":"Not Found"}'
    )
    with RawServer(lambda request: not_found if request.startswith(b"GET") else head % len(body) + body) as server:
        configure(ws, server.url + "/rag/invoke")
        code, out, _ = probe(capsys)
    assert code == 1
    assert hints(out) == [f"  hint: {hint}"]


def test_a_404_on_the_bare_langserve_path_points_at_invoke(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("langserve") as server:
        configure(ws, f"{server.base}/rag", body='{"input": {"question": {{ question | tojson }}}}')
        code, out, _ = probe(capsys, "--case", "refund")
    assert code == 1
    assert out.splitlines()[-3:] == [
        '  the server said: {"detail":"Not Found"}',
        "  hint: /rag is not a route, but GET /rag/input_schema answers as a LangServe chain does: POST to "
        "/rag/invoke (set endpoint.url to end in /rag/invoke)",
        "  fix the request (endpoint.body, endpoint.headers, the URL) until the status is 2xx",
    ]


def test_a_404_elsewhere_gets_no_langserve_hint(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FrameworkServer("fastapi") as server:
        configure(ws, f"{server.base}/nope")
        code, out, _ = probe(capsys, "--question", "q")
    assert code == 1
    assert hints(out) == []


def test_a_malformed_input_schema_still_gives_a_usable_body(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = json.dumps({"type": "object", "required": "question", "properties": {"question": {"type": "string"}}})
    error = json.dumps({"detail": [{"type": "missing", "loc": ["input"], "msg": "Field required"}]})

    def reply(request: bytes) -> bytes:
        if request.startswith(b"GET /rag/input_schema "):
            return http_reply(schema.encode("utf-8"))
        return http_reply(error.encode("utf-8"), status="422 Unprocessable Entity")

    with RawServer(reply) as server:
        configure(ws, server.url + "/rag/invoke")
        code, out, _ = probe(capsys)
    assert code == 1
    assert hints(out) == [
        '  hint: the chain\'s input schema (GET /rag/input_schema) is {"type":"object","required":"question",'
        '"properties":{"question":{"type":"string"}}}: set endpoint.body to something like '
        '\'{"input": {"question": {{ question | tojson }}}}\''
    ]
