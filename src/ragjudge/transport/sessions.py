"""`requests` sessions whose sockets are covered by the running attempt's `Deadline`.

urllib3 opens and reuses connections deep inside `Session.request`; these
connection classes attach the socket to the current thread's deadline when it
is opened and each time it carries a request, so the watchdog can cut it off
while the status line, the headers or the body are still dripping in.
"""

from __future__ import annotations

import socket
from typing import Any

import requests
from requests.adapters import HTTPAdapter
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


class _TLSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        deadline.attach(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline.attach(self.sock)
        super().request(*args, **kwargs)


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}


def watched_session(*, trust_env: bool = False) -> requests.Session:
    """A session for calls made under `deadline.limit`; proxies from the environment only when asked."""
    session = requests.Session()
    session.trust_env = trust_env
    adapter = _Adapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
