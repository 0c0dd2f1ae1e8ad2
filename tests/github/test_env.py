"""The runner environment and the PR number from the event payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.github.env import DEFAULT_API_URL, RunnerEnv, pull_request_number


def event(tmp_path: Path, payload: object) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("payload", "number"),
    [
        ({"number": 12, "pull_request": {"number": 12}}, 12),  # pull_request, pull_request_target
        ({"issue": {"number": 13, "pull_request": {"url": "u"}}}, 13),  # issue_comment on a PR
        ({"issue": {"number": 14}}, None),  # issue_comment on an issue
        ({"workflow_run": {"pull_requests": [{"number": 15}]}}, 15),  # workflow_run, same repository
        ({"workflow_run": {"pull_requests": []}}, None),  # workflow_run from a fork
        ({"ref": "refs/heads/main"}, None),  # push
        ({"schedule": "*/5 * * * *"}, None),
        ({"inputs": {}}, None),  # workflow_dispatch
        ({"pull_request": {"number": True}}, None),
        ([], None),
    ],
)
def test_pull_request_number(tmp_path: Path, payload: object, number: int | None) -> None:
    assert pull_request_number(event(tmp_path, payload)) == number


def test_unreadable_event_is_no_pr(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert pull_request_number(tmp_path / "bad.json") is None
    assert pull_request_number(tmp_path / "missing.json") is None


def test_from_environ_on_a_runner(tmp_path: Path) -> None:
    env = RunnerEnv.from_environ(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event(tmp_path, {"pull_request": {"number": 3}})),
            "GITHUB_OUTPUT": "/github/file_commands/out",
            "GITHUB_STEP_SUMMARY": "/github/file_commands/sum",
            "GITHUB_SERVER_URL": "https://ghe.example.com",
            "GITHUB_RUN_ID": "99",
            "RUNNER_TEMP": "/tmp/runner",
        }
    )
    assert env.in_actions and env.api_url == "https://ghe.example.com/api/v3"
    assert (env.repository, env.event_name, env.pr_number) == ("o/r", "pull_request", 3)
    assert env.output_file == Path("/github/file_commands/out")
    assert env.summary_file == Path("/github/file_commands/sum")
    assert env.run_url == "https://ghe.example.com/o/r/actions/runs/99" and env.temp_dir == Path("/tmp/runner")


def test_from_environ_outside_github() -> None:
    env = RunnerEnv.from_environ({})
    assert not env.in_actions and env.api_url == DEFAULT_API_URL
    assert env.repository is env.pr_number is env.output_file is env.summary_file is env.run_url is None
