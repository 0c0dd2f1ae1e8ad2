"""A real `hayhooks run` on a free loopback port, serving tests/fakes/hayhooks_app/support_rag, whose generator
talks to a FakeOpenAI in this process.

Use the `hayhooks_server` fixture (session-scoped: hayhooks takes seconds to start); it skips when hayhooks is
not installed, and fails instead under CI (``CI=true``). Nothing leaves 127.0.0.1: Haystack's telemetry is off, no
OTLP exporter is configured, the OpenAI base URL is the fake's, and the server runs in an empty folder (hayhooks
loads a `.env` from its working directory) with its own HOME. Under strace, a server answering the plain, chat and
streaming routes connected only to the fake.

`traced_hayhooks` is the same server with Haystack's OpenTelemetry tracer on (`hayhooks[tracing]`, as a team turns
it on: `OTEL_EXPORTER_OTLP_ENDPOINT` and `HAYSTACK_CONTENT_TRACING_ENABLED=true`), exporting to a loopback port
picked before it starts, where a run's `traces.receive` listens.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.fakes._http import free_port
from tests.fakes._process import missing_modules, stop_process, unavailable, wait_ready
from tests.fakes.openai_server import FakeOpenAI, Reply

APP_DIR = Path(__file__).parent / "hayhooks_app"
FAKE_KEY = "sk-fake-hayhooks-0000"
START_TIMEOUT_S = 60.0
DECLINE_EN = "I'm sorry, I don't have information about that."
DECLINE_ZH = "抱歉，暂时无法提供该信息。"

_CITED = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<text>.+)$", re.MULTILINE)
_SENTENCE = re.compile(r"^.+?(?:\.(?=\s|$)|。)")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def answer_from_prompt(body: dict[str, Any], call_index: int) -> Reply:
    """The model: the first listed document's first sentence with its `[doc_id]`, or a decline in words
    (in Chinese when the question is) when the prompt lists no documents."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []) if isinstance(m, dict))
    question = prompt.rsplit("Question:", 1)[-1]
    cited = _CITED.search(prompt)
    if cited is None:
        return Reply(content=DECLINE_ZH if _CJK.search(question) else DECLINE_EN)
    first = _SENTENCE.match(cited["text"])
    sentence = first.group(0) if first else cited["text"]
    return Reply(content=f"{sentence} [{cited['id']}]")


