"""The action's `baseline-artifact: NAME`: main's report, found and downloaded through the REST API.

The newest artifact called NAME, not expired, from a successful run of the same workflow file on
the default branch. Workflow runs come newest first (paginated; at most `MAX_RUNS` are looked at);
each run's artifacts are listed by name (paginated too). The archive endpoint answers 302 to blob
storage on another host: that URL is fetched with a bare session, so the token never leaves the API
host (an `archive_download_url` on another host is refused, never called with the token), and under
one deadline for the whole download (a server that drips a byte a second cannot hold the step). The zip
is read in memory with size limits (nothing is extracted by path): the report is inflated a chunk at a
time and counted as it comes, whatever sizes the archive's headers declare. The report in it must
load as a ragjudge report (`report/reading.py`: bounded in size and depth, its fields checked).

Nothing found, or any failure on the way, never fails the step: the gate then runs without a
baseline (the absolute rules still apply), and the reason is a notice (nothing to compare with yet)
or a warning (something is wrong: a token without `actions: read`, a broken artifact).
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import requests

from ragjudge.errors import CaseFileError
from ragjudge.github.rest import GitHubClient, GitHubError
from ragjudge.report.reading import MAX_REPORT_BYTES, load_report
from ragjudge.transport import deadline
from ragjudge.transport.sessions import watched_session

MAX_RUNS = 200
"""Successful runs on the default branch looked at, newest first, before giving up."""
MAIN_EVENTS = frozenset({"push", "schedule", "workflow_dispatch"})
"""The events that run a workflow on main itself. A pull request's run (`pull_request`, `pull_request_target`)
uses the workflow file and the artifacts of its own commit, so a fork whose branch is named `main` could set
the baseline of every later pull request."""
MAX_SKIP_NOTICES = 10
"""Runs named one by one when passed over; the rest are counted."""
MAX_ZIP_BYTES = 100 * 1024 * 1024
BASELINE_FILE = "baseline-report.json"
CHUNK = 1 << 16


@dataclass(frozen=True)
class BaselineFetch:
    """What the search found: the report's local path, or None and why."""

    path: Path | None
    message: str
    level: Literal["notice", "warning"] = "notice"
    skipped: tuple[str, ...] = ()
    """A notice for each run passed over as not main's own (a fork's pull request on a branch named main, ...)."""


@dataclass(frozen=True)
class Where:
    """Where to look."""

    repository: str
    workflow: str
    """The workflow's file name, e.g. `rag-gate.yml`."""
    branch: str | None
    """The default branch; None: ask the API."""
    name: str
    """The artifact's name."""


def fetch_baseline(client: GitHubClient, where: Where, dest_dir: Path, report_name: str) -> BaselineFetch:
    """Find, download and extract the baseline report into `dest_dir`; never raises for what GitHub says."""
    try:
        branch = where.branch or default_branch(client, where.repository)
        skipped: list[str] = []
        found = find_artifact(client, where, branch, skipped)
        notices = _notices(skipped)
        if isinstance(found, str):
            return BaselineFetch(None, found, skipped=notices)
        artifact, run = found
        path = download_report(client, artifact, dest_dir, report_name)
        report = load_report(path)  # a file that is not a ragjudge report is no baseline
        if report.provenance.git_commit is None and run.get("head_sha"):
            named_by_run(path, str(run["head_sha"]), branch)
    except GitHubError as exc:
        tip = ""
        if exc.status in (401, 403, 404):
            tip = " (the workflow needs `permissions: actions: read` for baseline-artifact)"
        return BaselineFetch(None, f"no baseline: {exc.message}{tip}", "warning")
    except (CaseFileError, BaselineError) as exc:
        return BaselineFetch(None, f"no baseline: artifact {where.name!r}: {exc.message}", "warning")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a reply not shaped like GitHub's
        return BaselineFetch(
            None, f"no baseline: unexpected API reply ({type(exc).__name__}: {str(exc)[:200]})", "warning"
        )
    sha = str(run.get("head_sha", ""))[:7]
    return BaselineFetch(
        path,
        f"baseline: artifact {where.name!r} of run {run.get('id')} ({branch}@{sha}, {run.get('created_at', '?')})",
        skipped=notices,
    )


