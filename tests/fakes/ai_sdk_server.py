"""A real Vercel AI SDK chat route (tests/fakes/ai_sdk_app/server.mjs) run by Node on a free loopback port, whose
model is a FakeOpenAI in this process.

Use the `ai_sdk_server` fixture (session-scoped: Node takes a moment to load the SDK), or `ai_sdk`, the same server
with the model set back to `LlmMode.HEALTHY` and the fake's requests cleared around each test. A test switches the
model with ``ai_sdk.use(LlmMode.REASONING)``. Skipped where `node` or the app's node_modules are missing (`npm ci`
in tests/fakes/ai_sdk_app), except under CI (``CI=true``), where a missing install fails the test instead: a
broken install must not pass as skipped tests.

Nothing leaves 127.0.0.1: the route's only model is the fake (``LLM_BASE_URL``), the process runs with its own
HOME and without proxy, Node, npm, OpenAI, Vercel or OTLP settings from ours. Under strace, the server answering
in each mode connected only to the fake.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, assert_never

import pytest

from tests.fakes._http import free_port
from tests.fakes._process import stop_process, unavailable, wait_ready
from tests.fakes.hayhooks_server import answer_from_prompt
from tests.fakes.openai_server import FakeOpenAI, Reply, Responder

APP_DIR = Path(__file__).parent / "ai_sdk_app"
FAKE_KEY = "sk-fake-ai-sdk-0000"
START_TIMEOUT_S = 30.0
CUT_AFTER_CHARS = 20
"""`LlmMode.CUT`: the answer's characters the model streams before its stream breaks."""
REASONING = "The question is about the first document listed. Its first sentence answers it."
"""`LlmMode.REASONING`: what the model thinks before it answers."""


class LlmMode(StrEnum):
    """How the route's model answers."""

    HEALTHY = "healthy"
    """`answer_last_question`: the first listed document's first sentence and `[doc_id]`, or a decline."""
    FAILING = "failing"
    """HTTP 500 with OpenAI's server_error body."""
    CUT = "cut"
    """The healthy answer streamed up to `CUT_AFTER_CHARS` characters, mid-delta; then no finish chunk, no
    ``[DONE]``, and the chunked body ends with the connection."""
    REASONING = "reasoning"
    """The healthy answer, after `REASONING` streamed as ``reasoning_content`` deltas."""


def answer_last_question(body: dict[str, Any], call_index: int) -> Reply:
    """`answer_from_prompt` on the system prompt and the last user turn only: in a conversation, the earlier turns
    (the last question decides whether a decline is in Chinese)."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    system = [m for m in messages if m.get("role") == "system"]
    users = [m for m in messages if m.get("role") == "user"]
    question = str(users[-1].get("content") or "") if users else ""
    return answer_from_prompt({"messages": [*system, {"role": "user", "content": f"Question: {question}"}]}, call_index)


ORDER_ID = re.compile(r"\b[A-Z]\d{3}\b")


def answer_with_tools(body: dict[str, Any], call_index: int) -> Reply:
    """The model of the tools route (`/api/chat-tools`): asked about an order, it calls `lookup_order` with the
    order's id; given the tool's result, it answers from it; else as `answer_last_question`."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    results = [m for m in messages if m.get("role") == "tool"]
    if results:
        return Reply(content=f"Order {results[-1].get('content')}.")
    users = [m for m in messages if m.get("role") == "user"]
    order = ORDER_ID.search(str(users[-1].get("content") or "")) if users else None
    if body.get("tools") and order is not None:
        return Reply(tool_calls=[("lookup_order", {"order_id": order.group(0)})])
    return answer_last_question(body, call_index)


def responder(mode: LlmMode) -> Responder:
    """The FakeOpenAI responder for `mode`."""

    def answer(body: dict[str, Any], call_index: int) -> Reply:
        match mode:
            case LlmMode.HEALTHY:
                return answer_with_tools(body, call_index)
            case LlmMode.FAILING:
                return Reply(status=500)
            case LlmMode.CUT:
                return dataclasses.replace(answer_last_question(body, call_index), cut_after_chars=CUT_AFTER_CHARS)
            case LlmMode.REASONING:
                return dataclasses.replace(answer_last_question(body, call_index), reasoning=REASONING)
            case _:
                assert_never(mode)

    return answer


@dataclass(frozen=True)
class RunningAiSdk:
    url: str
    """``http://127.0.0.1:PORT``: the routes are ``{url}/api/chat``, ``{url}/api/chat-text``,
    ``{url}/api/chat-tools``, ``{url}/healthz``."""
    openai: FakeOpenAI
    """The route's model; `use` sets its responder."""
    process: subprocess.Popen[bytes]
    log: Path
    """The server's stdout and stderr (streamText's errors are logged there)."""

    @property
    def chat_url(self) -> str:
        return f"{self.url}/api/chat"

    def use(self, mode: LlmMode) -> None:
        """Answer with `mode` from now on, with the fake's recorded requests cleared."""
        self.openai.responder = responder(mode)
        self.openai.reset()

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def server_env(port: int, llm_base_url: str, home: Path) -> dict[str, str]:
    """The server's environment: ours without proxies, Node, npm, OpenAI, AI SDK, Vercel or OTLP settings, plus
    the fake model's; HOME is `home`."""
    dropped = ("OTEL_", "OPENAI_", "LLM_", "AI_", "VERCEL", "NODE_", "NPM_")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(dropped) and "proxy" not in k.lower()}
    env.update(
        {
            "PORT": str(port),
            "LLM_BASE_URL": llm_base_url,
            "LLM_API_KEY": FAKE_KEY,
            "HOME": str(home),
            "NO_PROXY": "127.0.0.1,localhost",
        }
    )
    return env


def require_app(app_dir: Path = APP_DIR) -> str:
    """The `node` to run the app with; skips the test when Node or the app's node_modules are missing, or fails it
    under CI (``CI=true``), where .ci/run installs both."""
    node = shutil.which("node")
    if node is None:
        reason = "node is not installed (.ci/run installs nodejs and npm)"
    elif not (app_dir / "node_modules" / "ai").is_dir():
        reason = f"the AI SDK app is not installed (cd {app_dir} && npm ci)"
    else:
        return node
    unavailable(reason, "AI SDK")


@pytest.fixture(scope="session")
def ai_sdk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAiSdk]:
    """FakeOpenAI (in `LlmMode.HEALTHY`) and `node server.mjs` answering with it."""
    node = require_app()
    root = tmp_path_factory.mktemp("ai_sdk")
    log = root / "server.log"
    home = root / "home"
    home.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with FakeOpenAI(responder(LlmMode.HEALTHY), api_key=FAKE_KEY) as fake, log.open("wb") as out:
        process = subprocess.Popen(
            [node, str(APP_DIR / "server.mjs")],
            cwd=root,
            env=server_env(port, fake.base_url, home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_ready(
                f"{url}/healthz",
                process,
                log,
                "the AI SDK app",
                START_TIMEOUT_S,
                what="answer /healthz",
                interval_s=0.1,
            )
            yield RunningAiSdk(url, fake, process, log)
        finally:
            stop_process(process)


@pytest.fixture
def ai_sdk(ai_sdk_server: RunningAiSdk) -> Iterator[RunningAiSdk]:
    """`ai_sdk_server`, healthy and with no recorded model requests at the start of the test, and after it."""
    ai_sdk_server.use(LlmMode.HEALTHY)
    yield ai_sdk_server
    ai_sdk_server.use(LlmMode.HEALTHY)
