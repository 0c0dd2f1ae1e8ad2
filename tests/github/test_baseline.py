"""`baseline-artifact`: main's newest report found through the REST API (pagination, expired artifacts,
other branches and failed runs skipped) and downloaded from storage without the token, against the
loopback GitHub fake serving real zip files."""

from __future__ import annotations

import io
import json
import time
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragjudge.github import artifacts
from ragjudge.github.artifacts import MAX_RUNS, BaselineError, Where, fetch_baseline
from ragjudge.github.rest import GitHubClient
from tests.fakes.github_server import FakeArtifactStorage, FakeGitHub
from tests.fakes.raw_server import DripServer
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
    path, message, _ = fetch_noting(gh, tmp_path, branch, name)
    return path, message


def fetch_noting(
    gh: FakeGitHub, tmp_path: Path, branch: str | None = "main", name: str = NAME
) -> tuple[Path | None, str, tuple[str, ...]]:
    client = GitHubClient(gh.url, TOKEN, sleep=lambda s: None)
    found = fetch_baseline(client, Where(REPO, "rag-gate.yml", branch, name), tmp_path / "b", "ragjudge-report.json")
    return found.path, f"{found.level}: {found.message}", found.skipped


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
    from ragjudge.report.provenance_block import ProvenanceBlock

    # A report that says its commit is used byte for byte.
    named = ProvenanceBlock(git_commit="abc1234def5678", git_ref="refs/heads/main")
    data = sample_report().model_copy(update={"provenance": named}).model_dump_json().encode()
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


def lying_zip(name: str, size: int, declared: int) -> bytes:
    """A zip of `size` zero bytes whose local and central headers both say `declared` bytes (a zip bomb's trick)."""
    data = bytearray(zipped({name: bytes(size)}))
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 22 : local + 26] = declared.to_bytes(4, "little")
    data[central + 24 : central + 28] = declared.to_bytes(4, "little")
    return bytes(data)


def test_a_zip_whose_headers_lie_about_the_size_is_cut_at_the_limit(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(artifacts, "MAX_REPORT_BYTES", 1024 * 1024)
    bomb = lying_zip("ragjudge-report.json", 40 * 1024 * 1024, declared=1000)
    assert len(bomb) < 100_000
    gh.add_workflow_run(artifacts=((NAME, bomb, False),))
    tracemalloc.start()
    try:
        path, message = fetch(gh, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert path is None
    assert message == (
        "warning: no baseline: artifact 'ragjudge-baseline': ragjudge-report.json inflates to over 1 MB "
        "(the archive says 1000 bytes)"
    )
    assert peak < 8 * 1024 * 1024  # the 40 MB are never inflated whole (zipfile's read inflates them at once)


def test_inflating_stops_one_chunk_past_the_limit() -> None:
    bomb = lying_zip("r.json", 10 * 1024 * 1024, declared=10)
    with zipfile.ZipFile(io.BytesIO(bomb)) as archive:
        [info] = archive.infolist()
    read: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, wbits: int) -> None:
            self._inner = real(wbits)

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            out = self._inner.decompress(data, max_length)
            read.append(len(out))
            return out

        def __getattr__(self, name: str) -> object:
            return getattr(self._inner, name)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zlib, "decompressobj", Counting)
        with pytest.raises(BaselineError) as caught:
            artifacts.inflate(bomb, info, limit=100_000)
    assert caught.value.message == "r.json inflates to over 100000 bytes (the archive says 10 bytes)"
    assert 100_000 < sum(read) <= 100_000 + artifacts.CHUNK  # read stops at the limit, plus one chunk at most


def test_an_honest_member_is_inflated_and_checked() -> None:
    data = zipped({"r.json": b'{"a": 1}' * 1000})
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        [info] = archive.infolist()
    assert artifacts.inflate(data, info, limit=10_000) == b'{"a": 1}' * 1000
    with pytest.raises(BaselineError) as caught:
        artifacts.inflate(data, info, limit=7_999)
    assert caught.value.message.startswith("r.json inflates to over 7999 bytes")


