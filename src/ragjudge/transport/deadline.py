"""A whole-attempt deadline that does not rely on a socket read timing out.

A socket timeout bounds each read, so a server that sends one byte a second
never trips it. Instead each attempt runs under a `Deadline`; the sockets the
attempt uses are attached to it, and one watchdog thread shuts them down when
the deadline passes, or at once when the run is stopped (SIGINT, SIGTERM).
The blocked read then returns, and the caller asks `deadline.fired` why.

Shutting a socket down (rather than closing it) is safe from another thread:
the file descriptor stays valid until its owner closes it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

STOPPED = "stopped"
EXPIRED = "expired"
INTERRUPTED = "interrupted: the run was stopped"
"""How a call cut off by a stop ends its reason; the runner leaves such a judgement out rather than score it."""


class _Stop:
    """Whether the run has been told to stop, and why; set by the signal handler."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.why = ""

    def is_set(self) -> bool:
        return self.event.is_set()


STOP = _Stop()


class Deadline:
    """One attempt's time limit and the sockets it covers."""

    def __init__(self, seconds: float, stoppable: bool = True) -> None:
        self.seconds = seconds
        self.stoppable = stoppable
        """False for calls that report what a stopped run did (posting the PR comment): only time ends them."""
        self.expires = time.monotonic() + seconds
        self.fired: str | None = None
        """None while running; EXPIRED when the time ran out; STOPPED when the run was stopped."""
        self._sockets: list[socket.socket] = []
        self._done = False
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return max(0.0, self.expires - time.monotonic())

    def attach(self, sock: socket.socket | None) -> None:
        """Cover `sock`; one attached after the deadline fired is shut at once."""
        if sock is None:
            return
        with self._lock:
            if self._done:
                return
            if self.fired is not None:
                _shut(sock)
                return
            if all(s is not sock for s in self._sockets):
                self._sockets.append(sock)

    def fire(self, why: str) -> None:
        with self._lock:
            if self._done or self.fired is not None:
                return
            self.fired = why
            for sock in self._sockets:
                _shut(sock)

    def finish(self) -> None:
        """The attempt is over: its sockets may go back to a pool, so they are never shut after this."""
        with self._lock:
            self._done = True
            self._sockets.clear()


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown: an SSLSocket's own would tear down its TLS state from this thread.
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread for every deadline in the process."""

    def __init__(self) -> None:
        self._active: set[Deadline] = set()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._next = float("inf")
        """When the thread wakes next: a deadline expiring later needs no wake-up call (most do)."""

    def add(self, deadline: Deadline) -> None:
        with self._wake:
            self._active.add(deadline)
            if STOP.is_set() and deadline.stoppable:
                deadline.fire(STOPPED)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ragjudge-watchdog", daemon=True)
                self._thread.start()
            if deadline.expires < self._next:
                self._next = deadline.expires
                self._wake.notify()

    def remove(self, deadline: Deadline) -> None:
        with self._wake:
            self._active.discard(deadline)

    def stop_all(self) -> None:
        with self._wake:
            for deadline in list(self._active):
                if deadline.stoppable:
                    deadline.fire(STOPPED)
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                now = time.monotonic()
                for deadline in [d for d in self._active if d.expires <= now]:
                    deadline.fire(EXPIRED)
                    self._active.discard(deadline)
                self._next = min((d.expires for d in self._active), default=now + 60.0)
                self._wake.wait(max(0.005, self._next - now))


_WATCHDOG = _Watchdog()
_local = threading.local()


@contextmanager
def limit(seconds: float, stoppable: bool = True) -> Iterator[Deadline]:
    """Run the block under a deadline of `seconds`; sockets attached inside it are covered."""
    deadline = Deadline(seconds, stoppable)
    previous: Deadline | None = getattr(_local, "deadline", None)
    _local.deadline = deadline
    _WATCHDOG.add(deadline)
    try:
        yield deadline
    finally:
        deadline.finish()
        _WATCHDOG.remove(deadline)
        _local.deadline = previous


def current() -> Deadline | None:
    """The deadline of the attempt running on this thread, if any."""
    return getattr(_local, "deadline", None)


def attach(sock: socket.socket | None) -> None:
    """Attach `sock` to this thread's deadline (a no-op outside `limit`)."""
    deadline = current()
    if deadline is not None:
        deadline.attach(sock)


def stop(why: str = "stopped") -> None:
    """Stop the run: every attempt in flight is cut off now, and every later one at once."""
    if not STOP.event.is_set():
        STOP.why = why
    STOP.event.set()
    _WATCHDOG.stop_all()


def stop_reason() -> str:
    """What stopped the run (e.g. the signal's name); empty while it runs."""
    return STOP.why if STOP.is_set() else ""


def stopped() -> bool:
    return STOP.is_set()


def sleep(seconds: float) -> None:
    """`time.sleep` that returns early when the run is stopped."""
    STOP.event.wait(max(0.0, seconds))


def reset() -> None:
    """Forget a stop (tests that run the CLI in-process more than once)."""
    STOP.event.clear()
    STOP.why = ""
