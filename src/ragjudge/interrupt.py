"""SIGINT and SIGTERM stop a command cleanly: no new calls, calls in flight cut off, what was done kept.

The CLI runs every command under `stop_on_signals`. The handler only flips the stop
switch in `transport.deadline`; every call in flight ends at once and every later
one fails at once, so the command's pools drain in moments instead of working
through their queues. `run` then writes its outputs as usual; a command that
cannot decide on part of its work (`canary`, `calibrate`) raises `interrupted`
instead of deciding. The exit code says which signal it was. A second signal
quits at once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from ragjudge.errors import ExitCode, Interrupted
from ragjudge.transport import deadline

EXIT_CODES = {"SIGINT": ExitCode.STOPPED_BY_SIGINT, "SIGTERM": ExitCode.STOPPED_BY_SIGTERM}


def _handler(signum: int, frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    if deadline.stopped():
        sys.stderr.flush()
        os._exit(EXIT_CODES.get(deadline.stop_reason(), ExitCode.STOPPED_BY_SIGINT))
    # os.write, not print: the handler may run while the main thread is inside a print.
    os.write(2, f"ragjudge: {name}: stopping the calls in flight ({name} again quits at once)\n".encode())
    deadline.stop(name)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM stop the run instead of killing the process."""
    deadline.reset()
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread (in-process tests from a worker)
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, _handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def exit_code() -> int | None:
    """130 or 143 when a signal stopped the run, else None."""
    return EXIT_CODES.get(deadline.stop_reason()) if deadline.stopped() else None


def interrupted(what: str) -> Interrupted:
    """The error for a command stopped before `what` was done (say what was done in `what`)."""
    name = deadline.stop_reason()
    return Interrupted(
        f"stopped by {name} before {what}: nothing decided, nothing written",
        EXIT_CODES.get(name, ExitCode.STOPPED_BY_SIGINT),
    )
