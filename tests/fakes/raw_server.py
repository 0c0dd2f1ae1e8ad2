"""Loopback servers below HTTP: one answers every request with exactly the bytes a test gives it, the
other answers one byte at a time.

`RawServer` is for fuzzing: the status line, the headers and the body may be anything at all, including
not HTTP. `DripServer` sends its reply a byte every `every_s` seconds: a per-read socket timeout never
fires against it (a byte always arrives in time), so only a whole-attempt deadline ends a call to it.

Both read the request (head, then `Content-Length` bytes), write the reply and close the connection,
on the one loopback base (`tests.fakes._http`, with its `RawHandler`).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from tests.fakes._http import LoopbackServer, RawHandler


class RawServer(LoopbackServer):
    """`with RawServer(lambda request: b"HTTP/1.1 200 OK\\r\\n...") as server:` then call `server.url`."""

    handler = RawHandler
    keeps_url = True

    def __init__(self, reply: Callable[[bytes], bytes]) -> None:
        super().__init__()
        self.reply = reply
        self.requests: list[bytes] = []

    def answer(self, conn: socket.socket, request: bytes) -> None:
        self.requests.append(request)
        conn.sendall(self.reply(request))


class DripServer(LoopbackServer):
    """Reads each request, then sends `reply` one byte every `every_s` seconds (until stopped)."""

    handler = RawHandler
    keeps_url = True

    def __init__(self, reply: bytes, every_s: float = 1.0, prefix: bytes = b"") -> None:
        super().__init__()
        self.reply = reply
        self.prefix = prefix
        """Sent at once, before the drip (e.g. the status line and headers, to drip only the body)."""
        self.every_s = every_s
        self.requests = 0
        self.bytes_sent = 0
        self._stopping = threading.Event()

    def answer(self, conn: socket.socket, request: bytes) -> None:
        self.requests += 1
        conn.sendall(self.prefix)
        for i in range(len(self.reply)):
            if self._stopping.wait(self.every_s):
                return
            conn.sendall(self.reply[i : i + 1])
            self.bytes_sent += 1

    def stop(self) -> None:
        self._stopping.set()
        super().stop()


def http_reply(body: bytes, status: str = "200 OK", content_type: str = "application/json") -> bytes:
    """A whole HTTP/1.1 reply with a Content-Length."""
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body
