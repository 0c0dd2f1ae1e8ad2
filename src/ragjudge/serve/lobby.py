"""Connections that have not sent a byte yet: one thread watches them all with a selector.

An idle socket then costs a file descriptor, not one of the pool's threads, so idle sockets cannot
starve the clients that do send a request. A connection is handed on as soon as it is readable,
closed without an answer at its read deadline, and, when the lobby is full, the connection that has
waited longest is closed to make room: a client that sends its request at once always gets in.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

Ready = Callable[[socket.socket, Any, float], None]
"""(connection, client address, its read deadline on the monotonic clock)."""


def default_capacity() -> int:
    """1024, or half the process's file descriptor limit when that is lower."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1024
    if soft == resource.RLIM_INFINITY:
        return 1024
    return max(1, min(1024, soft // 2))


class Lobby:
    def __init__(
        self, seconds: float, on_ready: Ready, on_drop: Callable[[socket.socket], None], capacity: int
    ) -> None:
        self._seconds = seconds
        self._on_ready = on_ready
        self._on_drop = on_drop
        self._capacity = capacity
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._arrived: list[tuple[socket.socket, Any, float]] = []
        self._closed = False
        # Registered connections in arrival order, which is also deadline order; entries stay after a
        # connection is handed on (each holds its socket, so an id here is never reused while queued).
        self._queue: deque[tuple[float, socket.socket]] = deque()
        self._registered: set[int] = set()
        self._thread = threading.Thread(target=self._run, name="serve-lobby", daemon=True)
        self._thread.start()

    def add(self, sock: socket.socket, address: Any) -> None:
        """From the accepting thread; the lobby thread registers it."""
        with self._lock:
            if self._closed:
                self._on_drop(sock)
                return
            self._arrived.append((sock, address, time.monotonic() + self._seconds))
        self._wake()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._wake()
        self._thread.join(timeout=1)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: a wake-up is already pending
            self._wake_w.send(b"\0")

    def _waiting(self, sock: socket.socket) -> bool:
        # By object, not file number: a handed-on socket's number may already belong to a newer one.
        return id(sock) in self._registered

    def _register(self, sock: socket.socket, data: Any) -> None:
        self._selector.register(sock, selectors.EVENT_READ, data)
        self._registered.add(id(sock))

    def _unregister(self, sock: socket.socket) -> None:
        self._selector.unregister(sock)
        self._registered.discard(id(sock))

    def _drop(self, sock: socket.socket) -> None:
        self._unregister(sock)
        self._on_drop(sock)

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    closed = self._closed
                    arrived, self._arrived = self._arrived, []
                if closed:
                    for sock, _, _ in arrived:
                        self._on_drop(sock)
                    return
                for sock, address, deadline in arrived:
                    try:
                        self._register(sock, (address, deadline))
                    except (OSError, ValueError):  # closed meanwhile
                        self._on_drop(sock)
                        continue
                    self._queue.append((deadline, sock))
                self._make_room()
                timeout = max(0.0, self._queue[0][0] - time.monotonic()) if self._queue else None
                for key, _ in self._selector.select(timeout):
                    if key.data is None:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                        continue
                    conn = key.fileobj
                    if not isinstance(conn, socket.socket):  # only sockets are registered
                        continue
                    self._unregister(conn)
                    address, deadline = key.data
                    try:
                        self._on_ready(conn, address, deadline)
                    except Exception:  # one connection's fault must not stop the lobby, which every one passes
                        with contextlib.suppress(Exception):
                            self._on_drop(conn)
                self._expire()
        finally:
            for key in list(self._selector.get_map().values()):
                if key.data is not None and isinstance(key.fileobj, socket.socket):
                    self._on_drop(key.fileobj)
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()

    def _expire(self) -> None:
        now = time.monotonic()
        while self._queue and self._queue[0][0] <= now:
            _, sock = self._queue.popleft()
            if self._waiting(sock):
                self._drop(sock)

    def _make_room(self) -> None:
        while len(self._registered) > self._capacity and self._queue:
            _, sock = self._queue.popleft()
            if self._waiting(sock):
                self._drop(sock)
        # Entries for connections already handed on: forgotten once at the front.
        while self._queue and not self._waiting(self._queue[0][1]):
            self._queue.popleft()
