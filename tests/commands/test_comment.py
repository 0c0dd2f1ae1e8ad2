"""`ragjudge comment --post`: the trusted workflow_run side posts the sticky comment from a report artifact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.report.writing import write_report
from tests.fakes.github_server import FakeGitHub
from tests.fakes.reports import case, gate_report

TOKEN = "ghs_workflow_run_token_777"
MARKER = "<!-- ragjudge:sticky:gate -->"


@pytest.fixture
def saved_report(tmp_path: Path) -> Path:
    path = tmp_path / "artifact" / "ragjudge-report.json"
    write_report(gate_report([case("ok", "pass"), case("bad-@everyone <img src=x>")]), path)
    return path


@pytest.fixture
def github_env(fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> FakeGitHub:
    for name in ("GITHUB_EVENT_PATH", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    return fake_github


def test_posts_then_updates_the_same_sticky_comment(
    saved_report: Path, github_env: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["comment", "--report", str(saved_report), "--post", "--repo", "o/r", "--pr", "12"]
    assert main(argv) == 0
    assert main(argv) == 0

    [comment] = github_env.comments[12]
    body = str(comment["body"])
    assert body.startswith(MARKER + "\n## ❌ ragjudge: FAIL")
    assert "@everyone" not in body and "<img" not in body
    out = capsys.readouterr().out
    assert "PR comment created: https://github.com/" in out and "PR comment updated" in out
    assert TOKEN not in out
    assert [r.method for r in github_env.requests if r.method != "GET"] == ["POST", "PATCH"]


def test_defaults_from_the_runner_environment(
    saved_report: Path, github_env: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"pull_requests": [{"number": 4}]}}), encoding="utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")

    assert main(["comment", "--report", str(saved_report), "--post", "--header", "search"]) == 0

    [comment] = github_env.comments[4]
    assert str(comment["body"]).startswith("<!-- ragjudge:sticky:search -->")


@pytest.mark.parametrize(
    ("args", "unset", "message"),
    [
        (["--repo", "o/r", "--pr", "1"], "GITHUB_TOKEN", "--post needs a token in GITHUB_TOKEN"),
        (["--pr", "1"], None, "--post needs --repo OWNER/REPO"),
        (["--repo", "not a repo", "--pr", "1"], None, "--post needs --repo OWNER/REPO (got 'not a repo')"),
        (["--repo", "o/r"], None, "--post needs --pr N"),
    ],
)
def test_missing_pieces_are_usage_errors(
    saved_report: Path,
    github_env: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    unset: str | None,
    message: str,
) -> None:
    if unset:
        monkeypatch.delenv(unset)

    assert main(["comment", "--report", str(saved_report), "--post", *args]) == 2
    assert message in capsys.readouterr().err
    assert github_env.requests == []


def test_a_read_only_token_is_an_error_here(
    saved_report: Path, github_env: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github_env.fail_next("POST", 403)

    code = main(["comment", "--report", str(saved_report), "--post", "--repo", "o/r", "--pr", "3"])

    assert code == 3
    err = capsys.readouterr().err
    assert "HTTP 403" in err and "Tip:" in err and TOKEN not in err


def test_without_post_it_only_renders(saved_report: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["comment", "--report", str(saved_report)]) == 0
    assert capsys.readouterr().out.startswith("## ❌ ragjudge: FAIL")
