"""One malformed reply costs one case, never the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.fakes.rag import RagServer, Raw, answer

from ragjudge.cli import main

DEEP = ("[" * 1000 + "]" * 1000).encode()


def test_a_reply_nested_1000_levels_deep_is_a_case_error(serve, make_client, make_case):
    body = b'{"answer": "a", "extra": ' + DEEP + b"}"
    assert len(body) < 4200
    server = serve(lambda ex: ex.send(200, body))
    result = make_client(server.url, retries=0).call(make_case())
    assert result.error == f"endpoint error: reply is nested too deeply to read ({len(body)} bytes)"


def test_a_deep_but_decodable_passage_text_is_an_error_not_a_repr(serve, make_client, make_case):
    nested = "[" * 900 + "]" * 900
    body = '{"answer": "a", "retrieved": [{"id": "p1", "text": ' + nested + "}]}"
    server = serve(lambda ex: ex.send(200, body))
    result = make_client(server.url, retries=0).call(make_case())
    # A list where text is expected is a wrong type, named, never read as its repr (issue 9).
    assert result.error == (
        "endpoint error: endpoint.response.retrieved_text: retrieved.0.text is a list of 1 item of lists, not text"
    )


@pytest.mark.parametrize(
    ("retrieved", "reason"),
    [
        (
            [1, 2],
            "endpoint.response.retrieved: retrieved.0 is the number 1, not a passage: each passage must be an object "
            "or text",
        ),
        (
            [{"id": "p1", "text": "t"}, None],
            "endpoint.response.retrieved: retrieved.1 is null, not a passage: each passage must be an object or text",
        ),
        (
            ["text", [1]],
            "endpoint.response.retrieved: retrieved.1 is a list of 1 item of numbers, not a passage: each passage "
            "must be an object or text",
        ),
    ],
)
def test_a_retrieved_list_of_numbers_or_nulls_is_a_case_error_naming_the_field(
    serve, make_client, make_case, retrieved, reason
):
    server = serve(lambda ex: ex.json({"answer": "a", "retrieved": retrieved}))
    result = make_client(server.url, retries=0).call(make_case())
    assert result.error == f"endpoint error: {reason}"


def test_the_field_named_is_the_one_the_reply_used(serve, make_client, make_case):
    server = serve(lambda ex: ex.json({"answer": "a", "sources": [7]}))
    result = make_client(server.url, retries=0).call(make_case())
    assert result.error == (
        "endpoint error: endpoint.response.retrieved: sources.0 is the number 7, not a passage: each passage must be "
        "an object or text"
    )


def test_a_deep_reply_in_a_run_costs_one_case_and_the_report_is_written(tmp_path: Path) -> None:
    cases = [{"id": "deep", "question": "deep?"}, {"id": "fine", "question": "fine?"}]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    replies = {"deep?": Raw(200, b'{"answer": ' + DEEP + b"}"), "fine?": answer("Yes.", ["p1"], {"p1": "Yes."})}
    with RagServer(replies) as rag:
        config = {"endpoint": {"url": rag.url, "retries": 0}, "cases": ["cases.yaml"]}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code = main(["run", "--config", str(tmp_path / "ragjudge.yml"), "--report", str(tmp_path / "r.json")])
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert code == 1
    statuses = {c["id"]: (c["status"], c["failed_conditions"]) for c in report["cases"]}
    assert statuses["deep"] == (
        "error",
        [f"endpoint error: reply is nested too deeply to read ({len(DEEP) + 12} bytes)"],
    )
    assert statuses["fine"][0] == "pass"
