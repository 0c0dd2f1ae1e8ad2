"""The runner's environment: where GitHub Actions says things are, and which pull request this is.

Every field is optional, so the same code runs on a laptop, in GitLab CI or in
Jenkins, where no `GITHUB_*` variable exists.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragjudge.report.comment_view import run_url_of

DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class RunnerEnv:
    """What the Actions runner tells a step through its environment."""

    in_actions: bool
    """`GITHUB_ACTIONS=true`: workflow commands are understood by whoever reads stdout."""
    api_url: str
    """`GITHUB_API_URL` (GitHub Enterprise Server has its own), without a trailing slash."""
    repository: str | None
    """`GITHUB_REPOSITORY`, `owner/name`."""
    event_name: str | None
    """`GITHUB_EVENT_NAME`: pull_request, push, schedule, workflow_run, ..."""
    pr_number: int | None
    """The pull request the event is about, read from `GITHUB_EVENT_PATH`; None when there is none."""
    output_file: Path | None
    """`GITHUB_OUTPUT`: step outputs are appended here."""
    summary_file: Path | None
    """`GITHUB_STEP_SUMMARY`: the job summary (Markdown) is appended here."""
    run_url: str | None
    """Link to this workflow run, for the comment's footer."""
    temp_dir: Path | None
    """`RUNNER_TEMP`: scratch space that is not the workspace."""
    workflow_file: str | None = None
    """The running workflow's file name (`rag-gate.yml`), from `GITHUB_WORKFLOW_REF`."""
    default_branch: str | None = None
    """The repository's default branch, from the event payload when it carries one."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> RunnerEnv:
        def get(name: str) -> str | None:
            value = environ.get(name, "").strip()
            return value or None

        repository = get("GITHUB_REPOSITORY")
        event_path = get("GITHUB_EVENT_PATH")
        return cls(
            in_actions=get("GITHUB_ACTIONS") == "true",
            api_url=(get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            repository=repository,
            event_name=get("GITHUB_EVENT_NAME"),
            pr_number=pull_request_number(Path(event_path)) if event_path else None,
            output_file=_path(get("GITHUB_OUTPUT")),
            summary_file=_path(get("GITHUB_STEP_SUMMARY")),
            run_url=run_url_of(environ),
            temp_dir=_path(get("RUNNER_TEMP")),
            workflow_file=workflow_file(get("GITHUB_WORKFLOW_REF")),
            default_branch=default_branch(Path(event_path)) if event_path else None,
        )


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def workflow_file(ref: str | None) -> str | None:
    """`octo-org/octo-repo/.github/workflows/rag-gate.yml@refs/pull/7/merge` -> `rag-gate.yml`."""
    if not ref:
        return None
    path = ref.split("@", 1)[0]
    name = path.rsplit("/", 1)[-1]
    return name if "/.github/workflows/" in path and name else None


def default_branch(event_path: Path) -> str | None:
    """`repository.default_branch` of the webhook payload (push and pull_request events carry it)."""
    try:
        event = json.loads(event_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    value = _dig(event, "repository", "default_branch")
    return value if isinstance(value, str) and value else None


def pull_request_number(event_path: Path) -> int | None:
    """The PR number in the webhook payload the runner saved, or None (push, schedule, no file).

    Covers pull_request and pull_request_target (`pull_request.number`), issue_comment on a
    PR (`issue.number` with `issue.pull_request`), and workflow_run triggered by a PR from
    the same repository (`workflow_run.pull_requests[0]`; empty for forks, which is why the
    fork workflow passes the number in the artifact).
    """
    try:
        event = json.loads(event_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(event, dict):
        return None
    candidates: list[Any] = [_dig(event, "pull_request", "number")]
    issue = event.get("issue")
    if isinstance(issue, dict) and issue.get("pull_request"):
        candidates.append(issue.get("number"))
    run = event.get("workflow_run")
    if isinstance(run, dict) and isinstance(run.get("pull_requests"), list) and run["pull_requests"]:
        candidates.append(_dig(run["pull_requests"][0], "number"))
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _dig(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node
