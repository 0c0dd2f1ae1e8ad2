"""Fixtures of the config tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Run in an empty directory with none of the variables the tests use set."""
    monkeypatch.chdir(tmp_path)
    for name in ("RAG_URL", "RAG_TOKEN", "OPENAI_API_KEY", "TIMEOUT", "MODEL"):
        monkeypatch.delenv(name, raising=False)
