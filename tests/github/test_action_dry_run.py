"""The action's `dry-run` input: `ragjudge run --dry-run` as the runner runs it (issue 42)."""

from __future__ import annotations

from tests.fakes.github_server import FakeGitHub
from tests.github.runner import ActionRunner


def test_dry_run_input_prints_the_plan_into_the_summary_and_asks_nothing(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    run = runner.run(config="fail.yml", dry_run="true")
    assert run.code == 0
    assert "ragjudge run --dry-run: nothing was asked; what the run would do:" in run.stdout
    assert run.summary.startswith("## ragjudge gate: dry run (nothing was asked)\n\n```text\n")
    assert "  cases: 43\n" in run.summary and "  endpoint calls: 43\n" in run.summary
    assert "- No PR comment: a dry run asks nothing and posts nothing." in run.summary
    assert "JSON report" not in run.summary  # none was written
    assert not (runner.workspace / "ragjudge-report.json").exists()
    assert fake_github.requests == []  # no comment, nothing read
    assert run.outputs["passed"] == "true"


def test_a_dry_run_of_a_bad_config_still_exits_2(runner: ActionRunner) -> None:
    (runner.workspace / "bad.yml").write_text("endpoint: {url: 'not a url'}\ncases: [nope.yaml]\n", encoding="utf-8")
    run = runner.run(config="bad.yml", dry_run="true")
    assert run.code == 2
    assert run.summary.startswith("## ⚠️ ragjudge gate: exited with code 2\n")
    assert "dry run (nothing was asked)" not in run.summary


def test_dry_run_input_is_a_boolean_and_only_for_modes_that_have_it(runner: ActionRunner) -> None:
    run = runner.run(config="fail.yml", dry_run="yes")
    assert run.code == 2
    assert "input `dry-run` must be a boolean, got 'yes'" in run.stderr
    run = runner.run(config="fail.yml", mode="calibrate", dry_run="true")
    assert run.code == 2
    assert "input `dry-run` does not apply to mode calibrate (`ragjudge calibrate` has no such option)" in run.stderr