def test_an_archive_url_on_another_host_never_gets_the_token(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("r"), False),))
    assert gh.storage is not None
    [artifact] = next(iter(gh.artifacts.values()))
    artifact["archive_download_url"] = f"{gh.storage.url}/blob/{artifact['id']}?sig=s"
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message == (
        f"warning: no baseline: GET {gh.storage.url}/blob/{artifact['id']}: not on the API's origin {gh.origin}"
    )
    assert gh.storage.requests == []  # nothing at all went there with the token


def test_a_redirect_to_another_host_drops_the_token_and_the_download_works(gh: FakeGitHub, tmp_path: Path) -> None:
    assert gh.storage is not None
    gh.storage.blobs["x"] = b'{"default_branch": "main"}'
    gh.fail_next("GET", 307, headers={"Location": f"{gh.storage.url}/blob/x?sig=s"}, path_contains="/repos/o/r")
    client = GitHubClient(gh.url, TOKEN, sleep=lambda s: None)
    assert client.request("GET", "repos/o/r") == {"default_branch": "main"}
    [download] = gh.storage.requests
    assert "authorization" not in download.headers
    assert not any(TOKEN in value for value in download.headers.values())


def test_a_download_dripped_a_byte_a_second_ends_within_the_timeout(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("r"), False),))
    body = b"x" * 30
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: 30\r\n\r\n"
    with DripServer(body, every_s=1.0, prefix=head) as drip:
        gh.storage = drip  # type: ignore[assignment]  # the 302 now points at the dripping server
        client = GitHubClient(gh.url, TOKEN, sleep=lambda s: None, timeout_s=2.0)
        started = time.monotonic()
        found = fetch_baseline(client, Where(REPO, "rag-gate.yml", "main", NAME), tmp_path / "b", "r.json")
        elapsed = time.monotonic() - started
    assert found.path is None
    assert found.message == (
        "no baseline: artifact 'ragjudge-baseline': download from storage failed: not complete within 2 s"
    )
    assert elapsed < 4.0  # was 29 s: a byte a second never trips a per-read timeout
    assert drip.requests == 1


