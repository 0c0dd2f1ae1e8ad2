"""The action's image, run for real the way the Actions runner runs a Docker container action.

Opt-in: `RAGJUDGE_IMAGE` names a built image (.ci/container.sh builds it and sets it, with
`RAGJUDGE_PODMAN_RUNTIME=runc`). The example RAG service and FakeGitHub listen on the host's
loopback; `--network=host` lets the container reach them. As on a runner, the workspace is
mounted at /github/workspace (the working directory), the file-command files under
/github/file_commands, the event at /github/workflow/event.json, and the inputs arrive as
INPUT_<NAME> with hyphens kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.github.runner import REPO, TOKEN, action_defaults, parse_outputs
from tests.github.workspace import FAILING_IDS, write_example_workspace

IMAGE = os.environ.get("RAGJUDGE_IMAGE", "")
RUNTIME = os.environ.get("RAGJUDGE_PODMAN_RUNTIME", "runc")
MARKER = "<!-- ragjudge:sticky:gate -->"
PR = 42

pytestmark = [
    pytest.mark.skipif(not IMAGE, reason="RAGJUDGE_IMAGE is not set (.ci/container.sh builds the image and sets it)"),
    pytest.mark.skipif(shutil.which("podman") is None, reason="podman is not installed"),
]


@dataclass
class ContainerRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, repo=REPO) as fake:
        yield fake


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """The runner's host-side folders: workspace, file_commands, workflow (the event), temp."""
    write_example_workspace(tmp_path / "workspace")
    for name in ("file_commands", "workflow", "temp", "home"):
        (tmp_path / name).mkdir()
    event = {"action": "synchronize", "number": PR, "pull_request": {"number": PR}}
    (tmp_path / "workflow" / "event.json").write_text(json.dumps(event), encoding="utf-8")
    return tmp_path


def run_action(host: Path, env: dict[str, str], timeout: int = 300) -> ContainerRun:
    """`podman run` as the runner does `docker run` for a container action; fresh output files per step."""
    output, summary = host / "file_commands" / "output", host / "file_commands" / "step_summary"
    for path in (output, summary):
        path.write_text("", encoding="utf-8")
    cmd = ["podman", "--runtime", RUNTIME, "run", "--rm", "--network=host", "--workdir", "/github/workspace"]
    mounts = {
        "workspace": "/github/workspace",
        "file_commands": "/github/file_commands",
        "workflow": "/github/workflow",
        "home": "/github/home",
        "temp": "/home/runner/work/_temp",
    }
    for name, target in mounts.items():
        cmd += ["-v", f"{host / name}:{target}"]
    for name, value in env.items():
        cmd += ["-e", f"{name}={value}"]
    done = subprocess.run([*cmd, IMAGE], capture_output=True, text=True, timeout=timeout)
    return ContainerRun(
        done.returncode,
        done.stdout,
        done.stderr,
        parse_outputs(output.read_text(encoding="utf-8")),
        summary.read_text(encoding="utf-8"),
    )


def runner_env(github: FakeGitHub, example_rag_url: str, **inputs: str) -> dict[str, str]:
    given = {name.replace("_", "-"): value for name, value in inputs.items()}
    env = {f"INPUT_{name.upper()}": value for name, value in {**action_defaults(), **given}.items()}
    return {
        **env,
        "HOME": "/github/home",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_OUTPUT": "/github/file_commands/output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary",
        "GITHUB_API_URL": github.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_RUN_ID": "777",
        "RUNNER_TEMP": "/home/runner/work/_temp",
        "RAG_URL": example_rag_url,
    }


def test_failing_gate_fails_the_step_then_a_passing_rerun_updates_the_one_comment(
    host: Path, github: FakeGitHub, example_rag_url: str
) -> None:
    someone = github.add_comment(PR, MARKER + "\nquoted by a human", author="reviewer")

    failed = run_action(host, runner_env(github, example_rag_url, config="fail.yml"))

    assert failed.code == 1, failed.stderr
    assert failed.outputs["verdict"] == "fail" and failed.outputs["passed"] == "false"
    assert failed.outputs["failed-cases"] == "5" and failed.outputs["errored-cases"] == "0"
    assert failed.outputs["failed-case-ids"].split("\n") == list(FAILING_IDS)
    assert failed.outputs["pass-rate"] == "0.8837" and failed.outputs["report"] == "ragjudge-report.json"
    report = json.loads((host / "workspace" / "ragjudge-report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "fail"
    ours = [c for c in github.comments[PR] if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and str(ours[0]["body"]).startswith(MARKER + "\n## ❌ ragjudge: FAIL")
    assert failed.outputs["comment-url"] == ours[0]["html_url"]
    assert all(case_id in failed.summary for case_id in FAILING_IDS)
    assert "::error title=ragjudge%3A suite rule pass_rate failed::" in failed.stdout
    assert f"::add-mask::{TOKEN}" in failed.stdout and failed.stdout.count(TOKEN) == 1

    passed = run_action(host, runner_env(github, example_rag_url, config="pass.yml"))

    assert passed.code == 0, passed.stderr
    assert passed.outputs["verdict"] == "pass" and passed.outputs["passed"] == "true"
    assert passed.outputs["comment-url"] == failed.outputs["comment-url"]
    ours = [c for c in github.comments[PR] if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and "ragjudge: PASS" in str(ours[0]["body"])
    assert github.find_comment(int(someone["id"]))["body"] == MARKER + "\nquoted by a human"  # type: ignore[index]
    assert len(github.comments[PR]) == 2


def test_read_only_token_warns_and_the_gate_still_decides(host: Path, github: FakeGitHub, example_rag_url: str) -> None:
    github.fail_next("POST", 403)

    run = run_action(host, runner_env(github, example_rag_url, config="fail.yml"))

    assert run.code == 1, run.stderr
    # The step's own warning, among the gate's warning annotations (it shares their ten slots).
    assert "::warning title=ragjudge::the PR comment was not posted: " in run.stdout and "HTTP 403" in run.stdout
    assert run.outputs["verdict"] == "fail" and run.outputs["comment-url"] == ""
    assert "ragjudge: FAIL" in run.summary
    assert github.comments.get(PR, []) == []


def test_invalid_input_exits_2(host: Path, github: FakeGitHub, example_rag_url: str) -> None:
    run = run_action(host, runner_env(github, example_rag_url, config="pass.yml", comment="sometimes"))

    assert run.code == 2
    assert "input `comment` must be one of always, on-failure, never, got 'sometimes'" in run.stderr
    assert github.requests == []


def test_outside_github_the_container_is_a_plain_gate(host: Path, example_rag_url: str) -> None:
    cmd = ["podman", "--runtime", RUNTIME, "run", "--rm", "--network=host", "-v", f"{host / 'workspace'}:/src"]
    cmd += ["-w", "/src", "-e", "INPUT_CONFIG=pass.yml", "-e", f"RAG_URL={example_rag_url}", IMAGE]

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    assert "ragjudge: PASS" in done.stdout and "::" not in done.stdout
    assert json.loads((host / "workspace" / "ragjudge-report.json").read_text(encoding="utf-8"))["verdict"] == "pass"
