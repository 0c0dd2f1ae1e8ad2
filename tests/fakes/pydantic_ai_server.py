"""A real Pydantic AI agent served over AG-UI by uvicorn on loopback (tests/fakes/pydantic_ai_app/agent.py), one
process per mode (`healthy`, `failing`, `refunder`, `wrong-order`), started once a session and stopped after it;
`traced_agent` serves the healthy one instrumented (`Agent.instrument_all()`, the real SDK exporting over OTLP/HTTP),
its ASGI app wrapped in OpenTelemetryMiddleware or not.

Skipped where pydantic-ai-slim (with its AG-UI extra) or uvicorn is missing, except under CI (``CI=true``), where
a missing install fails the test: .ci/run installs both with the test extras, pinned in pyproject.toml.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes._http import free_port
from tests.fakes._process import missing_modules, stop_process, unavailable, wait_ready

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0


AGENT_MODULES = ("pydantic_ai", "ag_ui", "uvicorn", "starlette")
ASGI_TRACING_MODULES = (*AGENT_MODULES, "opentelemetry.instrumentation.asgi", "opentelemetry.sdk")


def require_pydantic_ai(modules: tuple[str, ...] = AGENT_MODULES) -> None:
    """Skip (fail under CI) when the agent cannot be served."""
    missing = missing_modules(modules)
    if not missing:
        return
    reason = (
        f"{', '.join(missing)} not installed (pip install -e '.[test]' brings pydantic-ai-slim[ag-ui], uvicorn, "
        "opentelemetry-instrumentation-asgi)"
    )
    unavailable(reason, "Pydantic AI")


def _start(root: Path, name: str, env: dict[str, str]) -> tuple[str, subprocess.Popen[bytes]]:
    """uvicorn serving the agent app with `env`: the origin (`http://127.0.0.1:PORT`) once it answers."""
    port = free_port()
    log = root / f"{name}.log"
    command = [sys.executable, "-m", "uvicorn", "tests.fakes.pydantic_ai_app.agent:app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    origin = f"http://127.0.0.1:{port}"
    try:
        # Any answer (405 for a GET) means it is up.
        wait_ready(f"{origin}/agent", process, log, "uvicorn", START_TIMEOUT_S, lambda _reply: True, "start")
    except RuntimeError:
        stop_process(process)
        raise
    return origin, process


@pytest.fixture(scope="session")
def pydantic_ai_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], str]]:
    """`pydantic_ai_agent(mode)`: the URL of the agent's AG-UI route in that mode, started on first use."""
    started: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}
    root = tmp_path_factory.mktemp("pydantic-ai")

    def start(mode: str) -> str:
        require_pydantic_ai()
        if mode not in started:
            env = {**os.environ, "RAGJUDGE_AGENT_MODE": mode, "NO_PROXY": "127.0.0.1,localhost"}
            started[mode] = _start(root, mode, env)
        return started[mode][0] + "/agent"

    yield start
    for _, process in started.values():
        stop_process(process)


@dataclass(frozen=True)
class TracedAgent:
    origin: str
    """``http://127.0.0.1:PORT``: the AG-UI route is ``{origin}/agent``, the plain one ``{origin}/ask``."""
    otlp_port: int
    """The loopback port its exporter sends to (`traces.receive: 127.0.0.1:<otlp_port>`)."""


@pytest.fixture(scope="session")
def traced_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[bool], TracedAgent]]:
    """`traced_agent(continues)`: the healthy agent with `Agent.instrument_all()` exporting over OTLP/HTTP to a port
    of its own; `continues`: its app wrapped in the ASGI middleware (it continues `traceparent`), else not (each
    request a trace of its own). Started on first use, once a session."""
    started: dict[bool, tuple[TracedAgent, subprocess.Popen[bytes]]] = {}
    root = tmp_path_factory.mktemp("pydantic-ai-traced")

    def start(continues: bool) -> TracedAgent:
        require_pydantic_ai(ASGI_TRACING_MODULES)
        if continues not in started:
            from tests.fakes.otlp_sink import OtlpSink  # opentelemetry-proto: once the requirement is checked

            otlp_port = free_port()
            env = {
                **os.environ,
                "RAGJUDGE_AGENT_MODE": "healthy",
                "NO_PROXY": "127.0.0.1,localhost",
                "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
                "OTEL_BSP_SCHEDULE_DELAY": "100",
                "OTEL_EXPORTER_OTLP_TIMEOUT": "2",
                "RAGJUDGE_AGENT_ASGI_TRACING": "1" if continues else "0",
            }
            # The readiness polls' spans (the middleware traces them) are taken here, before a run listens.
            with OtlpSink(port=otlp_port):
                origin, process = _start(root, f"traced-{continues}", env)
                time.sleep(0.5)
            started[continues] = (TracedAgent(origin, otlp_port), process)
        return started[continues][0]

    yield start
    for _, process in started.values():
        stop_process(process)
