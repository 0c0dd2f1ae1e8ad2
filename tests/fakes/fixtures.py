"""pytest fixtures for the fakes: each yields a started server and stops it afterwards.

Registered once, for every test, by `pytest_plugins` in tests/conftest.py: a test only names the fixture.
"""

from collections.abc import Iterator

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started FakeOpenAI answering ``content="ok"`` until you set ``fake_openai.responder``."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A started FakeGitHub with defaults (token_login "github-actions[bot]", ``GET /user`` -> 403)."""
    with FakeGitHub() as fake:
        yield fake


@pytest.fixture
def rag_server() -> Iterator[RagServer]:
    """A started loopback RAG server with no replies yet: fill `rag_server.replies` in the test."""
    with RagServer({}) as server:
        yield server