def not_mains_own(run: dict[str, Any], repository: str, branch: str) -> str | None:
    """Why `run` is not a run of this repository's own `branch` (None: it is): only such a run's artifacts
    are main's; a fork's pull request whose branch is named `main` carries the same `head_branch`."""
    event = run.get("event")
    if event not in MAIN_EVENTS:
        return f"its event is {event!r}, not one that runs on {branch} ({', '.join(sorted(MAIN_EVENTS))})"
    head = run.get("head_repository")
    name = head.get("full_name") if isinstance(head, dict) else None
    if not isinstance(name, str) or name.casefold() != repository.casefold():
        return f"it ran on {name!r}, not on {repository}" if name else "it names no head repository"
    if run.get("head_branch") != branch:
        return f"its branch is {run.get('head_branch')!r}, not {branch!r}"
    return None


def _notices(skipped: list[str]) -> tuple[str, ...]:
    shown = skipped[:MAX_SKIP_NOTICES]
    more = len(skipped) - len(shown)
    return (*shown, *([f"baseline: {more} more run(s) passed over as not main's own"] if more else []))


def named_by_run(path: Path, sha: str, branch: str) -> None:
    """A report that does not say its commit (one written before provenance was recorded) gets its run's: every
    output then names the baseline `main@abc1234`, as the step's notice does, never "the baseline"."""
    data = json.loads(path.read_text(encoding="utf-8"))
    provenance = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
    data["provenance"] = {
        **provenance,
        "git_commit": sha,
        "git_ref": provenance.get("git_ref") or f"refs/heads/{branch}",
    }
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


class BaselineError(CaseFileError):
    """The artifact was found but holds no usable report."""


def default_branch(client: GitHubClient, repository: str) -> str:
    data = client.request("GET", f"repos/{repository}")
    branch = data.get("default_branch") if isinstance(data, dict) else None
    if not isinstance(branch, str) or not branch:
        raise GitHubError(f"GET repos/{repository}: no default_branch in the reply")
    return branch


