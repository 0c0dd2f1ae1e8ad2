"""EndpointClient over real HTTP on loopback, against servers that misbehave on purpose."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from ragjudge.config.loader import load_config
from ragjudge.endpoint.client import EndpointClient
from ragjudge.transport.retry_after import parse_retry_after

OK = {"answer": "Refunds take 7 days.", "refused": False, "confidence": "high"}


# --- retries -------------------------------------------------------------------------------------


def test_http_500_always_is_retried_then_reported_with_the_attempt_count(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({"detail": "boom"}, status=500))
    result = make_client(server.url, retries=2).call(make_case())

    assert result.error == f'endpoint error: HTTP 500 from POST {server.url} after 3 attempts: {{"detail":"boom"}}'
    assert result.trace is None
    assert result.attempts == 3
    assert result.status == 500
    assert len(server.requests) == 3
    # Exponential backoff from 0.5 s, reported beside latency rather than in it.
    assert sleeps.delays == [0.5, 1.0]
    assert result.retry_wait_ms == 1500.0


def test_503_then_200_succeeds_on_the_second_attempt(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({"detail": "busy"}, status=503) if ex.n == 0 else ex.json(OK))
    result = make_client(server.url, retries=2).call(make_case())

    assert result.error is None
    assert result.trace is not None
    assert result.trace.answer == "Refunds take 7 days."
    assert result.attempts == 2
    assert result.status == 200
    assert sleeps.delays == [0.5]
    assert result.retry_wait_ms == 500.0
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [502, 504, 599])
def test_other_5xx_are_retried(serve, make_client, make_case, status):
    server = serve(lambda ex: ex.send(status, b"") if ex.n == 0 else ex.json(OK))
    result = make_client(server.url, retries=1).call(make_case())
    assert (result.error, result.attempts, len(server.requests)) == (None, 2, 2)


def test_429_with_retry_after_waits_that_long_for_real(serve, make_client, make_case):
    server = serve(
        lambda ex: (
            ex.json({"error": "slow down"}, status=429, headers={"Retry-After": "1"}) if ex.n == 0 else ex.json(OK)
        )
    )
    result = make_client(server.url, retries=2, sleep=time.sleep).call(make_case())

    assert result.error is None
    assert result.attempts == 2
    assert result.retry_wait_ms == 1000.0
    assert result.total_ms >= 1000.0
    # Latency is the successful attempt's round trip: the wait is not in it.
    assert result.trace is not None
    assert result.trace.latency_ms < 900.0


def test_retry_after_replaces_the_backoff(serve, make_client, make_case, sleeps):
    server = serve(
        lambda ex: ex.json({}, status=503, headers={"Retry-After": "3"}) if ex.n < 2 else ex.json(OK),
    )
    result = make_client(server.url, retries=2).call(make_case())
    assert result.error is None
    assert sleeps.delays == [3.0, 3.0]
    assert result.retry_wait_ms == 6000.0


def test_retry_after_over_max_wait_ends_the_call_at_once(serve, make_client, make_case, sleeps):
    # Waiting 60 s per attempt and then failing anyway cost 543 s for one case: end it now, and say why.
    server = serve(lambda ex: ex.json({}, status=429, headers={"Retry-After": "3600"}) if ex.n == 0 else ex.json(OK))
    result = make_client(server.url, retries=3).call(make_case())
    assert result.error == "endpoint rate-limited: the server asked to wait 3600 s, over endpoint.max_wait_s 60"
    assert sleeps.delays == []
    assert len(server.requests) == 1


def test_retry_after_over_max_wait_on_a_503_names_the_status(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({}, status=503, headers={"Retry-After": "120"}))
    result = make_client(server.url, retries=3, max_wait_s=30).call(make_case())
    assert result.error == (
        f"endpoint error: HTTP 503 from POST {server.url}: the server asked to wait 120 s, over endpoint.max_wait_s 30"
    )
    assert sleeps.delays == []


def test_retry_after_up_to_max_wait_is_waited_in_full(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({}, status=429, headers={"Retry-After": "90"}) if ex.n == 0 else ex.json(OK))
    result = make_client(server.url, retries=1, max_wait_s=90).call(make_case())
    assert result.error is None
    assert sleeps.delays == [90.0]


def test_429_after_the_last_retry_is_reported(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({}, status=429, headers={"Retry-After": "1"}))
    result = make_client(server.url, retries=1).call(make_case())
    assert result.error == f"endpoint error: HTTP 429 from POST {server.url} after 2 attempts"
    assert sleeps.delays == [1.0]


def test_404_is_not_retried(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.send(404, "not here", "text/plain"))
    result = make_client(server.url, retries=2).call(make_case())

    assert result.error == f"endpoint error: HTTP 404 from POST {server.url} after 1 attempt: not here"
    assert result.attempts == 1
    assert len(server.requests) == 1
    assert sleeps.delays == []
    assert result.retry_wait_ms == 0.0


def test_400_with_retry_after_is_still_not_retried(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({}, status=400, headers={"Retry-After": "1"}))
    result = make_client(server.url, retries=3).call(make_case())
    assert result.error == f"endpoint error: HTTP 400 from POST {server.url} after 1 attempt"
    assert (len(server.requests), sleeps.delays) == (1, [])


def test_retries_zero_means_one_attempt(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: ex.json({}, status=500))
    result = make_client(server.url, retries=0).call(make_case())
    assert result.error == f"endpoint error: HTTP 500 from POST {server.url} after 1 attempt"
    assert (len(server.requests), sleeps.delays) == (1, [])


def test_on_attempt_reports_each_attempt(serve, make_client, make_case):
    server = serve(lambda ex: ex.json({}, status=503) if ex.n == 0 else ex.json(OK))
    events: list[dict] = []
    result = make_client(server.url, retries=2).call(make_case(), on_attempt=events.append)

    assert result.error is None
    assert [(e["attempt"], e["ok"]) for e in events] == [(1, False), (2, True)]
    assert events[0]["error"] == f"HTTP 503 from POST {server.url}"
    assert events[1]["status"] == 200
    assert all(isinstance(e["elapsed_ms"], float) for e in events)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("2", 2.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        ("soon", None),
    ],
)
def test_parse_retry_after_seconds(header, expected):
    assert parse_retry_after(header) == expected


def test_parse_retry_after_http_date():
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    waited = parse_retry_after(when)
    assert waited is not None
    assert 25.0 <= waited <= 30.0
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    assert parse_retry_after(past) == 0.0


# --- replies that are not usable -----------------------------------------------------------------


def test_html_body_is_not_valid_json_and_names_type_and_size(serve, make_client, make_case):
    page = b"<html><body>502 Bad Gateway</body></html>\r\n"
    assert len(page) == 43
    server = serve(lambda ex: ex.send(200, page, "text/html; charset=utf-8"))
    result = make_client(server.url, retries=2).call(make_case())

    assert result.error == "endpoint error: reply is not valid JSON (text/html, 43 bytes)"
    assert result.trace is None
    assert result.status == 200
    # A reply that arrived but is garbage is not retried.
    assert result.attempts == 1
    assert len(server.requests) == 1


def test_invalid_json_without_a_content_type(serve, make_client, make_case):
    server = serve(lambda ex: ex.send(200, b"{nope", content_type=None))
    result = make_client(server.url).call(make_case())
    assert result.error == "endpoint error: reply is not valid JSON (no content type, 5 bytes)"


def test_non_utf8_json_is_invalid(serve, make_client, make_case):
    server = serve(lambda ex: ex.send(200, '{"answer": "café"}'.encode("latin-1")))
    result = make_client(server.url).call(make_case())
    assert result.error == "endpoint error: reply is not valid JSON (application/json, 18 bytes)"


def test_reply_without_answer_names_the_missing_field(serve, make_client, make_case):
    server = serve(lambda ex: ex.json({"result": "Refunds take 7 days.", "docs": []}))
    result = make_client(server.url, retries=2).call(make_case())

    assert result.error == (
        'endpoint error: reply has no "answer" field (keys: docs, result); '
        "set endpoint.response.answer to the answer's dotted path (did you mean result?)"
    )
    assert result.attempts == 1
    assert len(server.requests) == 1


def test_reply_that_is_a_list(serve, make_client, make_case):
    server = serve(lambda ex: ex.json([{"answer": "x"}]))
    result = make_client(server.url).call(make_case())
    assert result.error == "endpoint error: reply is a JSON list, not an object"


# --- timeouts ------------------------------------------------------------------------------------


def test_slow_server_times_out_on_every_attempt(serve, make_client, make_case, sleeps):
    server = serve(lambda ex: (ex.hang(2.0), ex.json(OK)))
    started = time.monotonic()
    result = make_client(server.url, timeout_s=0.3, retries=1).call(make_case())

    assert result.error == "endpoint error: timeout after 0.3 s (2 attempts)"
    assert result.attempts == 2
    assert len(server.requests) == 2
    assert sleeps.delays == [0.5]
    assert time.monotonic() - started < 1.5


def test_timeout_of_whole_seconds_prints_without_decimals(serve, make_client, make_case):
    # The reason in the spec reads "timeout after 30 s", not "30.0 s".
    server = serve(lambda ex: (ex.hang(2.0), ex.json(OK)))
    client = make_client(server.url, timeout_s=1, retries=0)
    result = client.call(make_case())
    assert result.error == "endpoint error: timeout after 1 s (1 attempt)"


def test_slow_then_fast_succeeds_and_latency_is_the_successful_attempt(serve, make_client, make_case):
    server = serve(lambda ex: (ex.hang(0.3), ex.json({}, status=503)) if ex.n == 0 else ex.json(OK))
    result = make_client(server.url, timeout_s=5, retries=1).call(make_case())

    assert result.error is None
    assert result.trace is not None
    assert result.total_ms >= 300.0
    assert result.trace.latency_ms < 250.0


def test_body_dribbled_past_the_deadline_times_out_at_the_deadline(serve, make_client, make_case):
    # Each byte arrives well within the socket timeout, but the whole reply would
    # take ~2 s: timeout_s is a deadline for the call, not for each read.
    body = json.dumps({"answer": "x" * 30}).encode()
    server = serve(lambda ex: ex.trickle(body, every_s=0.05))
    started = time.monotonic()
    result = make_client(server.url, timeout_s=0.3, retries=0).call(make_case())

    assert result.error == "endpoint error: timeout after 0.3 s (1 attempt)"
    assert time.monotonic() - started < 1.0


# --- reply shapes end to end ---------------------------------------------------------------------


def test_seed_trace_shape_end_to_end(serve, make_client, make_case):
    reply = {
        "answer": "7 天无理由退换。",
        "refused": False,
        "retrieved": ["退款政策：7 天无理由退换", "赠品需随主商品退回"],
        "retrievedIds": ["doc-refund-1", "doc-refund-3"],
        "latencyMs": 98765,
        "costUsd": 0.0021,
    }
    server = serve(lambda ex: ex.json(reply))
    result = make_client(server.url).call(make_case())

    trace = result.trace
    assert result.error is None and trace is not None
    assert trace.answer == "7 天无理由退换。"
    assert trace.retrieved_ids == ("doc-refund-1", "doc-refund-3")
    assert trace.passages[1].text == "赠品需随主商品退回"
    assert trace.cost_usd == 0.0021
    # The endpoint's own latency is kept, but ragjudge's figure is measured around the call.
    assert trace.server_latency_ms == 98765.0
    assert 0.0 < trace.latency_ms < 5000.0


def test_response_mapping_from_the_config_file(serve, make_case, tmp_path, monkeypatch):
    reply = {
        "data": {
            "output": {"text": "Invoices are emailed.", "declined": False, "certainty": "Medium"},
            "docs": [
                {"doc_id": "inv-1", "chunk": " Invoices are emailed within 24 h. ", "name": "Invoices"},
                {"doc_id": 17, "chunk": "VAT invoices need a tax id."},
            ],
            "usage": {"usd": 0.5},
        }
    }
    server = serve(lambda ex: ex.json(reply))
    monkeypatch.setenv("RAG_URL", server.url)
    (tmp_path / "ragjudge.yml").write_text(
        "endpoint:\n"
        "  url: ${RAG_URL}\n"
        "  response:\n"
        "    answer: data.output.text\n"
        "    refused: data.output.declined\n"
        "    confidence: data.output.certainty\n"
        "    retrieved: data.docs\n"
        "    retrieved_id: doc_id\n"
        "    retrieved_text: chunk\n"
        "    retrieved_title: name\n"
        "    cost_usd: data.usage.usd\n",
        encoding="utf-8",
    )
    config = load_config(tmp_path / "ragjudge.yml")
    assert config.endpoint.url is not None
    result = EndpointClient(config.endpoint, config.endpoint.url).call(make_case())

    trace = result.trace
    assert result.error is None and trace is not None
    assert trace.answer == "Invoices are emailed."
    assert trace.refused is False
    assert trace.confidence == "medium"
    assert trace.retrieved_ids == ("inv-1", "17")
    assert [p.text for p in trace.passages] == ["Invoices are emailed within 24 h.", "VAT invoices need a tax id."]
    assert [p.title for p in trace.passages] == ["Invoices", "(untitled)"]
    assert trace.cost_usd == 0.5


def test_response_mapping_to_a_missing_path_names_it(serve, make_client, make_case):
    server = serve(lambda ex: ex.json({"data": {"result": "x"}}))
    result = make_client(server.url, response={"answer": "data.output.text"}).call(make_case())
    assert result.error == (
        "endpoint error: endpoint.response.answer: data.output.text resolves to nothing: "
        "data is an object with keys result: did you mean data.result?"
    )


def test_a_request_checked_ahead_is_not_rendered_again_for_its_call(serve, make_client, make_case, monkeypatch):
    server = serve(lambda ex: ex.json(OK))
    client = make_client(server.url)
    rendered: list[str] = []
    real = client._requests.render
    monkeypatch.setattr(client._requests, "render", lambda case: rendered.append(case.id) or real(case))
    checked, unchecked, same_id = make_case("a"), make_case("b"), make_case("a", question="Another question?")
    assert client.render(checked) == (server.url, '{"question": "How do I get a refund?"}')
    assert client.call(checked).error is None
    assert client.call(unchecked).error is None
    client.render(checked)
    assert client.call(same_id).error is None  # another case object: never served a request made for another
    assert rendered == ["a", "b", "a", "a"]
    assert [json.loads(r.body) for r in server.requests] == [
        {"question": "How do I get a refund?"},
        {"question": "How do I get a refund?"},
        {"question": "Another question?"},
    ]
