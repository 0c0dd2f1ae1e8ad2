"""Finding, reading and naming the baseline report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.compare.baseline import load_baseline
from ragjudge.errors import CaseFileError, ExitCode
from ragjudge.report.comparison_block import BaselineBlock
from ragjudge.report.figures import age_words, label, short_ref
from ragjudge.report.writing import write_report
from tests.fakes.reports import C, report


def test_a_missing_baseline_is_none(tmp_path: Path) -> None:
    assert load_baseline(tmp_path / "nope.json") is None


def test_a_report_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "main.json"
    original = report([C("a"), C("b", "fail")])
    write_report(original, path)
    found = load_baseline(path)
    assert found is not None and found.path == path and found.report == original


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a JSON report"),
        ('{"kind": "canary"}', "this is a canary report"),
        ('{"verdict": "pass"}', "not a ragjudge report: suite: Field required"),
        (json.dumps({"schema_version": 2}), "not a ragjudge report: schema_version"),
    ],
)
def test_a_file_that_is_not_a_report_is_bad_input(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "main.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CaseFileError) as info:
        load_baseline(path)
    assert info.value.message.startswith(f"{path}: {message}")
    assert info.value.exit_code is ExitCode.BAD_INPUT


def test_a_folder_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError) as info:
        load_baseline(tmp_path)
    assert info.value.message == f"{tmp_path}: the baseline is a folder, not a report"


@pytest.mark.parametrize(
    ("ref", "short"),
    [
        ("refs/heads/main", "main"),
        ("refs/heads/release/2.0", "release/2.0"),
        ("refs/tags/v1", "v1"),
        ("refs/pull/7/merge", "pull/7/merge"),
        ("main", "main"),
        ("", None),
        (None, None),
    ],
)
def test_short_ref(ref: str | None, short: str | None) -> None:
    assert short_ref(ref) == short


def test_label_and_age() -> None:
    assert label(BaselineBlock(commit="abc1234def", ref="refs/heads/main")) == "main@abc1234"
    assert label(BaselineBlock(commit="abc1234def", ref=None)) == "abc1234"
    assert label(BaselineBlock(commit=None, ref="refs/heads/main")) == "main"
    assert label(BaselineBlock()) == "the baseline"
    assert [age_words(a) for a in (None, 0.0, 0.99, 1.0, 1.5, 3.2, 40)] == [
        "of unknown age",
        "less than a day old",
        "less than a day old",
        "1 day old",
        "1 day old",
        "3 days old",
        "40 days old",
    ]


def test_the_age_of_a_baseline_from_the_future_is_unknown_and_a_clock_skew_is_age_0() -> None:
    from datetime import UTC, datetime

    from ragjudge.compare.baseline import identity

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    future = identity(report([C("a")], created_at="2999-01-01T00:00:00+00:00"), None, now)
    assert future.age_days is None and future.created_at == "2999-01-01T00:00:00+00:00"
    skewed = identity(report([C("a")], created_at="2026-12-01T12:03:00+00:00"), None, now)
    assert skewed.age_days == 0.0  # 3 minutes ahead: two runners' clocks, not a forged file
    past = identity(report([C("a")], created_at="2026-11-29T12:00:00+00:00"), None, now)
    assert past.age_days == 2.0


def test_a_baseline_with_a_numeric_commit_or_a_string_fingerprint_is_bad_input(tmp_path: Path) -> None:
    for key, value, why in (
        ("git_commit", 5, "provenance.git_commit: expected a string or null, got a number"),
        ("judge_fingerprint", "x", "provenance.judge_fingerprint: expected an object or null, got a string"),
    ):
        data = json.loads(report([C("a")]).model_dump_json())
        data["provenance"][key] = value
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(CaseFileError) as caught:
            load_baseline(path)
        assert caught.value.message == f"{path}: not a ragjudge report: {why}"
        assert caught.value.exit_code == ExitCode.BAD_INPUT