def find_artifact(
    client: GitHubClient, where: Where, branch: str, skipped: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """The newest live artifact of a run of main's own and that run; or, when there is none, a sentence saying
    what was searched. Each run passed over as not main's own is added to `skipped`, named with why."""
    runs = client.paginate(
        f"repos/{where.repository}/actions/workflows/{where.workflow}/runs",
        {"branch": branch, "status": "success"},
        key="workflow_runs",
    )
    looked = expired = 0
    for run in runs:
        if looked >= MAX_RUNS:
            break
        looked += 1
        if run.get("conclusion") not in (None, "success"):
            continue  # the query filters these; a server that ignores the filter is checked here
        why = not_mains_own(run, where.repository, branch)
        if why is not None:
            if skipped is not None:
                skipped.append(f"baseline: run {run.get('id')} ({run.get('html_url', 'no URL')}) passed over: {why}")
            continue
        artifacts = client.paginate(
            f"repos/{where.repository}/actions/runs/{run['id']}/artifacts", {"name": where.name}, key="artifacts"
        )
        for artifact in artifacts:
            if artifact.get("name") != where.name:
                continue
            if artifact.get("expired"):
                expired += 1
                continue
            return artifact, run
    more = f" ({expired} expired)" if expired else ""
    return (
        f"no baseline: no artifact {where.name!r}{more} in the last {looked} successful run(s) of "
        f"{where.workflow} on {branch}; the gate applies its absolute rules only "
        "(a push to the default branch that uploads the report makes one)"
    )


def download_report(client: GitHubClient, artifact: dict[str, Any], dest_dir: Path, report_name: str) -> Path:
    storage_url = client.redirect(str(artifact.get("archive_download_url", "")))
    data = _download(storage_url, client.timeout_s)
    text = _report_in(data, report_name)
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / BASELINE_FILE
    path.write_bytes(text)
    return path


def _download(url: str, seconds: float) -> bytes:
    """The archive from storage: a bare session (no Authorization, no session headers; the storage URL carries
    its own signature), at most `MAX_ZIP_BYTES`, all within `seconds`."""
    session = watched_session(trust_env=True)
    # Not cut short by a stop: like the API calls around it, only time ends it.
    with deadline.limit(seconds, stoppable=False) as limit:
        try:
            with session.get(url, timeout=seconds, stream=True) as response:
                if response.status_code != 200:
                    raise BaselineError(f"download from storage failed: HTTP {response.status_code}")
                data = _read_capped(response)
        except requests.RequestException as exc:
            if limit.fired is not None:
                raise BaselineError(f"download from storage failed: not complete within {seconds:g} s") from None
            raise BaselineError(f"download from storage failed: {type(exc).__name__}") from None
        finally:
            session.close()
        if limit.fired is not None:  # a body cut short can look whole
            raise BaselineError(f"download from storage failed: not complete within {seconds:g} s")
    return data


def _read_capped(response: requests.Response) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_content(CHUNK):
        size += len(chunk)
        if size > MAX_ZIP_BYTES:
            raise BaselineError(f"the archive is over {MAX_ZIP_BYTES // (1024 * 1024)} MB")
        chunks.append(chunk)
    return b"".join(chunks)


def _report_in(data: bytes, report_name: str) -> bytes:
    """The report inside the zip: the member named like the `report` input, else its only JSON file."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise BaselineError("the download is not a zip archive") from None
    with archive:
        files = [i for i in archive.infolist() if not i.is_dir()]
        wanted = PurePosixPath(report_name).name
        named = [i for i in files if PurePosixPath(i.filename).name == wanted]
        candidates = named or [i for i in files if i.filename.lower().endswith(".json")]
        if len(candidates) != 1:
            listed = ", ".join(i.filename for i in files[:10]) or "nothing"
            raise BaselineError(
                f"expected one report ({wanted}, or a single .json file) in the archive, found: {listed}"
            )
        info = candidates[0]
        if info.file_size > MAX_REPORT_BYTES:
            raise BaselineError(f"{info.filename} is over {MAX_REPORT_BYTES // (1024 * 1024)} MB")
        return inflate(data, info, MAX_REPORT_BYTES)


def inflate(data: bytes, info: zipfile.ZipInfo, limit: int) -> bytes:
    """The member's bytes, inflated `CHUNK` at a time and counted: past `limit` bytes actually produced it stops,
    whatever the headers declare (zipfile's own read inflates a member in one call, a bomb whole)."""
    name = info.filename
    if info.flag_bits & 0x1:
        raise BaselineError(f"{name}: encrypted in the archive")
    start = _data_start(data, info)
    out = bytearray()
    if info.compress_type == zipfile.ZIP_STORED:
        out += data[start : start + min(info.compress_size, limit + 1)]
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        pos = start
        try:
            while not inflater.eof and len(out) <= limit:
                piece = inflater.unconsumed_tail or data[pos : pos + CHUNK]
                if not inflater.unconsumed_tail:
                    if not piece:
                        raise BaselineError(f"{name}: cannot read it from the archive (the data ends early)")
                    pos += len(piece)
                out += inflater.decompress(piece, CHUNK)
        except zlib.error as exc:
            raise BaselineError(f"{name}: cannot read it from the archive ({exc})") from None
    else:
        raise BaselineError(f"{name}: compression method {info.compress_type} (only deflate and stored are read)")
    if len(out) > limit:
        raise BaselineError(f"{name} inflates to over {_size(limit)} (the archive says {info.file_size} bytes)")
    if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
        raise BaselineError(f"{name}: cannot read it from the archive (its size or checksum is not the header's)")
    return bytes(out)


def _data_start(data: bytes, info: zipfile.ZipInfo) -> int:
    """Where the member's data begins: after its local header, whose name and extra field have their own lengths."""
    offset = info.header_offset
    header = data[offset : offset + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise BaselineError(f"{info.filename}: cannot read it from the archive (no local header)")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return int(offset + 30 + name_length + extra_length)


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit} bytes"
