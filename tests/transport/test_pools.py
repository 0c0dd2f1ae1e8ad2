"""The watched urllib3 connections: the deadline sees their sockets, over plain HTTP and TLS alike."""

from __future__ import annotations

import time

from urllib3.connection import HTTPConnection, HTTPSConnection

from ragjudge.transport import deadline
from ragjudge.transport.pools import WatchedPool, WatchedTLSPool, watched_pool
from tests.fakes.raw_server import DripServer, http_reply


def test_the_tls_connection_keeps_https_handshake_and_adds_the_watch() -> None:
    tls, plain = WatchedTLSPool.ConnectionCls, WatchedPool.ConnectionCls
    assert issubclass(tls, HTTPSConnection) and tls.connect is HTTPSConnection.connect
    assert plain.connect is HTTPConnection.connect and not issubclass(plain, HTTPSConnection)
    # Both attach their socket to the deadline: the methods are the watched ones, not urllib3's own.
    for cls in (tls, plain):
        assert cls._new_conn is not HTTPConnection._new_conn
        assert cls.request is not HTTPConnection.request


def test_a_call_that_hangs_is_cut_off_at_the_deadline() -> None:
    # The server reads the request, then says nothing for 30 s (until it is stopped).
    with DripServer(http_reply(b"{}"), every_s=30) as server:
        manager = watched_pool(maxsize=1)
        started = time.monotonic()
        with deadline.limit(0.3) as limit:
            try:
                # The socket timeout alone would wait 30 s for a status line that never comes.
                manager.urlopen("GET", f"{server.url}/", timeout=30, retries=False)
                outcome = "replied"
            except Exception as exc:  # the watchdog closes the socket: urllib3 reports it its own way
                outcome = type(exc).__name__
    assert limit.fired is not None
    assert outcome != "replied"
    assert time.monotonic() - started < 10  # cut off by the watchdog, not by the 30 s socket timeout
