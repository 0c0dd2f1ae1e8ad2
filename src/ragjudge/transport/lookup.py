"""Name lookups bounded by the running attempt's deadline.

`getaddrinfo` blocks inside the C library, before there is a socket for the watchdog to shut: a resolver
that does not answer (its timeouts and retries add up to tens of seconds) would hold a call past its
deadline, and a stopped run past its stop. So a lookup under a deadline runs on a daemon thread of its
own, and the caller waits for it only while the deadline lasts and the run goes on; a lookup given up on
ends by itself on its thread, which never holds the process open.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from ragjudge.transport import deadline

AddressInfo = tuple[Any, ...]
"""One `socket.getaddrinfo` entry: (family, type, proto, canonname, sockaddr)."""

_POLL_S = 0.05
"""How often a waiting caller checks whether the run was stopped (the lookup's end wakes it at once)."""


class LookupTimedOut(TimeoutError):
    """The deadline passed, or the run was stopped, before the name was looked up."""


def addresses(host: str, port: int, family: int = socket.AF_UNSPEC) -> list[AddressInfo]:
    """`socket.getaddrinfo(host, port, family, SOCK_STREAM)`, waited for at most until the current deadline."""
    # An ASCII name goes as bytes: a str would be encoded with the idna codec, whose first use imports
    # tables that take 25-30 ms before the first call (urllib3 and the socket module both encode it).
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    limit = deadline.current()
    if limit is None or numeric(host):
        return socket.getaddrinfo(name, port, family, socket.SOCK_STREAM)
    done = threading.Event()
    outcome: list[list[AddressInfo] | BaseException] = []

    def look_up() -> None:
        try:
            outcome.append(socket.getaddrinfo(name, port, family, socket.SOCK_STREAM))
        except BaseException as exc:  # handed to the waiting caller, which raises it
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=look_up, name="ragjudge-lookup", daemon=True).start()
    while not done.wait(min(_POLL_S, limit.remaining())):
        if limit.fired is not None or limit.remaining() <= 0 or (limit.stoppable and deadline.stopped()):
            raise LookupTimedOut(f"looking up {host} did not finish within the deadline")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def numeric(host: str) -> bool:
    """An IP address needs no lookup (getaddrinfo returns it at once)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except (OSError, ValueError):
            continue
        return True
    return False
