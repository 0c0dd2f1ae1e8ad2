"""Sending: connections kept alive and reused across calls, compressed replies read decoded, and a connection
that fails named (never with the URL's credentials)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from tests.fakes._http import Incoming, LoopbackServer, Outgoing

from ragjudge.cases.case import Case
from ragjudge.endpoint.client import EndpointClient

REPLY = {"answer": "Refunds take five days.", "retrieved": [{"id": "d1", "text": "Refunds take five days."}]}


class KeepAlive(LoopbackServer):
    """HTTP/1.1 with keep-alive, as real services speak it: counts the connections it was opened."""

    protocol_version = "HTTP/1.1"

    def __init__(self) -> None:
        super().__init__()
        self.encodings: list[str] = []

    def handle(self, req: Incoming) -> Outgoing:
        offered = req.headers.get("accept-encoding", "")
        with self._lock:
            self.encodings.append(offered)
        payload = json.dumps(REPLY).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if "gzip" in offered:
            payload = gzip.compress(payload)
            headers["Content-Encoding"] = "gzip"
        return Outgoing(200, payload, headers)


@pytest.fixture
def keep_alive() -> Iterator[KeepAlive]:
    with KeepAlive() as server:
        yield server


def test_calls_reuse_kept_alive_connections_and_read_gzip_replies(
    keep_alive: KeepAlive, make_client: Callable[..., EndpointClient], make_case: Callable[..., Case]
) -> None:
    client = make_client(f"http://127.0.0.1:{keep_alive.port}/ask", concurrency=4)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: client.call(make_case(id=f"c{i}")), range(40)))
    assert [(r.error, r.trace and r.trace.answer, r.trace and r.trace.retrieved_ids) for r in results] == [
        (None, "Refunds take five days.", ("d1",))
    ] * 40
    # Four threads at a time: four connections at most, however many calls they carry.
    assert 1 <= keep_alive.connections <= 4
    assert all("gzip" in offered for offered in keep_alive.encodings)


def test_the_teams_accept_encoding_is_sent_instead(
    keep_alive: KeepAlive, make_client: Callable[..., EndpointClient], make_case: Callable[..., Case]
) -> None:
    client = make_client(f"http://127.0.0.1:{keep_alive.port}/ask", headers={"accept-encoding": "identity"})
    result = client.call(make_case())
    assert (result.error, result.trace and result.trace.answer) == (None, "Refunds take five days.")
    assert keep_alive.encodings == ["identity"]


# --- connections ---------------------------------------------------------------------------------


def test_connection_refused_is_retried_and_named(closed_port, make_client, make_case, sleeps):
    result = make_client(f"http://127.0.0.1:{closed_port}/ask", retries=2).call(make_case())

    assert result.error == f"endpoint error: connection refused by 127.0.0.1:{closed_port} after 3 attempts"
    assert "connection refused" in result.error
    assert result.attempts == 3
    assert sleeps.delays == [0.5, 1.0]
    assert result.status is None
    assert result.trace is None


def test_connection_error_never_shows_credentials_in_the_url(closed_port, make_client, make_case):
    url = f"http://ci-bot:s3cret-pass@127.0.0.1:{closed_port}/ask?token=tok-abcdef"
    result = make_client(url, retries=0).call(make_case())

    assert result.error == f"endpoint error: connection refused by 127.0.0.1:{closed_port} after 1 attempt"
    assert "s3cret" not in result.error
    assert "tok-abcdef" not in result.error


def test_server_closing_without_a_reply(serve, make_client, make_case):
    server = serve(lambda ex: ex.drop())
    result = make_client(server.url, retries=1).call(make_case())
    assert (
        result.error == f"endpoint error: connection to 127.0.0.1:{server.port} closed without a reply after 2 attempts"
    )
    assert len(server.requests) == 2


def test_connection_dropped_while_reading_the_reply(serve, make_client, make_case):
    server = serve(lambda ex: ex.truncate(500, b'{"answer": "cut'))
    result = make_client(server.url, retries=1).call(make_case())
    assert result.error == "endpoint error: connection dropped while reading the reply after 2 attempts"
    assert len(server.requests) == 2
