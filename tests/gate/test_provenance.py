"""Provenance: the commit and ref, hashes of the case set, rules and judge, and the endpoint without secrets."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from ragjudge.config.loader import parse_config
from ragjudge.gate.provenance import case_set_hash, clean_url, git_identity, judge_fingerprint, provenance, rules_hash
from tests.fakes.rag import make_case


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("https://user:s3cret@rag.example.com/ask?token=abc#frag", "https://rag.example.com/ask"),
        ("http://127.0.0.1:8080/v1/ask", "http://127.0.0.1:8080/v1/ask"),
        ("http://[::1]:9000/ask?k=v", "http://[::1]:9000/ask"),
        ("https://token@host/ask", "https://host/ask"),
        (None, None),
        ("", None),
    ],
)
def test_clean_url_drops_credentials_query_and_fragment(url: str | None, clean: str | None) -> None:
    assert clean_url(url) == clean


def test_git_identity_prefers_github_variables(tmp_path: Path) -> None:
    assert git_identity({"GITHUB_SHA": "abc", "GITHUB_REF": "refs/heads/main"}, tmp_path) == ("abc", "refs/heads/main")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_identity_from_a_checkout_and_outside_one(tmp_path: Path) -> None:
    assert git_identity({}, tmp_path) == (None, None)  # not a checkout: unknown, not an error
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q", "-b", "feature"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
    assert git_identity({}, repo) == (head.stdout.strip(), "feature")
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=repo, check=True)
    assert git_identity({}, repo) == (head.stdout.strip(), None)  # detached: no branch to name


def test_case_set_hash_is_order_free_and_sees_what_is_asked() -> None:
    a, b = make_case("a", "Question A?"), make_case("b", "Question B?")
    assert case_set_hash([a, b]) == case_set_hash([b, a])
    assert case_set_hash([a, b]) == case_set_hash([replace(a, origin="elsewhere.yaml:9"), b])
    assert case_set_hash([a, b]) != case_set_hash([replace(a, question="Question A, changed?"), b])
    assert case_set_hash([a, b]) != case_set_hash([a])


@pytest.mark.parametrize("n", [0, 1, 3])
def test_case_set_hash_fed_a_case_at_a_time_is_the_hash_of_the_whole_list(n: int) -> None:
    # Baselines keep the hash: hashing row by row must give exactly the hash of the rows as one JSON text.
    cases = [make_case(f"c{i}", f'运费 "{i}"?') for i in range(n)]
    # A case set without conversations hashes as it did before they existed (their fields are left out), and
    # whether a person approved a case yet (`review`) or where it was read from (`file`, `line`) is not what is
    # asked or checked.
    added = ("origin", "turns", "turn", "history", "conversation_id", "review", "file", "line")
    rows = [{k: v for k, v in vars(c).items() if k not in added} for c in cases]
    blob = json.dumps(rows, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    assert case_set_hash(cases) == hashlib.sha256(blob.encode("utf-8")).hexdigest()


def test_rules_hash_and_judge_fingerprint() -> None:
    base = parse_config({}, "t", Path("."))
    stricter = parse_config({"gate": {"suite": {"pass_rate": ">= 0.95"}}}, "t", Path("."))
    only_regression = parse_config({"gate": {"regression": {"newly_failing": "<= 1"}}}, "t", Path("."))
    assert rules_hash(base) != rules_hash(stricter)
    assert rules_hash(base) == rules_hash(only_regression)  # regression rules do not decide a case's status
    model = parse_config(
        {"judge": {"provider": "openai", "model": "m", "base_url": "https://k:secret@judge.example/v1?key=x"}},
        "t",
        Path("."),
    )
    fp = judge_fingerprint(model.judge)
    assert {k: fp[k] for k in ("provider", "model", "base_url_host", "temperature", "samples")} == {
        "provider": "openai",
        "model": "m",
        "base_url_host": "judge.example",
        "temperature": 0.0,
        "samples": 1,
    }
    assert "secret" not in str(fp)
    assert judge_fingerprint(base.judge)["model"] == "offline-lexical"


def test_provenance_keys() -> None:
    config = parse_config({}, "t", Path("."))
    prov = provenance(config, [make_case()], "https://u:p@rag/ask?t=1", {"GITHUB_SHA": "s", "GITHUB_REF": "r"})
    assert set(prov) == {
        "ragjudge_version",
        "created_at",
        "git_commit",
        "git_ref",
        "case_set_hash",
        "rules_hash",
        "judge_fingerprint",
        "endpoint",
        "config",
    }
    assert (prov["git_commit"], prov["git_ref"], prov["endpoint"]) == ("s", "r", "https://rag/ask")
    assert prov["config"] == "t"  # the file the config was read from, for the comment's probe line


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("user:s3cret@rag.example.com/ask?token=abc", "rag.example.com/ask"),  # no scheme: userinfo still goes
        ("https://rag.example.com:443/ask", "https://rag.example.com:443/ask"),  # an explicit port stays
        ("http://user:s3cret@[::1/ask?token=abc", "(unparsable URL)"),  # not a URL: never raises, never echoed
    ],
)
def test_clean_url_of_an_odd_url(url: str, clean: str) -> None:
    assert clean_url(url) == clean
