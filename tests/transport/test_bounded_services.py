"""Prometheus, the feedback URL and the GitHub API end within their deadline against a server that drips."""

from __future__ import annotations

import time

import pytest

from ragjudge.canary.feedback import from_url
from ragjudge.canary.prometheus import PrometheusSource
from ragjudge.config.canary_config import FeedbackPrometheus
from ragjudge.errors import EvaluationError
from ragjudge.github.rest import GitHubClient, GitHubError
from tests.fakes.raw_server import DripServer, http_reply

BODY = b'{"status": "success", "data": {"resultType": "vector", "result": []}}'


@pytest.mark.parametrize("drip_body", [False, True], ids=["status-line", "body"])
def test_prometheus_query_ends_at_its_deadline(drip_body: bool) -> None:
    reply = http_reply(BODY)
    head, _, body = reply.partition(b"\r\n\r\n")
    server = DripServer(body, 0.2, prefix=head + b"\r\n\r\n") if drip_body else DripServer(reply, 0.2)
    with server:
        queries = {
            k: "up" for k in ("treatment_dislikes", "treatment_responses", "control_dislikes", "control_responses")
        }
        source = PrometheusSource(FeedbackPrometheus(url=server.url, **queries), timeout_s=1)
        started = time.monotonic()
        with pytest.raises(EvaluationError) as failed:
            source.query("treatment_dislikes")
        elapsed = time.monotonic() - started
    assert failed.value.message == f"prometheus {server.url}: no complete reply within 1 s"
    assert 0.9 < elapsed < 2.0


def test_feedback_url_ends_at_its_deadline() -> None:
    with DripServer(http_reply(b'{"treatment": {}}'), 0.2) as server:
        started = time.monotonic()
        with pytest.raises(EvaluationError) as failed:
            from_url(server.url + "/counts", {}, timeout_s=1)
        elapsed = time.monotonic() - started
    assert failed.value.message == f"feedback url {server.url}/counts: no complete reply within 1 s"
    assert 0.9 < elapsed < 2.0


def test_github_call_ends_at_its_deadline_per_attempt() -> None:
    with DripServer(http_reply(b'{"login": "x"}'), 0.2) as server:
        client = GitHubClient(server.url, "ghs_token123456", sleep=lambda s: None, retries=1, timeout_s=0.5)
        started = time.monotonic()
        with pytest.raises(GitHubError) as failed:
            client.request("GET", "/user")
        elapsed = time.monotonic() - started
    assert failed.value.message == "GET /user: no complete reply within 0.5 s after 2 attempts"
    assert server.requests == 2
    assert 0.9 < elapsed < 2.0
