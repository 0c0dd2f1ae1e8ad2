"""The service's connections and lifetime: the listening socket, the fixed pool of threads that serve
requests (`app.Handler`), the JSON log, and a stop on SIGTERM.
"""

from __future__ import annotations

import json
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import HTTPServer
from typing import Any

from ragjudge.serve.analyses import Registry
from ragjudge.serve.app import Handler
from ragjudge.serve.lobby import Lobby, default_capacity


def json_log(event: dict[str, Any]) -> None:
    """One JSON object a line on stderr: the service's log (never a header or a body)."""
    record = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **event}
    print(json.dumps(record, ensure_ascii=False), file=sys.stderr, flush=True)


class ServeServer(HTTPServer):
    """One listening socket, a lobby for connections that have sent nothing yet (lobby.py), and a fixed
    pool of `serve.max_connections` threads serving the ones that have.

    As many again may wait for a thread; past that a connection is answered 503 at once and closed,
    so no number of clients (or idle sockets) grows the threads or the memory without bound.
    """

    request_queue_size = 64

    def __init__(
        self,
        address: tuple[str, int],
        registry: Registry,
        token: str | None,
        log: Callable[[dict[str, Any]], None] = json_log,
    ) -> None:
        self.registry = registry
        self.token = token
        self.log = log
        limits = registry.config.serve
        self.max_connections = limits.max_connections
        self.read_timeout_s = limits.read_timeout_s
        # Connections held (served or waiting): counted here rather than by the queue's size, which
        # would also refuse while a free thread has not yet picked up a waiting connection.
        self._slots = threading.BoundedSemaphore(2 * limits.max_connections)
        self._waiting: queue.Queue[tuple[socket.socket, Any, float] | None] = queue.Queue()
        self._local = threading.local()
        # A failed bind calls server_close() from within __init__: nothing to stop yet.
        self._workers: list[threading.Thread] = []
        self._lobby: Lobby | None = None
        super().__init__(address, Handler)
        # Started once the socket is bound: a port in use leaves no threads behind.
        self._lobby = Lobby(self.read_timeout_s, self._ready, self.shutdown_request, default_capacity())
        self._workers = [
            threading.Thread(target=self._work, name=f"serve-connection-{i + 1}", daemon=True)
            for i in range(limits.max_connections)
        ]
        for worker in self._workers:
            worker.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        assert self._lobby is not None
        self._lobby.add(request, client_address)

    def _ready(self, request: socket.socket, client_address: Any, deadline: float) -> None:
        """The connection has sent its first bytes: a thread serves it, or it is refused."""
        if self._slots.acquire(blocking=False):
            self._waiting.put((request, client_address, deadline))
        else:
            self._refuse(request)

    def read_deadline(self) -> float:
        """The deadline of the connection this thread serves (monotonic clock)."""
        deadline: float = self._local.deadline
        return deadline

    def _refuse(self, request: socket.socket) -> None:
        message = json.dumps(
            {"error": f"too many connections (serve.max_connections is {self.max_connections}); retry later"}
        ).encode("utf-8")
        head = (
            "HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            f"Content-Length: {len(message)}\r\nConnection: close\r\n\r\n"
        ).encode("ascii")
        try:
            request.settimeout(0.5)  # a fresh socket's send buffer takes this at once; never wait on a client
            request.sendall(head + message)
            # What the client sent, read off: closing on unread bytes resets the connection, answer and all.
            request.setblocking(False)
            request.recv(65536)
        except OSError:
            pass
        self.shutdown_request(request)
        self.log({"event": "connection_refused", "max_connections": self.max_connections})

    def _work(self) -> None:
        while True:
            item = self._waiting.get()
            if item is None:
                return
            request, client_address, self._local.deadline = item
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
                self._slots.release()

    def server_close(self) -> None:
        super().server_close()
        if self._lobby is not None:
            self._lobby.close()
        while True:  # the connections still waiting are closed, not served
            try:
                item = self._waiting.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
                self._slots.release()
        for _ in self._workers:
            self._waiting.put(None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-answer is routine for a service: one log line, not a traceback.
        exc = sys.exc_info()[1]
        self.log({"event": "connection_error", "error": type(exc).__name__ if exc else "unknown"})

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


def serve_until_stopped(server: ServeServer, stop: threading.Event, poll_s: float = 0.1) -> list[str]:
    """Serve until `stop` is set (by the SIGTERM handler); then mark the running analyses
    `error: interrupted`, close the listening socket, and return their ids."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_s}, daemon=True)
    thread.start()
    try:
        while not stop.wait(poll_s):
            pass
    finally:
        interrupted = server.registry.interrupt()
        server.shutdown()
        server.server_close()
        thread.join(timeout=1)
    return [a.id for a in interrupted]
