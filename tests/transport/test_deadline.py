"""The watchdog: a deadline shuts the attempt's sockets; a stop cuts every stoppable attempt at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from ragjudge.transport import deadline


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    deadline.reset()
    yield
    deadline.reset()


def _blocked_read(limit_s: float, stoppable: bool = True) -> tuple[bytes, str | None, float]:
    """Read from a socket whose peer never writes, under a deadline; (what came, why it fired, seconds)."""
    a, b = socket.socketpair()
    with a, b:
        a.settimeout(30)  # far longer than any deadline here
        started = time.monotonic()
        with deadline.limit(limit_s, stoppable) as limit:
            deadline.attach(a)
            try:
                data = a.recv(10)
            except OSError:
                data = b""
        return data, limit.fired, time.monotonic() - started


def test_a_deadline_ends_a_read_that_no_socket_timeout_would() -> None:
    data, fired, elapsed = _blocked_read(0.3)
    assert (data, fired) == (b"", deadline.EXPIRED)
    assert 0.25 < elapsed < 1.0


def test_a_stop_cuts_a_read_in_flight_at_once() -> None:
    threading.Timer(0.2, deadline.stop, args=("SIGINT",)).start()
    data, fired, elapsed = _blocked_read(10)
    assert (data, fired) == (b"", deadline.STOPPED)
    assert elapsed < 1.0
    assert deadline.stop_reason() == "SIGINT"


def test_after_a_stop_a_new_attempt_is_cut_before_it_starts() -> None:
    deadline.stop("SIGTERM")
    _data, fired, elapsed = _blocked_read(10)
    assert (fired, elapsed < 0.5) == (deadline.STOPPED, True)


def test_an_unstoppable_attempt_runs_on_to_its_own_deadline() -> None:
    deadline.stop("SIGTERM")
    _data, fired, elapsed = _blocked_read(0.3, stoppable=False)
    assert fired == deadline.EXPIRED
    assert elapsed > 0.25


def test_sleep_wakes_up_on_stop() -> None:
    threading.Timer(0.1, deadline.stop).start()
    started = time.monotonic()
    deadline.sleep(30)
    assert time.monotonic() - started < 1.0


def test_a_finished_attempt_is_never_shut_afterwards() -> None:
    a, b = socket.socketpair()
    with a, b:
        with deadline.limit(0.1):
            deadline.attach(a)
        time.sleep(0.3)  # past the deadline: the socket may be back in a pool by now
        b.sendall(b"hi")
        assert a.recv(10) == b"hi"
