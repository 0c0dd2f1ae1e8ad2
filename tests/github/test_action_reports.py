"""The action's `junit`, `html`, `shard` and `baseline-artifact` inputs, run as the runner runs it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragjudge.github import artifacts
from tests.fakes.github_server import FakeArtifactStorage, FakeGitHub
from tests.github.runner import REPO, TOKEN, ActionRunner
from tests.github.test_baseline import report_zip, zipped
from tests.github.workspace import FAILING_IDS

BASELINE = "ragjudge-baseline"


@pytest.fixture
def storage(fake_github: FakeGitHub) -> Iterator[FakeArtifactStorage]:
    with FakeArtifactStorage() as store:
        fake_github.storage = store
        yield store


def test_junit_and_html_inputs_write_both(runner: ActionRunner) -> None:
    run = runner.run(config="fail.yml", junit="out/ragjudge.xml", html="out/ragjudge.html", comment="never")
    assert run.code == 1
    xml = (runner.workspace / "out" / "ragjudge.xml").read_text(encoding="utf-8")
    assert xml.count("<testcase ") == 43 + 1  # the cases, and the one suite rule
    assert all(f'name="{case_id}"' in xml for case_id in FAILING_IDS)
    page = (runner.workspace / "out" / "ragjudge.html").read_text(encoding="utf-8")
    assert page.count('<tr class="case"') == 43


def test_shard_input_runs_one_shard_and_passes(runner: ActionRunner) -> None:
    run = runner.run(config="fail.yml", shard="2/3", comment="never")
    assert run.code == 0
    report = json.loads((runner.workspace / "ragjudge-report.json").read_text(encoding="utf-8"))
    assert report["shard"]["index"] == 2 and report["shard"]["count"] == 3
    assert len(report["cases"]) == 13


def test_a_bad_shard_input_exits_2(runner: ActionRunner) -> None:
    run = runner.run(config="fail.yml", shard="4/3", comment="never")
    assert run.code == 2
    assert "--shard '4/3': expected i/n with 1 <= i <= n" in run.stderr


def test_baseline_artifact_is_found_downloaded_and_used(
    runner: ActionRunner, fake_github: FakeGitHub, storage: FakeArtifactStorage
) -> None:
    runner.env["GITHUB_WORKFLOW_REF"] = f"{REPO}/.github/workflows/rag-gate.yml@refs/pull/7/merge"
    fake_github.add_workflow_run(artifacts=((BASELINE, report_zip("main"), False),), head_sha="feedbee1234")
    run = runner.run(config="fail.yml", baseline_artifact=BASELINE, comment="never")
    assert run.code in (0, 1)
    notices = run.commands("notice")
    assert any("baseline: artifact 'ragjudge-baseline' of run" in n and "main@feedbee" in n for n in notices)
    report = json.loads((runner.workspace / "ragjudge-report.json").read_text(encoding="utf-8"))
    assert report["comparison"] is not None
    assert [r.headers.get("authorization") for r in storage.requests] == [None]
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in fake_github.requests)


def test_a_forks_run_is_passed_over_with_a_notice_naming_it(
    runner: ActionRunner, fake_github: FakeGitHub, storage: FakeArtifactStorage
) -> None:
    runner.env["GITHUB_WORKFLOW_REF"] = f"{REPO}/.github/workflows/rag-gate.yml@refs/pull/7/merge"
    fork = fake_github.add_workflow_run(
        event="pull_request", head_repository="mallory/repo", artifacts=((BASELINE, report_zip("fork"), False),)
    )
    run = runner.run(config="fail.yml", baseline_artifact=BASELINE, comment="never")
    assert run.code == 1
    notices = run.commands("notice")
    assert any(
        f"baseline: run {fork['id']} (" in n and "passed over: its event is 'pull_request'" in n for n in notices
    )
    report = json.loads((runner.workspace / "ragjudge-report.json").read_text(encoding="utf-8"))
    assert report["comparison"] is None
    assert storage.requests == []


def test_no_baseline_artifact_yet_is_a_notice_and_the_gate_runs(
    runner: ActionRunner, fake_github: FakeGitHub, storage: FakeArtifactStorage
) -> None:
    runner.env["GITHUB_WORKFLOW_REF"] = f"{REPO}/.github/workflows/rag-gate.yml@refs/pull/7/merge"
    run = runner.run(config="fail.yml", baseline_artifact=BASELINE, comment="never")
    assert run.code == 1  # the absolute rules still gate
    assert any("no artifact 'ragjudge-baseline' in the last 0 successful run(s)" in n for n in run.commands("notice"))


def test_baseline_artifact_without_a_workflow_ref_is_a_warning(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    run = runner.run(config="fail.yml", baseline_artifact=BASELINE, comment="never")
    assert run.code == 1
    [warning] = [w for w in run.commands("warning") if "baseline" in w]
    assert "baseline-artifact 'ragjudge-baseline' skipped: no GITHUB_WORKFLOW_REF" in warning
    assert fake_github.requests == []


def test_a_skipped_baseline_is_one_of_the_gates_ten_warnings_and_counted_when_they_run_out(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    for i in (1, 2, 3):
        assert runner.run(config="fail.yml", shard=f"{i}/3", report=f"shards/s{i}.json", comment="never").code == 0
    # Twelve kinds of warning in a shard's report, more than the step's ten warning slots hold.
    shard = runner.workspace / "shards" / "s1.json"
    data = json.loads(shard.read_text(encoding="utf-8"))
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
    data["warnings"] = [f"{word} went wrong" for word in words]
    shard.write_text(json.dumps(data), encoding="utf-8")
    run = runner.run(mode="merge", config="fail.yml", reports="shards/s*.json", baseline_artifact=BASELINE)
    assert run.code == 1
    warnings = run.commands("warning")
    # The step's own warning (the baseline it could not look for) goes first, after the run's log; the last slot
    # says how many kinds were left out (12 + 1 kinds, 9 shown).
    assert len(warnings) == 10
    assert warnings[0].startswith("::warning title=ragjudge::baseline-artifact 'ragjudge-baseline' skipped: no ")
    assert warnings[1:3] == ["::warning title=ragjudge::alpha went wrong", "::warning title=ragjudge::beta went wrong"]
    assert warnings[-1] == "::warning title=ragjudge%3A more warnings::4 more kinds of warning: see the log"
    assert run.stdout.index(warnings[0]) > run.stdout.index("::endgroup::")


def test_baseline_artifact_in_canary_mode_exits_2(runner: ActionRunner) -> None:
    run = runner.run(mode="canary", baseline_artifact=BASELINE)
    assert run.code == 2
    assert "input `baseline-artifact` does not apply to mode canary" in run.stderr


def test_the_workflow_file_is_read_from_the_ref() -> None:
    from ragjudge.github.env import workflow_file

    assert workflow_file("o/r/.github/workflows/rag-gate.yml@refs/heads/main") == "rag-gate.yml"
    assert workflow_file("o/r/.github/workflows/sub/x.yaml@v1") == "x.yaml"
    assert workflow_file("nonsense") is None and workflow_file(None) is None


def test_the_default_branch_is_read_from_the_event(tmp_path: Path) -> None:
    from ragjudge.github.env import default_branch

    event = tmp_path / "e.json"
    event.write_text(json.dumps({"repository": {"default_branch": "trunk"}}), encoding="utf-8")
    assert default_branch(event) == "trunk"
    event.write_text("[]", encoding="utf-8")
    assert default_branch(event) is None


def test_three_shard_steps_then_a_merge_step_gates_and_comments_once(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    for i in (1, 2, 3):
        run = runner.run(config="fail.yml", shard=f"{i}/3", report=f"shards/s{i}.json", comment="never")
        assert run.code == 0
    assert fake_github.requests == []
    merged = runner.run(
        mode="merge", config="fail.yml", reports="shards/s*.json", report="merged.json", junit="merged.xml"
    )
    assert merged.code == 1  # pass_rate >= 1.0 fails over the whole set
    out = merged.outputs
    assert (out["verdict"], out["failed-cases"], out["failed-case-ids"]) == ("fail", "5", "\n".join(FAILING_IDS))
    assert out["pass-rate"] == "0.8837"
    comments = [c for c in fake_github.comments.get(7, []) if str(c["body"]).startswith("<!-- ragjudge:sticky:gate")]
    assert len(comments) == 1 and all(case_id in str(comments[0]["body"]) for case_id in FAILING_IDS)
    assert "ragjudge: FAIL" in merged.summary
    assert (runner.workspace / "merged.xml").read_text(encoding="utf-8").count("<testcase ") == 44


def test_merge_mode_without_reports_or_with_a_glob_matching_nothing_exits_2(runner: ActionRunner) -> None:
    run = runner.run(mode="merge", comment="never")
    assert run.code == 2 and "mode merge needs input `reports`: the shards' report files" in run.stderr
    run = runner.run(mode="merge", reports="nowhere/*.json", comment="never")
    assert run.code == 2 and "input `reports`: 'nowhere/*.json' matches no file" in run.stderr
    run = runner.run(config="fail.yml", reports="a.json", comment="never")
    assert run.code == 2 and "input `reports` does not apply to mode gate" in run.stderr


def test_a_baseline_nested_100000_deep_is_a_warning_and_the_gate_runs(
    runner: ActionRunner, fake_github: FakeGitHub, storage: FakeArtifactStorage
) -> None:
    runner.env["GITHUB_WORKFLOW_REF"] = f"{REPO}/.github/workflows/rag-gate.yml@refs/pull/7/merge"
    deep = b"[" * 100_000 + b"]" * 100_000
    fake_github.add_workflow_run(artifacts=((BASELINE, zipped({"ragjudge-report.json": deep}), False),))
    run = runner.run(config="fail.yml", baseline_artifact=BASELINE, comment="never")
    assert run.code == 1  # the gate ran, on its absolute rules
    [warning] = [w for w in run.commands("warning") if "baseline" in w]
    assert warning.endswith("baseline-report.json: not a ragjudge report: nested more than 64 deep")
    report = json.loads((runner.workspace / "ragjudge-report.json").read_text(encoding="utf-8"))
    assert report["comparison"] is None


def test_any_failure_reading_a_baseline_is_a_warning_and_the_gate_runs(
    runner: ActionRunner, fake_github: FakeGitHub, storage: FakeArtifactStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner.env["GITHUB_WORKFLOW_REF"] = f"{REPO}/.github/workflows/rag-gate.yml@refs/pull/7/merge"
    fake_github.add_workflow_run(artifacts=((BASELINE, report_zip("main"), False),))

    def broken(*args: object) -> object:
        raise MemoryError

    monkeypatch.setattr(artifacts, "fetch_baseline", broken)
    run = runner.run(config="fail.yml", baseline_artifact=BASELINE, comment="never")
    assert run.code == 1
    [warning] = [w for w in run.commands("warning") if "baseline" in w]
    assert "no baseline: artifact 'ragjudge-baseline' could not be read (MemoryError); the gate applies its " in warning
