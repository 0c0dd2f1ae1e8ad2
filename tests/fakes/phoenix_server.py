"""A real Arize Phoenix (`phoenix serve`) on free loopback ports, as the trace store ragjudge reads from
(`traces.store`); its database and working dir in a temporary folder.

Phoenix is large (about 860 MB installed) and pins many packages, so it is not among the test extras: it lives in
a venv of its own (.ci/run installs `arize-phoenix==PHOENIX_VERSION` there), and the tests find its `phoenix`
executable through `RAGJUDGE_PHOENIX`. Without it the tests are skipped, except under CI (``CI=true``), where
they fail: a broken install must not pass as skipped tests.

Nothing leaves 127.0.0.1: the server binds loopback (HTTP and gRPC), runs with its own HOME, without proxy, OTLP
or Phoenix settings from ours, with telemetry, external resources (web fonts, the sandbox's download), the agent
assistant and the MCP server off. Under strace (`-f -e trace=connect`), the server through the store tests
(OTLP received, spans served) made no connect() call at all.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes._http import free_port
from tests.fakes._process import stop_process, unavailable, wait_ready

ENV = "RAGJUDGE_PHOENIX"
PHOENIX_VERSION = "20.26.1"
"""The version .ci/run installs, and the one whose REST reply `ragjudge.traces.stores.PHOENIX` was measured on."""
START_TIMEOUT_S = 90.0
"""It takes about 12 s to answer on a quiet machine: its migrations run first."""


@dataclass(frozen=True)
class RunningPhoenix:
    url: str
    """``http://127.0.0.1:PORT``: the UI, the REST API (``/v1``) and the OTLP/HTTP receiver (``/v1/traces``)."""
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def require_phoenix() -> str:
    """The `phoenix` executable; skips the test when it is not installed, or fails it under CI."""
    path = os.environ.get(ENV, "")
    if not path:
        reason = f"{ENV} is not set (the path of a `phoenix` executable: pip install arize-phoenix=={PHOENIX_VERSION}"
        reason += " in a venv of its own, as .ci/run does)"
    elif not os.access(path, os.X_OK):
        reason = f"{ENV}={path} is not an executable"
    else:
        return path
    unavailable(reason, "Phoenix trace-store")


def server_env(port: int, grpc_port: int, root: Path) -> dict[str, str]:
    """Ours without proxies, OTLP or Phoenix settings; Phoenix on loopback with nothing sent out."""
    dropped = ("OTEL_", "PHOENIX_", "OPENAI_", "ANTHROPIC_")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(dropped) and "proxy" not in k.lower()}
    home = root / "home"
    home.mkdir(exist_ok=True)
    env.update(
        {
            "HOME": str(home),
            "PHOENIX_WORKING_DIR": str(root / "phoenix"),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
            "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
            "PHOENIX_ENABLE_MCP_SERVER": "false",
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    return env


@pytest.fixture(scope="session")
def phoenix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningPhoenix]:
    """`phoenix serve`, answering on its HTTP port; stopped at the end of the session."""
    executable = require_phoenix()
    root = tmp_path_factory.mktemp("phoenix")
    log = root / "server.log"
    port, grpc_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [executable, "serve"],
            cwd=root,
            env=server_env(port, grpc_port, root),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_ready(f"{url}/healthz", process, log, "phoenix", START_TIMEOUT_S, what="answer /healthz")
            yield RunningPhoenix(url, process, log)
        finally:
            stop_process(process)
