"""A real Pydantic AI agent served over AG-UI by uvicorn on loopback (tests/fakes/pydantic_ai_app/agent.py), one
process per mode (`healthy`, `failing`, `refunder`, `wrong-order`), started once a session and stopped after it.

Skipped where pydantic-ai-slim (with its AG-UI extra) or uvicorn is missing, except under CI (``CI=true``), where
a missing install fails the test: .ci/run installs both with the test extras, pinned in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.fakes._http import free_port
from tests.fakes.hayhooks_server import stop_process

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0


def require_pydantic_ai() -> None:
    """Skip (fail under CI) when the agent cannot be served."""
    missing = [m for m in ("pydantic_ai", "ag_ui", "uvicorn", "starlette") if importlib.util.find_spec(m) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not installed (pip install -e '.[test]' brings pydantic-ai-slim[ag-ui], uvicorn)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: under CI the Pydantic AI tests must run, not skip")
    pytest.skip(reason)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {process.returncode}:\n{log.read_text()}")
        try:
            requests.get(url, timeout=2)  # any answer (405 for GET) means it is up
            return
        except requests.ConnectionError:
            time.sleep(0.2)
    raise RuntimeError(f"the agent did not start within {START_TIMEOUT_S:.0f} s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def pydantic_ai_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], str]]:
    """`pydantic_ai_agent(mode)`: the URL of the agent's AG-UI route in that mode, started on first use."""
    started: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}
    root = tmp_path_factory.mktemp("pydantic-ai")

    def start(mode: str) -> str:
        require_pydantic_ai()
        if mode not in started:
            port = free_port()
            log = root / f"{mode}.log"
            env = {**os.environ, "RAGJUDGE_AGENT_MODE": mode, "NO_PROXY": "127.0.0.1,localhost"}
            command = [sys.executable, "-m", "uvicorn", "tests.fakes.pydantic_ai_app.agent:app"]
            command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
            with log.open("wb") as out:
                process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            url = f"http://127.0.0.1:{port}/agent"
            started[mode] = (url, process)
            _wait_ready(url, process, log)
        return started[mode][0]

    yield start
    for _, process in started.values():
        stop_process(process)
