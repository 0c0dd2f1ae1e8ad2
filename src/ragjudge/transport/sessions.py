"""HTTP clients whose sockets are covered by the running attempt's `Deadline`.

`requests` sessions (GitHub, Prometheus) and urllib3 pool managers (the endpoint)
open and reuse connections deep inside urllib3; these connection classes attach
the socket to the current thread's deadline when it is opened and each time it
carries a request, so the watchdog can cut it off while the status line, the
headers or the body are still dripping in.
"""

from __future__ import annotations

import socket
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.utils import DEFAULT_CA_BUNDLE_PATH
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


def watched_pool(maxsize: int) -> urllib3.PoolManager:
    """urllib3's own pool manager with the same watched connections, for the endpoint client's calls.

    `requests` costs about as much CPU per call again as urllib3 underneath it (merging cookies and
    settings, building its response): at thousands of calls a run that is a third of the endpoint's share.
    Certificates are checked against the same bundle `requests` uses.
    """
    manager = urllib3.PoolManager(maxsize=maxsize, cert_reqs="CERT_REQUIRED", ca_certs=DEFAULT_CA_BUNDLE_PATH)
    manager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
    return manager


def watched_session(*, trust_env: bool = False) -> requests.Session:
    """A session for calls made under `deadline.limit`; proxies from the environment only when asked."""
    session = requests.Session()
    session.trust_env = trust_env
    adapter = _Adapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class CutOff(requests.Timeout):
    """The whole call did not finish within its deadline, or the run was stopped."""


def bounded_request(
    session: requests.Session, method: str, url: str, seconds: float, *, stoppable: bool = True, **kwargs: Any
) -> requests.Response:
    """`session.request` with the body read, all within `seconds`; raises `CutOff` past it.

    Meant for `watched_session()` sessions; with any other session only the socket timeouts apply.
    `stoppable=False`: a stopped run does not cut this call short (it reports on the run).
    """
    with deadline.limit(seconds, stoppable) as limit:
        try:
            response = session.request(method, url, timeout=seconds, **kwargs)
            _ = response.content  # read here, inside the deadline
        except requests.RequestException as exc:
            if limit.fired is not None:
                raise _cut_off(limit) from None
            raise exc
        if limit.fired is not None:
            raise _cut_off(limit)  # a body cut short can look whole
    return response


def _cut_off(limit: deadline.Deadline) -> CutOff:
    if limit.fired == deadline.STOPPED:
        return CutOff("interrupted")
    return CutOff(f"no complete reply within {limit.seconds:g} s")
