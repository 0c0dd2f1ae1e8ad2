"""The endpoint client's connections: kept alive and reused across calls, compressed replies read decoded."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragjudge.cases import Case
from ragjudge.endpoint.client import EndpointClient

REPLY = {"answer": "Refunds take five days.", "retrieved": [{"id": "d1", "text": "Refunds take five days."}]}


class KeepAlive(ThreadingHTTPServer):
    """HTTP/1.1 with keep-alive, as real services speak it: counts the connections it was opened."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.connections = 0
        self.encodings: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: KeepAlive

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        offered = self.headers.get("Accept-Encoding", "")
        with self.server.lock:
            self.server.encodings.append(offered)
        payload = json.dumps(REPLY).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if "gzip" in offered:
            payload = gzip.compress(payload)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def keep_alive() -> Iterator[KeepAlive]:
    server = KeepAlive()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_calls_reuse_kept_alive_connections_and_read_gzip_replies(
    keep_alive: KeepAlive, make_client: Callable[..., EndpointClient], make_case: Callable[..., Case]
) -> None:
    client = make_client(f"http://127.0.0.1:{keep_alive.server_address[1]}/ask", concurrency=4)
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
    client = make_client(
        f"http://127.0.0.1:{keep_alive.server_address[1]}/ask", headers={"accept-encoding": "identity"}
    )
    result = client.call(make_case())
    assert (result.error, result.trace and result.trace.answer) == (None, "Refunds take five days.")
    assert keep_alive.encodings == ["identity"]
