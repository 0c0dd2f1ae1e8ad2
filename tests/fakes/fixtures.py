"""pytest fixtures for the fakes: each yields a started server and stops it afterwards."""

from collections.abc import Iterator

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import FakeOpenAI


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
