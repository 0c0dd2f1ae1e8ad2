"""The endpoint reply's JSON over loopback: non-finite numbers, duplicate keys, absurd nesting (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from tests.fakes.rag import RagServer, Raw

from ragjudge.cli import main
from ragjudge.endpoint.decoding import decode, non_finite


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"answer": "ok", "cost_usd": NaN}', 'endpoint error: reply field "cost_usd" is not a finite number (NaN)'),
        (
            '{"answer": "ok", "latencyMs": 1e999}',
            'endpoint error: reply field "latencyMs" is not a finite number (Infinity)',
        ),
        (
            '{"answer": "ok", "meta": {"confidence": -Infinity}}',
            'endpoint error: reply field "meta.confidence" is not a finite number (-Infinity)',
        ),
        (
            '{"answer": "ok", "retrieved": [{"id": "a", "score": NaN}]}',
            'endpoint error: reply field "retrieved.0.score" is not a finite number (NaN)',
        ),
    ],
)
def test_a_non_finite_number_is_a_case_error_naming_the_field(serve, make_client, make_case, body, reason):
    server = serve(lambda ex: ex.send(200, body, "application/json"))
    result = make_client(server.url, retries=2).call(make_case())
    assert (result.error, result.trace, result.attempts) == (reason, None, 1)


def test_duplicate_keys_are_a_warning_on_the_case_and_the_last_value_counts(serve, make_client, make_case):
    body = '{"answer": "first", "answer": "second", "meta": {"a": 1, "a": 2}, "refused": false}'
    server = serve(lambda ex: ex.send(200, body, "application/json"))
    result = make_client(server.url).call(make_case())
    assert result.error is None and result.trace is not None
    assert result.trace.answer == "second"
    assert result.trace.warnings == (
        'reply has duplicate key "answer"; the last value was used',
        'reply has duplicate key "meta.a"; the last value was used',
    )


def test_a_reply_nested_a_thousand_levels_deep_costs_one_case(serve, make_client, make_case):
    body = '{"answer": ' + "[" * 100_000 + "]" * 100_000 + "}"
    server = serve(lambda ex: ex.send(200, body, "application/json"))
    result = make_client(server.url, max_response_bytes=10_000_000).call(make_case())
    assert result.error == f"endpoint error: reply is nested too deeply to read ({len(body)} bytes)"


def test_values_in_a_templated_url_are_url_encoded(serve, make_client, make_case):
    server = serve(lambda ex: ex.json({"answer": "ok"}))
    url = server.url + "?q={{ question }}&id={{ case.id }}&raw={{ question | urlencode }}"
    result = make_client(url, method="GET").call(make_case(id="a/b", question="x&admin=1#frag é"))
    assert result.error is None
    assert server.requests[0].path == "/ask?q=x%26admin%3D1%23frag%20%C3%A9&id=a%2Fb&raw=x%26admin%3D1%23frag%20%C3%A9"


def test_nan_in_the_reply_reads_the_same_in_reason_and_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "question": "q?"}]), encoding="utf-8")
    body = b'{"answer": "fine", "cost_usd": NaN, "answer": "dup"}'
    with RagServer({}, default=Raw(200, body)) as rag:
        config = {"endpoint": {"url": rag.url, "retries": 0}, "cases": ["cases.yaml"]}
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code = main(["run", "--report", "r.json"])
    out = capsys.readouterr().out
    reason = 'endpoint error: reply field "cost_usd" is not a finite number (NaN)'
    case = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["cases"][0]
    assert code == 3
    assert (case["status"], case["failed_conditions"], case["trace"]["error"]) == ("error", [reason], reason)
    assert f"c1 error: {reason}" in out


def test_decode_helpers() -> None:
    assert decode('{"a": {"b": 1, "b": 2}, "c": [{"d": 0, "d": 1}]}').duplicate_keys == ("a.b", "c.0.d")
    assert decode('{"a": 1}').duplicate_keys == ()
    assert non_finite({"a": [1.0, {"b": float("nan")}]}) == ("a.1.b", pytest.approx(float("nan"), nan_ok=True))
    assert non_finite({"a": [1.0, 2]}) is None
    assert non_finite(float("inf")) == ("(the reply)", float("inf"))


def test_a_recorded_trace_with_a_non_finite_number_is_exit_2_naming_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces.jsonl").write_text(
        '{"id": "t1", "question": "q?", "answer": "a", "latencyMs": 12}\n'
        '{"id": "t2", "question": "q?", "answer": "a", "latencyMs": 12, "costUsd": NaN}\n',
        encoding="utf-8",
    )
    code = main(["run", "--traces", "traces.jsonl"])
    err = capsys.readouterr().err
    assert code == 2
    assert 'ragjudge: error: traces.jsonl:2: field "costUsd" is not a finite number' in err


def test_an_error_reply_nested_deeply_is_an_http_error_not_a_crash(serve, make_client, make_case):
    # Found by the fuzzer: the excerpt of a 400's body was parsed as JSON without a depth guard.
    body = "[" * 5000
    server = serve(lambda ex: ex.send(400, body, "application/json"))
    result = make_client(server.url, retries=0).call(make_case())
    assert result.error is not None and result.error.startswith("endpoint error: HTTP 400")
