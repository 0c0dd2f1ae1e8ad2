"""entrypoint.py as a real process: it moves to $GITHUB_WORKSPACE and exits with the action's code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENTRYPOINT = Path(__file__).resolve().parents[2] / "entrypoint.py"


def run(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    return subprocess.run(
        [sys.executable, str(ENTRYPOINT)], env={**base, **env}, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_runs_in_the_workspace(workspace: Path, example_rag_url: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    done = run({"GITHUB_WORKSPACE": str(workspace), "INPUT_CONFIG": "fail.yml", "RAG_URL": example_rag_url}, elsewhere)

    assert done.returncode == 1, done.stderr
    assert (workspace / "ragjudge-report.json").is_file() and not (elsewhere / "ragjudge-report.json").exists()
    assert "ragjudge: FAIL" in done.stdout


def test_works_without_any_github_variable(workspace: Path, example_rag_url: str) -> None:
    done = run({"INPUT_CONFIG": "pass.yml", "RAG_URL": example_rag_url}, workspace)

    assert done.returncode == 0, done.stderr
    assert "::" not in done.stdout