def test_a_report_nested_100000_deep_is_a_warning_not_a_recursion_error(gh: FakeGitHub, tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    gh.add_workflow_run(artifacts=((NAME, zipped({"ragjudge-report.json": deep}), False),))
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message.startswith("warning: no baseline: artifact 'ragjudge-baseline': ")
    assert message.endswith("baseline-report.json: not a ragjudge report: nested more than 64 deep")


def test_a_run_reply_not_shaped_like_githubs_is_a_warning(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.add_workflow_run(artifacts=((NAME, report_zip("r"), False),))
    del gh.workflow_runs[0]["id"]
    path, message = fetch(gh, tmp_path)
    assert path is None
    assert message == "warning: no baseline: unexpected API reply (KeyError: 'id')"


def _skipped(run: dict[str, object], why: str) -> str:
    return f"baseline: run {run['id']} ({run['html_url']}) passed over: {why}"


def test_a_forks_pull_request_on_a_branch_named_main_is_not_mains_baseline(gh: FakeGitHub, tmp_path: Path) -> None:
    # Issue 40 item 2: a fork's PR from its `main` ran the workflow of its own commit and uploaded a report saying
    # every case fails; the next PR's regressions then read `still_failing`.
    gh.add_workflow_run(artifacts=((NAME, report_zip("main's own"), False),), head_sha="1111111aaaa")
    fork = gh.add_workflow_run(
        event="pull_request",
        head_repository="mallory/octo-repo",
        artifacts=((NAME, report_zip("the fork's"), False),),
    )
    path, message, skipped = fetch_noting(gh, tmp_path)
    assert path is not None and warnings_of(path) == ["main's own"]
    assert "(main@1111111, " in message
    assert skipped == (
        _skipped(fork, "its event is 'pull_request', not one that runs on main (push, schedule, workflow_dispatch)"),
    )


@pytest.mark.parametrize(
    ("run", "why"),
    [
        ({"event": "pull_request_target"}, "its event is 'pull_request_target', not one that runs on main"),
        ({"event": "push", "head_repository": "mallory/octo-repo"}, "it ran on 'mallory/octo-repo', not on"),
        ({"event": "workflow_run"}, "its event is 'workflow_run'"),
    ],
)
def test_only_a_run_of_this_repositorys_own_main_counts(
    gh: FakeGitHub, tmp_path: Path, run: dict[str, str], why: str
) -> None:
    other = gh.add_workflow_run(artifacts=((NAME, report_zip("not main's"), False),), **run)
    path, message, skipped = fetch_noting(gh, tmp_path)
    assert path is None
    assert message.startswith("notice: no baseline: no artifact 'ragjudge-baseline' in the last 1 successful run(s)")
    [notice] = skipped
    assert notice.startswith(f"baseline: run {other['id']} ({other['html_url']}) passed over: {why}")


@pytest.mark.parametrize("event", ["push", "schedule", "workflow_dispatch"])
def test_the_events_that_run_on_main_count(gh: FakeGitHub, tmp_path: Path, event: str) -> None:
    gh.add_workflow_run(event=event, artifacts=((NAME, report_zip(event), False),))
    path, _, skipped = fetch_noting(gh, tmp_path)
    assert path is not None and warnings_of(path) == [event] and skipped == ()


def test_a_run_with_no_branch_or_no_head_repository_is_not_mains(gh: FakeGitHub, tmp_path: Path) -> None:
    no_branch = gh.add_workflow_run(artifacts=((NAME, report_zip("no branch"), False),))
    no_head = gh.add_workflow_run(artifacts=((NAME, report_zip("no head repository"), False),))
    gh.filter_runs = False  # a run without a branch is not listed under ?branch=main; a server may list it anyway
    with gh._lock:
        gh.workflow_runs[1]["head_branch"] = None
        del gh.workflow_runs[0]["head_repository"]
    path, _, skipped = fetch_noting(gh, tmp_path)
    assert path is None
    assert skipped == (
        _skipped(no_head, "it names no head repository"),
        _skipped(no_branch, "its branch is None, not 'main'"),
    )


def test_runs_passed_over_are_named_up_to_a_bound(gh: FakeGitHub, tmp_path: Path) -> None:
    for _ in range(artifacts.MAX_SKIP_NOTICES + 3):
        gh.add_workflow_run(event="pull_request", head_repository="mallory/octo-repo")
    _, _, skipped = fetch_noting(gh, tmp_path)
    assert len(skipped) == artifacts.MAX_SKIP_NOTICES + 1
    assert skipped[-1] == "baseline: 3 more run(s) passed over as not main's own"


def test_a_report_that_does_not_say_its_commit_is_named_by_its_run(gh: FakeGitHub, tmp_path: Path) -> None:
    from ragjudge.report.figures import label
    from ragjudge.report.model import Report
    from ragjudge.report.provenance_block import ProvenanceBlock

    old = sample_report().model_copy(update={"provenance": ProvenanceBlock()})  # written before provenance
    gh.add_workflow_run(artifacts=((NAME, zipped({"ragjudge-report.json": old.model_dump_json().encode()}), False),))
    run = gh.workflow_runs[-1]
    path, _ = fetch(gh, tmp_path)
    assert path is not None
    provenance = Report.model_validate_json(path.read_text(encoding="utf-8")).provenance
    assert (provenance.git_commit, provenance.git_ref) == (run["head_sha"], "refs/heads/main")
    from ragjudge.report.comparison_block import BaselineBlock

    named = label(BaselineBlock(commit=provenance.git_commit, ref=provenance.git_ref))
    assert named == f"main@{str(run['head_sha'])[:7]}"  # never "the baseline"
