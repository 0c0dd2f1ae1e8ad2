"""What the fakes that run a real server in a process of their own share: whether it can run here (skip when not,
fail under CI, where .ci/run installs it), and waiting until it answers."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
import requests


def unavailable(reason: str, tests: str) -> NoReturn:
    """Skip the test; under CI (``CI=true``) fail it instead: there, a missing server is a broken set-up, and a
    skip would let its tests pass unseen."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: under CI the {tests} tests must run, not skip")
    pytest.skip(reason)


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """The modules of `modules` that cannot be imported here."""
    return [m for m in modules if _missing(m)]


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True


def wait_ready(
    url: str,
    process: subprocess.Popen[bytes],
    log: Path,
    name: str,
    timeout_s: float,
    ready: Callable[[requests.Response], bool] = lambda reply: reply.ok,
    what: str = "answer",
    interval_s: float = 0.2,
) -> None:
    """Until a GET of `url` is `ready`; a RuntimeError with the server's log when it exits first or never is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode} before answering:\n{log.read_text()}")
        try:
            if ready(requests.get(url, timeout=2)):
                return
        except requests.ConnectionError:
            pass
        time.sleep(interval_s)
    raise RuntimeError(f"{name} did not {what} within {timeout_s:.0f} s:\n{log.read_text()}")


def stop_process(process: subprocess.Popen[bytes], timeout_s: float = 5) -> None:
    """Stop a server the fixture started: politely, then for good."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
