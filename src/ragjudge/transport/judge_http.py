"""The judge's HTTP client: the `openai` SDK over httpx, with deadline-covered sockets and no redirects.

The SDK's own client follows redirects to any host and bounds each socket read,
not the call. This one hands every socket to the running attempt's `Deadline`
(through an httpcore network backend that wraps the stock one) and returns a
3xx as it is, so a judge's base URL that moved is an error naming where, and a
prompt and key never travel to a host nobody configured.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from ragjudge.transport import deadline, lookup

_SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class _Stream(httpcore2.NetworkStream):
    """The stock stream, whose socket joins the deadline of whichever attempt uses it."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def _watch(self) -> None:
        sock = self._inner.get_extra_info("socket")
        deadline.attach(sock if isinstance(sock, socket.socket) else None)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._watch()
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._watch()
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        self._watch()
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[_SocketOption] | None = None,
    ) -> httpcore2.NetworkStream:
        stream = _Stream(self._connect_to_first(host, port, timeout, local_address, socket_options))
        stream._watch()
        return stream

    def _connect_to_first(
        self,
        host: str,
        port: int,
        timeout: float | None,
        local_address: str | None,
        socket_options: Iterable[_SocketOption] | None,
    ) -> httpcore2.NetworkStream:
        """The stock connect to each address of `host` in turn, the name looked up under the attempt's
        deadline (see transport/lookup.py); TLS still checks the certificate against `host`."""
        if lookup.numeric(host):
            return self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        try:
            found = lookup.addresses(host, port)
        except lookup.LookupTimedOut as exc:
            raise httpcore2.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        options = list(socket_options or ())
        failed: Exception | None = None
        for *_, address in found:
            try:
                return self._inner.connect_tcp(address[0], port, timeout, local_address, options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failed = exc
        raise failed if failed is not None else httpcore2.ConnectError(f"no address found for {host}")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[_SocketOption] | None = None
    ) -> httpcore2.NetworkStream:
        stream = _Stream(self._inner.connect_unix_socket(path, timeout, socket_options))
        stream._watch()
        return stream

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def judge_http_client(timeout_s: float) -> httpx2.Client:
    """An httpx client for `openai.OpenAI(http_client=...)`; calls must run under `deadline.limit`.

    Proxies from the environment (HTTPS_PROXY, NO_PROXY, ...) apply as they do for the SDK's own client;
    the proxy's sockets are watched too.
    """
    mounts: dict[str, httpx2.BaseTransport | None] = {
        pattern: None if url is None else _watched(httpx2.HTTPTransport(proxy=url))
        for pattern, url in _environment_proxies().items()
    }
    return httpx2.Client(
        transport=_watched(httpx2.HTTPTransport()),
        mounts=mounts,
        timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
        limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
        follow_redirects=False,
    )


def _watched(transport: httpx2.HTTPTransport) -> httpx2.HTTPTransport:
    pool = getattr(transport, "_pool", None)
    # httpx has no public way to pass a network backend; a changed internal must fail loudly, not go unwatched.
    if not isinstance(pool, httpcore2.ConnectionPool) or not hasattr(pool, "_network_backend"):
        raise RuntimeError("httpx's transport changed: cannot install the deadline backend")
    pool._network_backend = _Backend()
    return transport


def _environment_proxies() -> dict[str, str | None]:
    """httpx's own reading of the proxy variables (a client given its own transport does not read them)."""
    from httpx2._utils import get_environment_proxies

    return get_environment_proxies()