@dataclass(frozen=True)
class RunningHayhooks:
    url: str
    """``http://127.0.0.1:PORT``: the plain route is ``{url}/support_rag/run``."""
    openai: FakeOpenAI
    process: subprocess.Popen[bytes]
    log: Path
    home: Path
    """The server's HOME: hayhooks writes .cache/hayhooks/dashboard-token there; Haystack, with telemetry
    on, would write .haystack/config.yaml."""
    otlp_port: int | None = None
    """Traced only: the loopback port its exporter sends to (`traces.receive: 127.0.0.1:<otlp_port>`)."""

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def server_env(openai_base_url: str, home: Path) -> dict[str, str]:
    """The server process's environment: ours without proxies, OTLP, OPENAI_, HAYSTACK_ or HAYHOOKS_ settings,
    plus the fake's; HOME is `home`, so nothing Haystack might write (~/.haystack) lands in the real one."""
    dropped = ("OTEL_", "HAYHOOKS_", "OPENAI_", "HAYSTACK_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped) and "proxy" not in k.lower()}
    env.update(
        {
            "OPENAI_API_KEY": FAKE_KEY,
            "OPENAI_BASE_URL": openai_base_url,
            "OPENAI_MAX_RETRIES": "0",
            "OPENAI_TIMEOUT": "10",
            "HAYSTACK_TELEMETRY_ENABLED": "False",
            "HOME": str(home),
            "HAYHOOKS_SHOW_TRACEBACKS": "true",
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    return env


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    def deployed(status: requests.Response) -> bool:
        return status.ok and "support_rag" in status.text

    wait_ready(f"{url}/status", process, log, "hayhooks", START_TIMEOUT_S, deployed, "deploy support_rag")


TRACING_MODULES = (
    "hayhooks",
    "haystack_integrations.tracing.opentelemetry",
    "opentelemetry.instrumentation.fastapi",
    "opentelemetry.sdk",
    "opentelemetry.exporter.otlp.proto.http",
)
"""What `hayhooks[tracing]` brings that a traced hayhooks needs: Haystack's tracer, the FastAPI instrumentation
that continues an incoming `traceparent`, the SDK and its OTLP/HTTP exporter."""


def require(modules: tuple[str, ...], what: str) -> None:
    """Skip (fail under CI) when a module the server needs is missing."""
    missing = missing_modules(modules)
    if missing:
        unavailable(f"{', '.join(missing)} not installed ({what} comes with pip install -e '.[test]')", "hayhooks")


def traced_env(otlp_port: int) -> dict[str, str]:
    """What turns hayhooks' tracing on, as a team sets it: the exporter's endpoint (hayhooks then builds the
    tracer itself and instruments its FastAPI app, which continues the `traceparent` ragjudge sends) and
    Haystack's content tracing (without it no span carries the documents). A batch every 100 ms, and an export
    that nothing receives (between runs) given up after 2 s, not 10."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2",
        "HAYSTACK_CONTENT_TRACING_ENABLED": "true",
    }


@contextmanager
def _serve(root: Path, extra_env: Mapping[str, str], otlp_port: int | None = None) -> Iterator[RunningHayhooks]:
    log = root / "hayhooks.log"
    home = root / "home"
    home.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with FakeOpenAI(answer_from_prompt, api_key=FAKE_KEY) as fake, log.open("wb") as out:
        # The console script's code, run by this interpreter (`python -m hayhooks` does nothing: its
        # __main__ is empty).
        command = [sys.executable, "-c", "import sys; from hayhooks.cli import hayhooks_cli; sys.exit(hayhooks_cli())"]
        command += ["run", "--host", "127.0.0.1", "--port", str(port), "--pipelines-dir", str(APP_DIR)]
        env = {**server_env(fake.base_url, home), **extra_env}
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_ready(url, process, log)
            yield RunningHayhooks(url, fake, process, log, home, otlp_port)
        finally:
            stop_process(process)


@pytest.fixture(scope="session")
def hayhooks_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHayhooks]:
    """FakeOpenAI (answering with `answer_from_prompt`) and `hayhooks run` serving support_rag against it."""
    require(("hayhooks",), "hayhooks")
    with _serve(tmp_path_factory.mktemp("hayhooks"), {}) as server:
        yield server


@pytest.fixture(scope="session")
def traced_hayhooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHayhooks]:
    """`hayhooks_server` with tracing on, exporting to `otlp_port` on loopback (nothing listens there but a run's
    receiver)."""
    require(TRACING_MODULES, "hayhooks[tracing]")
    otlp_port = free_port()
    # The spans of its start (the deploy, the readiness polls of /status) are taken here, before any run listens:
    # a run would count them as spans of traces it never sent.
    from tests.fakes.otlp_sink import OtlpSink  # opentelemetry-proto: imported once the requirement is checked

    sink = OtlpSink(port=otlp_port).__enter__()
    try:
        with _serve(tmp_path_factory.mktemp("hayhooks-traced"), traced_env(otlp_port), otlp_port) as server:
            if "Hayhooks tracing enabled with OTLP" not in server.output():
                raise RuntimeError(f"hayhooks started without its tracer:\n{server.output()}")
            # Until the startup's spans are in: a /status poll's server span, then a quiet batch delay.
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline and not any(s.name == "GET /status" for s in sink.spans()):
                time.sleep(0.05)
            time.sleep(0.5)
            sink.__exit__()
            sink = None
            yield server
    finally:
        if sink is not None:
            sink.__exit__()
