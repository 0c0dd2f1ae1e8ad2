"""endpoint.timeout_s bounds the whole attempt, against servers that drip every part of the reply."""

from __future__ import annotations

import json
import time

from tests.fakes.raw_server import DripServer, http_reply

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.client import EndpointClient

OK = json.dumps({"answer": "ok", "retrieved": []}).encode()


def _call(url: str, make_case, **config) -> tuple[float, str | None, int]:
    client = EndpointClient(EndpointConfig(**config), url, sleep=lambda s: None)
    started = time.monotonic()
    result = client.call(make_case())
    return time.monotonic() - started, result.error, result.attempts


def test_status_line_and_headers_dripped_a_byte_a_second_end_at_the_deadline(make_case):
    # Every byte arrives well within any socket timeout: only a whole-attempt deadline ends this.
    with DripServer(http_reply(OK), every_s=0.2) as server:
        elapsed, error, attempts = _call(server.url + "/ask", make_case, timeout_s=1, retries=0)
    assert error == "endpoint error: timeout after 1 s (1 attempt)"
    assert attempts == 1
    assert 0.9 < elapsed < 2.0
    assert server.bytes_sent < 12  # cut off in the status line, long before the headers end


def test_each_retry_gets_its_own_whole_deadline(make_case):
    with DripServer(http_reply(OK), every_s=0.2) as server:
        elapsed, error, _attempts = _call(server.url + "/ask", make_case, timeout_s=0.5, retries=1)
    assert error == "endpoint error: timeout after 0.5 s (2 attempts)"
    assert server.requests == 2
    assert 0.9 < elapsed < 2.0


def test_body_dripped_after_prompt_headers_ends_at_the_deadline(make_case):
    reply = http_reply(OK)
    head, _, body = reply.partition(b"\r\n\r\n")
    with DripServer(body, every_s=0.2, prefix=head + b"\r\n\r\n") as server:
        elapsed, error, _ = _call(server.url + "/ask", make_case, timeout_s=1, retries=0)
    assert error == "endpoint error: timeout after 1 s (1 attempt)"
    assert 0.9 < elapsed < 2.0


def test_a_body_without_length_cut_off_at_the_deadline_is_a_timeout_not_a_short_reply(make_case):
    # Without Content-Length the end of the body is the end of the connection: a cut-off body
    # looks complete, so the deadline must be asked, not the parser.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
    with DripServer(OK, every_s=0.2, prefix=head) as server:
        _, error, _ = _call(server.url + "/ask", make_case, timeout_s=1, retries=0)
    assert error == "endpoint error: timeout after 1 s (1 attempt)"


def test_a_prompt_reply_is_unaffected_by_the_watchdog(make_case):
    with DripServer(b"", every_s=0.0, prefix=http_reply(OK)) as server:
        elapsed, error, _ = _call(server.url + "/ask", make_case, timeout_s=1, retries=0)
    assert error is None
    assert elapsed < 0.9


def test_the_issues_case_one_byte_a_second_with_timeout_3(make_case):
    # As reported: status line and headers at one byte a second hung the run with `timeout_s: 3`.
    with DripServer(http_reply(OK), every_s=1.0) as server:
        elapsed, error, _ = _call(server.url + "/ask", make_case, timeout_s=3, retries=0)
    assert error == "endpoint error: timeout after 3 s (1 attempt)"
    assert 2.9 < elapsed < 4.0
