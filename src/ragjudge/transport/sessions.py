"""`requests` sessions (GitHub, Prometheus) whose sockets are covered by the running attempt's `Deadline`.

They mount the watched connections of transport/pools.py.
"""

from __future__ import annotations

from typing import Any

import requests
from requests.adapters import HTTPAdapter

from ragjudge.transport import deadline
from ragjudge.transport.pools import WatchedPool, WatchedTLSPool


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": WatchedPool, "https": WatchedTLSPool}


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
