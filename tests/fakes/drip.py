"""A raw TCP loopback server that answers one byte at a time: the status line, the headers, the body.

A per-read socket timeout never fires against it (a byte always arrives in
time), so only a whole-attempt deadline ends a call to it.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Self


class DripServer:
    """Reads each request, then sends `reply` one byte every `every_s` seconds (until stopped)."""

    def __init__(self, reply: bytes, every_s: float = 1.0, prefix: bytes = b"") -> None:
        self.reply = reply
        self.prefix = prefix
        """Sent at once, before the drip (e.g. the status line and headers, to drip only the body)."""
        self.every_s = every_s
        self.requests = 0
        self.bytes_sent = 0
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                _read_request(conn)
                self.requests += 1
                conn.sendall(self.prefix)
                for i in range(len(self.reply)):
                    if self._stop.wait(self.every_s):
                        return
                    conn.sendall(self.reply[i : i + 1])
                    self.bytes_sent += 1
            except OSError:
                return  # the client hung up: what a deadline is for

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._sock.close()
        self._thread.join(timeout=5)


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        rest += chunk


def http_reply(body: bytes, status: str = "200 OK", content_type: str = "application/json") -> bytes:
    """A whole HTTP/1.1 reply with a Content-Length."""
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body
