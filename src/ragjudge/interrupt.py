"""SIGINT and SIGTERM stop a run cleanly: no new calls, calls in flight cut off, what was done kept.

The handler only flips the stop switch in `transport.deadline`; the runner sees
it, stops waiting, and the command writes its outputs as usual. A second signal
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

from ragjudge.transport import deadline

EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}
"""128 + the signal number, what shells and CI runners expect."""


def _handler(signum: int, frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    if deadline.stopped():
        sys.stderr.flush()
        os._exit(EXIT_CODES.get(deadline.stop_reason(), 130))
    # os.write, not print: the handler may run while the main thread is inside a print.
    os.write(2, f"ragjudge: {name}: stopping; writing what was done ({name} again quits at once)\n".encode())
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
