"""A faked Actions runner for the action, run in-process: INPUT_* with hyphens, temp file-command files,
a pull_request event, and the GitHub API pointed at FakeGitHub on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.github.runner import ActionRunner
from tests.github.workspace import write_example_workspace


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The runner's workspace (see `write_example_workspace`), as the working directory."""
    ws = write_example_workspace(tmp_path / "workspace")
    monkeypatch.chdir(ws)
    return ws


@pytest.fixture
def runner(workspace: Path, example_rag_url: str, fake_github: FakeGitHub, tmp_path: Path) -> ActionRunner:
    """A runner for a pull_request event on PR 7, its API being `fake_github`."""
    files = tmp_path / "file_commands"
    files.mkdir()
    event = files / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "number": 7, "pull_request": {"number": 7}}))
    return ActionRunner(workspace, files, event, fake_github.url, {"RAG_URL": example_rag_url})
