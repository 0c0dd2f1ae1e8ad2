"""Loopback fake servers (127.0.0.1 only): a fake OpenAI chat-completions API and a fake GitHub REST API.

Fixtures ``fake_openai`` / ``fake_github`` live in ``tests.fakes.fixtures``; to use them elsewhere, in a
conftest.py write ``from tests.fakes.fixtures import fake_github, fake_openai  # noqa: F401``.
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
