"""`baseline-artifact`: main's newest report found through the REST API (pagination, expired artifacts,
other branches and failed runs skipped) and downloaded from storage without the token, against the
loopback GitHub fake serving real zip files."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragjudge.github.artifacts import MAX_RUNS, Where, fetch_baseline
from ragjudge.github.rest import GitHubClient
from tests.fakes.github_server import FakeArtifactStorage, FakeGitHub
from tests.report.samples import sample_report

TOKEN = "ghs_BaselineToken0123456789abcdef"
REPO = "octo-org/octo-repo"
NAME = "ragjudge-baseline"


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def report_zip(marker: str) -> bytes:
    report = sample_report().model_copy(update={"warnings": [marker]})
    return zipped({"ragjudge-report.json": report.model_dump_json().encode(), "ragjudge-pr-number": b"7\n"})


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeArtifactStorage() as storage, FakeGitHub(token=TOKEN) as fake:
        fake.storage = storage
        yield fake


def fetch(gh: FakeGitHub, tmp_path: Path, branch: str | None = "main", name: str = NAME) -> tuple[Path | None, str]:
    client = GitHubClient(gh.url, TOKEN, sleep=lambda s: None)
    found = fetch_baseline(client, Where(REPO, "rag-gate.yml", branch, name), tmp_path / "b", "ragjudge-report.json")
    return found.path, f"{found.level}: {found.message}"


def warnings_of(path: Path) -> list[str]:
    return json.loads(path.read_text(encoding="utf-8"))["warnings"]  # type: ignore[no-any-return]


def test_the_newest_live_artifact_of_a_successful_main_run(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("oldest"), False),), head_sha="1111111aaaa")
    gh.add_workflow_run(artifacts=((NAME, report_zip("newest live"), False),), head_sha="2222222bbbb")
    gh.add_workflow_run(artifacts=((NAME, report_zip("expired"), True),), head_sha="3333333cccc")
    gh.add_workflow_run(conclusion="failure", artifacts=((NAME, report_zip("failed run"), False),))
    gh.add_workflow_run(branch="feature", artifacts=((NAME, report_zip("other branch"), False),))
    gh.add_workflow_run(workflow="other.yml", artifacts=((NAME, report_zip("other workflow"), False),))
    gh.add_workflow_run(artifacts=(("ragjudge-report", report_zip("other name"), False),))
    path, message = fetch(gh, tmp_path)
    assert path == tmp_path / "b" / "baseline-report.json"
    assert warnings_of(path) == ["newest live"]
    run_id = next(r["id"] for r in gh.workflow_runs if r["head_sha"] == "2222222bbbb")
    assert message.startswith(f"notice: baseline: artifact 'ragjudge-baseline' of run {run_id} (main@2222222, ")


def test_the_token_goes_to_the_api_and_never_to_storage(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("r"), False),))
    path, _ = fetch(gh, tmp_path)
    assert path is not None
    assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in gh.requests)
    assert gh.storage is not None
    [download] = gh.storage.requests
    assert download.path.startswith("/blob/") and "sig=" in download.path
    assert "authorization" not in download.headers
    assert not any(TOKEN in value for value in download.headers.values())


def test_runs_are_paginated(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("on page two"), False),))
    for _ in range(120):  # newer runs without the artifact: the one with it is on the second page of 100
        gh.add_workflow_run(artifacts=(("something-else", zipped({"x.txt": b"x"}), False),))
    path, _ = fetch(gh, tmp_path)
    assert path is not None and warnings_of(path) == ["on page two"]
    pages = [r.path for r in gh.requests if "/actions/workflows/rag-gate.yml/runs" in r.path]
    assert len(pages) == 2 and "page=2" in pages[1] and "per_page=100" in pages[0]
    assert "branch=main" in pages[0] and "status=success" in pages[0]


def test_at_most_max_runs_are_searched(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("too old"), False),))
    for _ in range(MAX_RUNS):
        gh.add_workflow_run()
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message == (
        "notice: no baseline: no artifact 'ragjudge-baseline' in the last 200 successful run(s) of rag-gate.yml on "
        "main; the gate applies its absolute rules only (a push to the default branch that uploads the report "
        "makes one)"
    )


def test_only_expired_artifacts_is_a_notice_saying_so(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("old"), True),))
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message.startswith("notice: no baseline: no artifact 'ragjudge-baseline' (1 expired) in the last 1 ")


def test_the_default_branch_comes_from_the_api_when_the_event_lacks_it(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.default_branch = "trunk"
    gh.add_workflow_run(branch="trunk", artifacts=((NAME, report_zip("trunk"), False),))
    gh.add_workflow_run(branch="main", artifacts=((NAME, report_zip("main"), False),))
    path, _ = fetch(gh, tmp_path, branch=None)
    assert path is not None and warnings_of(path) == ["trunk"]
    assert any(r.path == f"/repos/{REPO}" for r in gh.requests)


def test_a_token_without_actions_read_is_a_warning(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.fail_next("GET", 403, path_contains="/actions/workflows/")
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message == (
        "warning: no baseline: GET /repos/octo-org/octo-repo/actions/workflows/rag-gate.yml/runs: HTTP 403 "
        "(Resource not accessible by integration) (the workflow needs `permissions: actions: read` for "
        "baseline-artifact)"
    )


def test_a_5xx_is_retried(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("r"), False),))
    gh.fail_next("GET", 502, path_contains="/zip")
    path, _ = fetch(gh, tmp_path)
    assert path is not None


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"a.json": b"{}", "b.json": b"{}"},
            "expected one report (ragjudge-report.json, or a single .json file) in the archive, found: a.json, b.json",
        ),
        (
            {"notes.txt": b"hi"},
            "expected one report (ragjudge-report.json, or a single .json file) in the archive, found: notes.txt",
        ),
    ],
)
def test_an_archive_without_one_report_is_a_warning(
    gh: FakeGitHub, tmp_path: Path, files: dict[str, bytes], expected: str
) -> None:
    gh.add_workflow_run(artifacts=((NAME, zipped(files), False),))
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message == f"warning: no baseline: artifact 'ragjudge-baseline': {expected}"


def test_a_single_json_under_another_name_is_used(gh: FakeGitHub, tmp_path: Path) -> None:
    data = sample_report().model_dump_json().encode()
    gh.add_workflow_run(artifacts=((NAME, zipped({"out/main-report.json": data}), False),))
    path, _ = fetch(gh, tmp_path)
    assert path is not None and path.read_bytes() == data


def test_not_a_report_or_not_a_zip_is_a_warning(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, zipped({"ragjudge-report.json": b'{"kind": "canary"}'}), False),))
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message.startswith("warning: no baseline: artifact 'ragjudge-baseline': ")
    assert message.endswith("baseline-report.json: this is a canary report; use `ragjudge canary` to render it")
    gh.add_workflow_run(artifacts=((NAME, b"not a zip at all", False),))
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message == "warning: no baseline: artifact 'ragjudge-baseline': the download is not a zip archive"
