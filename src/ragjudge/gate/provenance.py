"""Where a report comes from (`provenance`): enough to tell whether two reports can be compared.

The commit and ref come from GitHub Actions (`GITHUB_SHA`, `GITHUB_REF`) or, in a checkout,
from `git rev-parse`; the case set, the rules and the judge are hashed; the endpoint URL is kept
without credentials, query or fragment (they may hold a token).
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragjudge import __version__
from ragjudge.cases.case import Case
from ragjudge.cases.hashing import canonical, row
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.config.model import Config
from ragjudge.judge.interface import host_of
from ragjudge.judge.prompting import prompt_sources
from ragjudge.transport.urls import public_url


def _sha256(data: Any) -> str:
    return hashlib.sha256(canonical(data)).hexdigest()


def _git(*args: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
        )  # a fixed argv, no shell
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def git_identity(environ: Mapping[str, str], cwd: Path | None = None) -> tuple[str | None, str | None]:
    """(commit, ref): GitHub's variables when set, else the checkout's HEAD, else None."""
    commit = environ.get("GITHUB_SHA") or _git("rev-parse", "HEAD", cwd=cwd)
    ref = environ.get("GITHUB_REF") or _git("rev-parse", "--abbrev-ref", "HEAD", cwd=cwd)
    return commit, (None if ref == "HEAD" else ref)  # `HEAD`: a detached checkout has no branch


def case_set_hash(cases: Sequence[Case]) -> str:
    """The cases as they are asked and checked (not where they were read from), in id order."""
    # The hash of the rows' list as one JSON text, fed a row at a time: 10,000 cases never become one string.
    digest = hashlib.sha256(b"[")
    for i, case in enumerate(sorted(cases, key=lambda c: c.id)):
        digest.update((b"," if i else b"") + canonical(row(case)))
    digest.update(b"]")
    return digest.hexdigest()


def rules_hash(config: Config) -> str:
    """The rules that decide each case's status and the suite's absolute verdict."""
    return _sha256({"case": config.case_rules(), "suite": config.suite_rules()})


def judge_fingerprint(judge: JudgeConfig) -> dict[str, Any]:
    """What decides the judge's scores: two runs with different fingerprints judge differently."""
    if judge.provider == "offline":
        return {
            "provider": "offline",
            "model": "offline-lexical",
            "base_url_host": None,
            "prompt_hash": None,
            "temperature": None,
            "samples": 1,
            "min_overlap": judge.min_overlap,
        }
    return {
        "provider": judge.provider,
        "model": judge.model,
        "base_url_host": host_of(judge.base_url),
        "prompt_hash": hashlib.sha256(prompt_sources().encode("utf-8")).hexdigest(),
        "temperature": judge.temperature,
        "samples": judge.samples,
        "escalate_model": judge.escalate.model if judge.escalate else None,
    }


def clean_url(url: str | None) -> str | None:
    """The URL without user, password, query or fragment (`urls.public_url`); None when there is no URL."""
    return public_url(url) if url else None


def provenance(
    config: Config,
    cases: Sequence[Case],
    endpoint: str | None,
    environ: Mapping[str, str],
    case_hash: str | None = None,
) -> dict[str, Any]:
    """`case_hash`: `case_set_hash(cases)`, when it was worked out beforehand (the gate does it during the calls)."""
    commit, ref = git_identity(environ)
    return {
        "ragjudge_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": commit,
        "git_ref": ref,
        "case_set_hash": case_hash or case_set_hash(cases),
        "rules_hash": rules_hash(config),
        "judge_fingerprint": judge_fingerprint(config.judge),
        "endpoint": clean_url(endpoint),
        "config": config.source,
    }
