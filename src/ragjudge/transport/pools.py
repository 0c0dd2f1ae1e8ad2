"""urllib3 connections whose sockets are covered by the running attempt's `Deadline`.

urllib3 opens and reuses connections deep inside a request; these connection
classes attach the socket to the current thread's deadline when it is opened and
each time it carries a request, so the watchdog can cut it off while the status
line, the headers or the body are still dripping in. The endpoint client uses
them through `watched_pool`; `requests` sessions (transport/sessions.py) mount them.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import certifi
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family
from urllib3.util.timeout import _DEFAULT_TIMEOUT

from ragjudge.transport import deadline, lookup


class _Connection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        """urllib3's own, but with the name looked up under the attempt's deadline (see transport/lookup.py).

        The errors are urllib3's, as its `_new_conn` raises them, so callers read them the same way.
        """
        try:
            found = lookup.addresses(self._dns_host.strip("[]"), self.port, allowed_gai_family())
            sock = self._connect_to_first(found)
        except lookup.LookupTimedOut as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out. ({exc})") from exc
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        except TimeoutError as exc:
            raise ConnectTimeoutError(
                self, f"Connection to {self.host} timed out. (connect timeout={self.timeout})"
            ) from exc
        except OSError as exc:
            raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") from exc
        sys.audit("http.client.connect", self, self.host, self.port)
        deadline.attach(sock)
        return sock

    def _connect_to_first(self, found: list[lookup.AddressInfo]) -> socket.socket:
        """The first of the addresses that takes the connection, tried in order (urllib3 and the socket
        module do the same after their own lookup).

        Not urllib3's `create_connection` per address: it would look the address up again and encode it
        with the idna codec, whose import `lookup.addresses` exists partly to keep off the first call."""
        failed: OSError | None = None
        timeout: object = self.timeout  # urllib3's "socket default" sentinel at run time, whatever the stubs say
        for family, kind, proto, _name, address in found:
            sock = socket.socket(family, kind, proto)
            try:
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                if timeout is not _DEFAULT_TIMEOUT:
                    sock.settimeout(self.timeout)
                if self.source_address:
                    sock.bind(self.source_address)
                sock.connect(address)
            except OSError as exc:
                sock.close()
                failed = exc
                continue
            return sock
        raise failed if failed is not None else OSError(f"no address found for {self.host}")

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
