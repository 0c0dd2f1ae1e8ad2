"""Loopback fakes (127.0.0.1 only), all on one base (`_http.LoopbackServer`): a fake OpenAI chat-completions
API, a fake GitHub REST API, a RAG endpoint (`rag`), framework-shaped RAG services (`framework_servers`),
a real `hayhooks run` serving a real Haystack pipeline (`hayhooks_server`, `hayhooks_app/`), a real Vercel AI SDK
chat route run by Node (`ai_sdk_server`, `ai_sdk_app/`), canary arms
(`arms`, `cluster`), servers that misbehave on purpose (`responder_server`, `raw_server`), and reports
built from plain data (`reports`).

Fixtures ``fake_openai`` / ``fake_github`` / ``rag_server`` live in ``tests.fakes.fixtures``, registered for
every test by ``pytest_plugins`` in tests/conftest.py.
"""

from tests.fakes.github_server import FakeGitHub, RecordedRequest
from tests.fakes.openai_server import (
    FakeOpenAI,
    Reply,
    Responder,
    queue,
    rate_limited_once,
    reject_json_schema,
)

__all__ = [
    "FakeGitHub",
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "Responder",
    "queue",
    "rate_limited_once",
    "reject_json_schema",
]
