"""urllib3 connections whose sockets are covered by the running attempt's `Deadline`.

urllib3 opens and reuses connections deep inside a request; these connection
classes attach the socket to the current thread's deadline when it is opened and
each time it carries a request, so the watchdog can cut it off while the status
line, the headers or the body are still dripping in. The endpoint client uses
them through `watched_pool`; `requests` sessions (transport/sessions.py) mount them.
"""

from __future__ import annotations

import socket
from typing import Any

import certifi
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ragjudge.transport import deadline


class _Connection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        deadline.attach(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline.attach(self.sock)  # a kept-alive connection carrying this attempt
        super().request(*args, **kwargs)


class _TLSConnection(_Connection, HTTPSConnection):
    """The same over TLS: HTTPSConnection's handshake, `_Connection`'s watch on the socket."""


class WatchedPool(HTTPConnectionPool):
    ConnectionCls = _Connection


class WatchedTLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


def watched_pool(maxsize: int) -> urllib3.PoolManager:
    """urllib3's own pool manager with these watched connections, for the endpoint client's calls.

    `requests` costs about as much CPU per call again as urllib3 underneath it (merging cookies and
    settings, building its response): at thousands of calls a run that is a third of the endpoint's share.
    Certificates are checked against the bundle `requests` uses (certifi's), read without importing
    requests, which the run would otherwise load before its first call for nothing else.
    """
    manager = urllib3.PoolManager(maxsize=maxsize, cert_reqs="CERT_REQUIRED", ca_certs=certifi.where())
    manager.pool_classes_by_scheme = {"http": WatchedPool, "https": WatchedTLSPool}
    return manager
