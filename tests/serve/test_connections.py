"""Connections: a deadline for the whole request, a fixed pool of threads, and strict Content-Length.

Raw sockets play the clients that never finish (idle, dripping, a body announced and never sent).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragjudge.serve.lobby import Lobby
from tests.serve.service import Held, Service, running_service, small_config

TOKEN = "connections-token-8e3b"
DEADLINE_S = 0.5


@pytest.fixture
def held() -> Iterator[Held]:
    h = Held()
    yield h
    h.release()


@pytest.fixture
def service(tmp_path: Path, held: Held) -> Iterator[Service]:
    config = small_config(tmp_path, read_timeout_s=DEADLINE_S, max_connections=2)
    with running_service(config, token=TOKEN, runner=held.runner) as svc:
        yield svc


def connect(service: Service) -> socket.socket:
    host, port = service.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    return sock


def read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def exchange(service: Service, raw: bytes) -> bytes:
    with connect(service) as sock:
        sock.sendall(raw)
        return read_all(sock)


def wait_for_a_free_connection(service: Service) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if exchange(service, b"GET /healthz HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200"):
            return
        time.sleep(0.05)
    raise AssertionError("the service never had a free connection again")


def test_a_body_announced_and_never_sent_is_408_before_the_token_check(service: Service) -> None:
    with connect(service) as sock:
        sock.sendall(b"POST /flagger/rollout HTTP/1.0\r\nContent-Length: 100\r\n\r\n{")
        started = time.monotonic()
        reply = read_all(sock)
    elapsed = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.0 408 ")
    assert reply.endswith(b"the body did not arrive within 0.5 s (serve.read_timeout_s)")
    assert DEADLINE_S - 0.1 < elapsed < DEADLINE_S + 1.5


def test_idle_and_dripping_connections_are_closed_at_the_deadline(service: Service) -> None:
    with connect(service) as idle:
        started = time.monotonic()
        assert read_all(idle) == b""  # closed, nothing answered
        assert time.monotonic() - started < DEADLINE_S + 1.5
    # A byte every 0.1 s keeps each read short, but not the request: the deadline is for all of it.
    with connect(service) as drip:
        started = time.monotonic()
        with contextlib.suppress(OSError):
            for byte in b"GET /healthz HTTP/1.0\r\nX-Slow: " + b"a" * 100:
                drip.sendall(bytes([byte]))
                time.sleep(0.1)
        assert read_all(drip) == b""
        assert time.monotonic() - started < DEADLINE_S + 1.5


def test_connections_past_the_pool_and_its_queue_are_503_and_the_threads_stay_fixed(tmp_path: Path, held: Held) -> None:
    # A longer deadline here: the held sockets must outlast the test's own steps on a loaded machine.
    config = small_config(tmp_path, read_timeout_s=3, max_connections=2)
    with running_service(config, token=TOKEN, runner=held.runner) as service:
        _fill_the_pool(service)


def started(service: Service) -> socket.socket:
    """A connection that has begun its request and not finished it: it holds a thread until its deadline."""
    sock = connect(service)
    sock.sendall(b"GET /healthz HTTP/1.0\r\n")
    return sock


def _fill_the_pool(service: Service) -> None:
    before = threading.active_count()
    idle = [started(service) for _ in range(4)]  # two held by the pool's threads, two waiting
    try:
        time.sleep(0.2)
        refused = exchange(service, b"GET /healthz HTTP/1.0\r\n\r\n")
        assert refused.startswith(b"HTTP/1.0 503 Service Unavailable\r\n")
        assert b"Retry-After: 1\r\n" in refused
        assert refused.endswith(b'{"error": "too many connections (serve.max_connections is 2); retry later"}')
        many = [started(service) for _ in range(20)] + [connect(service) for _ in range(20)]
        time.sleep(0.1)
        assert threading.active_count() == before
        assert len([t for t in threading.enumerate() if t.name.startswith("serve-connection-")]) == 2
        for sock in many:
            sock.close()
    finally:
        for sock in idle:
            sock.close()
    assert {"event": "connection_refused", "max_connections": 2} in service.log
    wait_for_a_free_connection(service)


@pytest.mark.parametrize("length", ["1_0", "+10", "10 ", "1 0", "0x0a", "\u00b2", "-1"])
def test_a_content_length_that_is_not_plain_digits_is_400(service: Service, length: str) -> None:
    body = b'{"name": "a"}'
    head = f"POST /v1/analyses HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {length}\r\n\r\n"
    reply = exchange(service, head.encode("latin-1") + body)
    assert reply.startswith(b"HTTP/1.0 400 ")
    assert reply.endswith(b'{"error": "Content-Length is not a number (plain digits, given once)"}')


def test_two_content_lengths_are_400(service: Service) -> None:
    head = b"POST /flagger/rollout HTTP/1.0\r\nContent-Length: 2\r\nContent-Length: 13\r\n\r\n"
    reply = exchange(service, head + b'{"name": "a"}')
    assert reply.startswith(b"HTTP/1.0 400 ")
    assert reply.endswith(b"Content-Length is not a number (plain digits, given once)")


def test_idle_connections_wait_in_the_lobby_and_do_not_hold_the_threads(service: Service) -> None:
    # Sockets that send nothing cost no thread: the pool (2 threads here) still serves at once.
    before = threading.active_count()
    idle = [connect(service) for _ in range(200)]
    try:
        time.sleep(0.1)
        started_at = time.monotonic()
        assert exchange(service, b"GET /healthz HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200 OK\r\n")
        assert time.monotonic() - started_at < DEADLINE_S
        assert threading.active_count() == before
        # ... and at the read deadline they are closed, without an answer.
        time.sleep(DEADLINE_S + 0.3)
        for sock in idle[:5]:
            assert read_all(sock) == b""
    finally:
        for sock in idle:
            sock.close()


def test_a_full_lobby_closes_the_connection_that_waited_longest() -> None:
    dropped: list[socket.socket] = []
    ready: list[socket.socket] = []
    lobby = Lobby(30.0, lambda sock, address, deadline: ready.append(sock), dropped.append, capacity=2)
    pairs = [socket.socketpair() for _ in range(4)]
    try:
        for ours, _ in pairs[:3]:
            lobby.add(ours, "peer")
            time.sleep(0.05)
        deadline = time.monotonic() + 5
        while not dropped and time.monotonic() < deadline:
            time.sleep(0.01)
        assert dropped == [pairs[0][0]]
        # A connection that speaks is handed on, and makes room of its own.
        pairs[1][1].sendall(b"G")
        while not ready and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ready == [pairs[1][0]]
        lobby.add(pairs[3][0], "peer")
        time.sleep(0.1)
        assert dropped == [pairs[0][0]]
    finally:
        lobby.close()
        for a, b in pairs:
            a.close()
            b.close()
