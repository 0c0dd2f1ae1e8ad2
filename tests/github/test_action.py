"""The whole action in-process, as the runner runs it, against the example service and FakeGitHub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.github import action
from tests.fakes.github_server import FakeGitHub
from tests.github.runner import REPO, TOKEN, ActionRunner
from tests.github.workspace import FAILING_IDS

MARKER = "<!-- ragjudge:sticky:gate -->"
PR = 7


def posted(gh: FakeGitHub, method: str) -> list[str]:
    """Paths of the requests with `method` (query strings dropped)."""
    return [r.path.split("?")[0] for r in gh.requests if r.method == method]


def ours(gh: FakeGitHub) -> list[dict[str, object]]:
    return [c for c in gh.comments.get(PR, []) if str(c["body"]).startswith(MARKER)]


def test_failing_gate_fails_the_step_and_sets_outputs_summary_annotations_and_comment(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    run = runner.run(config="fail.yml")

    assert run.code == 1
    out = run.outputs
    [comment] = ours(fake_github)
    assert out == {
        "verdict": "fail",
        "passed": "false",
        "report": "ragjudge-report.json",
        "failed-cases": "5",
        "errored-cases": "0",
        "failed-case-ids": "\n".join(FAILING_IDS),
        "pass-rate": "0.8837",
        "faithfulness": out["faithfulness"],
        "rejection-accuracy": "1.0",
        "p95-latency-ms": out["p95-latency-ms"],
        "comment-url": comment["html_url"],
    }
    report = json.loads((runner.workspace / "ragjudge-report.json").read_text(encoding="utf-8"))
    assert out["faithfulness"] == str(round(report["suite"]["faithfulness"], 4))
    assert out["p95-latency-ms"] == str(round(report["suite"]["p95_latency_ms"], 1))
    assert str(comment["html_url"]).startswith(f"https://github.com/{REPO}/pull/{PR}#issuecomment-")
    # The comment: marker first, the verdict, every failing case, the link to the run.
    body = str(comment["body"])
    assert body.startswith(MARKER + "\n## ❌ ragjudge: FAIL")
    assert all(case_id in body for case_id in FAILING_IDS)
    assert f"https://github.com/{REPO}/actions/runs/4242" in body
    assert comment["user"] == {"login": "github-actions[bot]", "type": "Bot"}
    # The summary: the same report, every failing case, and where the comment went.
    assert "ragjudge: FAIL" in run.summary
    assert all(case_id in run.summary for case_id in FAILING_IDS)
    assert f"PR comment created: {comment['html_url']}" in run.summary
    # Annotations: the failed suite rule first, then the cases, as errors; the CLI log grouped.
    errors = run.commands("error")
    assert errors[0].startswith("::error title=ragjudge%3A suite rule pass_rate failed::pass_rate 0.88")
    # Two causes, each one annotation on a case of its own ("1 more like it"): cs-020 and cs-043 contradict their
    # references, cs-026 and cs-020 miss a golden passage; then cs-014 and cs-031 one each.
    assert len(errors) == 1 + 2 + 2
    causes = [e for e in errors if "more like it" in e]
    assert [c.split("::")[1].split(",title=")[1] for c in causes] == [
        "ragjudge%3A case cs-020 failed%2C and 1 more like it",
        "ragjudge%3A case cs-026 failed%2C and 1 more like it",
    ]
    assert causes[0].endswith("; and 1 more like it: cs-043") and causes[1].endswith("; and 1 more like it: cs-020")
    assert "::cs-020 failed: contradicts the reference: " in causes[0]
    assert "::cs-026 failed: context_recall 0.000 < 1 (missing " in causes[1]
    # Each case's annotation lands on the case in its file ("Files changed"): the line its item starts on.
    lines = (runner.workspace / "cases" / "all.yaml").read_text(encoding="utf-8").splitlines()
    at_id = lines.index("  id: cs-014")  # yaml.safe_dump sorts the keys: the item starts a few lines above
    line = max(n for n in range(at_id + 1) if lines[n].startswith("- ")) + 1
    [cs014] = [e for e in errors if "case cs-014" in e]
    assert cs014.startswith(f"::error file=cases/all.yaml,line={line},title=ragjudge%3A case cs-014 failed::")
    # The comment opens with the headline, links the run, and holds no path of the runner.
    assert report["headline"]["sentence"] == "Blocked by pass_rate 0.884 < 1. 5 more cases must pass."
    assert body.splitlines()[3] == "**Blocked by pass\\_rate 0.884 &lt; 1. 5 more cases must pass.**"
    assert str(runner.workspace) not in body
    assert run.commands("group") == ["::group::ragjudge run"] and run.commands("endgroup") == ["::endgroup::"]


def test_passing_gate_passes_the_step(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    run = runner.run(config="pass.yml")

    assert run.code == 0
    assert run.outputs["verdict"] == "pass" and run.outputs["passed"] == "true"
    assert run.outputs["failed-cases"] == "0" and run.outputs["failed-case-ids"] == ""
    assert run.outputs["pass-rate"] == "1.0"
    [comment] = ours(fake_github)
    assert "ragjudge: PASS" in str(comment["body"])
    assert run.commands("error") == [] and run.commands("warning") == []


def test_rerun_updates_the_one_comment(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    first = runner.run(config="fail.yml")
    second = runner.run(config="pass.yml")
    third = runner.run(config="pass.yml")

    [comment] = ours(fake_github)
    assert len(fake_github.comments[PR]) == 1
    assert "ragjudge: PASS" in str(comment["body"])
    assert first.outputs["comment-url"] == second.outputs["comment-url"] == third.outputs["comment-url"]
    assert len(posted(fake_github, "POST")) == 1 and len(posted(fake_github, "PATCH")) == 2


def test_comment_on_page_two_of_120_is_found_and_patched(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    fake_github.seed_comments(PR, 130, author="reviewer")
    mine = fake_github.add_comment(PR, MARKER + "\nold result", author="github-actions[bot]")
    fake_github.seed_comments(PR, 5, author="reviewer")

    run = runner.run(config="fail.yml")

    assert run.outputs["comment-url"] == mine["html_url"]
    assert posted(fake_github, "POST") == []
    assert posted(fake_github, "PATCH") == [f"/repos/{REPO}/issues/comments/{mine['id']}"]
    assert len(fake_github.comments[PR]) == 136 and len(ours(fake_github)) == 1
    pages = [r.path for r in fake_github.requests if r.method == "GET" and "/comments" in r.path]
    assert len(pages) == 2 and "per_page=100" in pages[0] and "page=2" in pages[1]


def test_another_authors_comment_quoting_the_marker_is_left_alone(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    quoted = fake_github.add_comment(PR, MARKER + "\nI copied this from the bot", author="mallory")

    run = runner.run(config="fail.yml")

    assert run.code == 1
    assert fake_github.find_comment(int(quoted["id"]))["body"] == MARKER + "\nI copied this from the bot"  # type: ignore[index]
    assert f"/repos/{REPO}/issues/comments/{quoted['id']}" not in posted(fake_github, "PATCH")
    assert len(posted(fake_github, "POST")) == 1
    assert [c["user"]["login"] for c in ours(fake_github)] == ["mallory", "github-actions[bot]"]  # type: ignore[index]


@pytest.mark.parametrize(("config", "code", "verdict"), [("fail.yml", 1, "fail"), ("pass.yml", 0, "pass")])
def test_403_on_the_comment_is_a_warning_and_the_gate_still_decides(
    runner: ActionRunner, fake_github: FakeGitHub, config: str, code: int, verdict: str
) -> None:
    fake_github.fail_next("POST", 403)

    run = runner.run(config=config)

    assert run.code == code
    assert run.outputs["verdict"] == verdict and run.outputs["comment-url"] == ""
    [warning] = [w for w in run.commands("warning") if "PR comment" in w]
    # One of the gate's warning annotations: it shares their ten slots, and is counted when they run out.
    assert warning.startswith("::warning title=ragjudge::the PR comment was not posted: ")
    assert len(run.commands("warning")) <= 10
    assert "HTTP 403" in warning and "Resource not accessible by integration" in warning
    assert "workflow_run" in warning
    assert f"ragjudge: {verdict.upper()}" in run.summary and "PR comment not posted" in run.summary
    assert fake_github.comments.get(PR, []) == []


def test_502_then_success_posts_once(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 502, headers={"retry-after": "0"})

    run = runner.run(config="fail.yml")

    assert run.code == 1 and len(ours(fake_github)) == 1
    assert len(posted(fake_github, "POST")) == 2
    assert run.outputs["comment-url"] == ours(fake_github)[0]["html_url"]


def test_secondary_rate_limit_then_success(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    fake_github.fail_secondary_rate_limit("POST", retry_after="0")

    run = runner.run(config="pass.yml")

    assert run.code == 0 and len(ours(fake_github)) == 1 and len(posted(fake_github, "POST")) == 2


def test_an_oversized_comment_is_capped_not_rejected(
    runner: ActionRunner, fake_github: FakeGitHub, workspace: Path
) -> None:
    (workspace / "huge.md.j2").write_text("{% for i in range(9000) %}0123456789{% endfor %}\n", encoding="utf-8")
    config = (workspace / "fail.yml").read_text(encoding="utf-8") + "template: huge.md.j2\n"
    (workspace / "huge.yml").write_text(config, encoding="utf-8")

    run = runner.run(config="huge.yml")

    [body] = [b["body"] for b in fake_github.request_bodies if isinstance(b, dict)]
    assert 60_000 < len(body) <= 65_536
    assert body.startswith(MARKER) and "truncated" in body
    assert run.outputs["comment-url"] and not [w for w in run.commands("warning") if "PR comment" in w]


def test_token_and_judge_key_never_leak_and_are_masked(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    fake_github.fail_next("POST", 403)
    key = "sk-judge-SECRET-0123456789"

    run = runner.run(config="fail.yml", judge_api_key=key)

    assert f"::add-mask::{TOKEN}" in run.stdout and f"::add-mask::{key}" in run.stdout
    for secret in (TOKEN, key):
        assert run.stdout.count(secret) == 1  # only in its add-mask line
        assert secret not in run.stderr
        assert secret not in run.outputs_text and secret not in run.summary
        assert secret not in (runner.workspace / "ragjudge-report.json").read_text(encoding="utf-8")
    assert all(TOKEN not in json.dumps(b) for b in fake_github.request_bodies)
    assert {r.headers["authorization"] for r in fake_github.requests} == {f"Bearer {TOKEN}"}


def test_fail_on_never_reports_only(runner: ActionRunner) -> None:
    run = runner.run(config="fail.yml", fail_on="never")

    assert run.code == 0
    assert run.outputs["verdict"] == "fail" and run.outputs["passed"] == "false"
    assert any("fail-on is never" in n for n in run.commands("notice"))


def test_comment_never_makes_no_api_call(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    run = runner.run(config="fail.yml", comment="never")

    assert run.code == 1 and fake_github.requests == [] and run.outputs["comment-url"] == ""


def test_comment_on_failure_skips_a_pass_but_updates_an_earlier_failure(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    runner.run(config="pass.yml", comment="on-failure")
    assert fake_github.comments.get(PR, []) == []

    runner.run(config="fail.yml", comment="on-failure")
    runner.run(config="pass.yml", comment="on-failure")

    [comment] = ours(fake_github)
    assert "ragjudge: PASS" in str(comment["body"])


def test_comment_header_keeps_comments_apart(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    runner.run(config="pass.yml", comment_header="search-service")
    runner.run(config="pass.yml")
    runner.run(config="pass.yml", comment_header="search-service")

    bodies = sorted(str(c["body"]).split("\n")[0] for c in fake_github.comments[PR])
    assert bodies == ["<!-- ragjudge:sticky:gate -->", "<!-- ragjudge:sticky:search-service -->"]


@pytest.mark.parametrize("event", [{"ref": "refs/heads/main", "after": "abc"}, {}])
def test_no_pull_request_means_no_comment(runner: ActionRunner, fake_github: FakeGitHub, event: dict[str, str]) -> None:
    runner.event.write_text(json.dumps(event), encoding="utf-8")
    runner.env["GITHUB_EVENT_NAME"] = "push"

    run = runner.run(config="fail.yml")

    assert run.code == 1 and fake_github.requests == []
    assert run.outputs["comment-url"] == "" and run.outputs["verdict"] == "fail"
    assert "not for a pull request (push)" in run.summary


def test_summary_lists_every_failing_case_the_comment_cannot(
    runner: ActionRunner, fake_github: FakeGitHub, workspace: Path
) -> None:
    from tests.fakes.rag import RagServer, answer

    n = 400
    lines = []
    for i in range(n):
        detail = f"detail-{i:03d} " + "must be mentioned in the answer " * 5
        lines.append(f"- id: bulk-{i:03d}\n  question: question {i}\n  must_mention: [{json.dumps(detail)}]\n")
    (workspace / "cases" / "bulk.yaml").write_text("".join(lines), encoding="utf-8")
    (workspace / "bulk.yml").write_text(
        "endpoint: {url: '${BULK_URL}', concurrency: 16}\ncases: [cases/bulk.yaml]\n"
        "gate: {case: {latency_ms: '<= 10000'}, suite: {pass_rate: '>= 1.0'}}\n",
        encoding="utf-8",
    )
    with RagServer({}, default=answer("nothing useful", ["d1"], {"d1": "nothing"})) as rag:
        runner.env["BULK_URL"] = rag.url
        run = runner.run(config="bulk.yml")

    assert run.code == 1 and run.outputs["failed-cases"] == str(n)
    [comment] = ours(fake_github)
    shown = [i for i in range(n) if f"bulk-{i:03d}" in str(comment["body"])]
    assert len(shown) < n and "more failing or errored case" in str(comment["body"])
    assert all(f"bulk-{i:03d}" in run.summary for i in range(n))
    assert len(run.summary.encode("utf-8")) < 1024 * 1024
    assert run.outputs["failed-case-ids"].split("\n") == [f"bulk-{i:03d}" for i in range(n)]
    # 400 cases missing each its own detail: one cause, one annotation on its first case, the rest counted there.
    errors = run.commands("error")
    assert len(errors) == 2 and "title=ragjudge%3A case bulk-000 failed%2C and 399 more like it::" in errors[1]
    assert errors[1].endswith("; and 399 more like it: bulk-001, bulk-002, bulk-003, bulk-004, bulk-005 and 394 more")


def test_untrusted_text_cannot_issue_workflow_commands(runner: ActionRunner, workspace: Path) -> None:
    from tests.fakes.rag import RagServer, answer

    evil = "50% off\r\n::set-output name=verdict::pass\n::warning::forged, really: yes"
    (workspace / "cases" / "evil.yaml").write_text(
        f"- id: evil\n  question: q\n  must_not_mention: [{json.dumps(evil)}]\n", encoding="utf-8"
    )
    (workspace / "evil.yml").write_text(
        "endpoint: {url: '${EVIL_URL}'}\ncases: [cases/evil.yaml]\ngate: {case: {}, suite: {pass_rate: '>= 1.0'}}\n",
        encoding="utf-8",
    )
    with RagServer({}, default=answer(evil)) as rag:
        runner.env["EVIL_URL"] = rag.url
        run = runner.run(config="evil.yml", comment="never")

    assert run.code == 1
    # Outside the CLI's stop-commands section, every line starting with :: is one of ours.
    lines = run.stdout.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[stop].split("::")[2]
    resume = lines.index(f"::{token}::")
    outside = lines[:stop] + lines[resume + 1 :]
    assert not any(line.startswith(("::set-output", "::warning::forged")) for line in outside)
    [case_error] = [e for e in run.commands("error") if "case evil" in e]
    # It lands on the case in its file (line 1: the file holds that case alone).
    assert case_error.startswith(
        "::error file=cases/evil.yaml,line=1,title=ragjudge%3A case evil failed::evil failed: "
    )
    assert "50%25 off%0D%0A::set-output name=verdict::pass%0A::warning::forged, really: yes" in case_error


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("job-summary", "yes", "input `job-summary` must be a boolean, got 'yes'"),
        ("annotations", "1", "input `annotations` must be a boolean, got '1'"),
        ("comment", "sometimes", "input `comment` must be one of always, on-failure, never, got 'sometimes'"),
        ("mode", "deploy", "input `mode` must be one of gate, canary, calibrate, merge, got 'deploy'"),
        ("fail-on", "warnings", "input `fail-on` must be one of rules, never, got 'warnings'"),
    ],
)
def test_invalid_input_exits_2_naming_it(
    runner: ActionRunner, fake_github: FakeGitHub, name: str, value: str, expected: str
) -> None:
    run = runner.run(config="pass.yml", **{name.replace("-", "_"): value})

    assert run.code == 2
    assert f"ragjudge: error: {expected}" in run.stderr
    assert run.commands("error") == [f"::error title=ragjudge%3A invalid input::{expected}"]
    assert fake_github.requests == [] and not (runner.workspace / "ragjudge-report.json").exists()


def test_valid_boolean_spellings(runner: ActionRunner) -> None:
    assert runner.run(config="pass.yml", job_summary="FALSE", annotations="False").summary == ""
    assert runner.run(config="pass.yml", job_summary="True").summary != ""


def test_mode_without_its_subcommand_exits_2(runner: ActionRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    real = action.subcommand_options
    monkeypatch.setattr(action, "subcommand_options", lambda name: None if name == "canary" else real(name))

    run = runner.run(mode="canary")

    assert run.code == 2
    assert "input `mode` is canary, which runs `ragjudge canary`" in run.stderr
    assert "no such command yet" in run.commands("error")[0]


def test_bad_config_exits_2_with_the_clis_message_and_no_stale_report(runner: ActionRunner) -> None:
    stale = runner.workspace / "ragjudge-report.json"
    stale.write_text(json.dumps({"verdict": "pass", "suite": {"failed": 0}}), encoding="utf-8")

    run = runner.run(config="missing.yml")

    assert run.code == 2
    assert run.outputs["verdict"] == "error" and run.outputs["passed"] == "false"
    assert run.outputs["failed-cases"] == ""
    [error] = run.commands("error")
    assert "missing.yml: config file not found" in error
    assert "exited with code 2" in run.summary and "missing.yml: config file not found" in run.summary


def test_fail_on_never_still_fails_on_bad_config(runner: ActionRunner) -> None:
    assert runner.run(config="missing.yml", fail_on="never").code == 2


def test_cases_input_overrides_the_config(runner: ActionRunner) -> None:
    run = runner.run(config="fail.yml", cases="cases/passing.yaml\n")

    assert run.code == 0 and run.outputs["verdict"] == "pass"


def test_endpoint_input_overrides_the_config(runner: ActionRunner, example_rag_url: str) -> None:
    runner.env["RAG_URL"] = "http://127.0.0.1:9/unused"

    assert runner.run(config="pass.yml", endpoint=example_rag_url).code == 0


def test_judge_inputs_reach_the_judge_and_the_key_stays_off_the_command_line(
    runner: ActionRunner, fake_openai, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "cases" / "one.yaml").write_text("- id: one\n  question: 退货的时候赠品也要一起寄回吗？\n")
    (workspace / "judge.yml").write_text(
        "endpoint: {url: '${RAG_URL}'}\ncases: [cases/one.yaml]\njudge: {provider: openai, max_retries: 0}\n",
        encoding="utf-8",
    )
    seen: list[list[str]] = []
    real = action.cli_argv
    monkeypatch.setattr(action, "cli_argv", lambda *a: seen.append(real(*a)) or seen[-1])  # type: ignore[func-returns-value]
    key = "sk-judge-from-input-42"

    run = runner.run(
        config="judge.yml",
        comment="never",
        judge_model="judge-x",
        judge_base_url=fake_openai.base_url,
        judge_api_key=key,
    )

    assert fake_openai.bodies and {b["model"] for b in fake_openai.bodies} == {"judge-x"}
    assert {r["headers"]["authorization"] for r in fake_openai.requests} == {f"Bearer {key}"}
    assert "--judge-api-key-env" in seen[0] and key not in " ".join(seen[0])
    assert run.outputs["verdict"] in ("pass", "fail", "error")


def test_no_github_variables_at_all_works_as_a_plain_cli(
    workspace: Path, example_rag_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"PATH": "/usr/bin:/bin", "RAG_URL": example_rag_url, "INPUT_CONFIG": "fail.yml"}

    code = action.main([], env)

    out, err = capsys.readouterr()
    assert code == 1
    assert "ragjudge: FAIL" in out and "::" not in out
    assert "ragjudge: error: pass_rate 0.88" in err
    assert json.loads((workspace / "ragjudge-report.json").read_text(encoding="utf-8"))["verdict"] == "fail"


def test_underscore_input_names_work_where_hyphens_cannot_be_set(workspace: Path, example_rag_url: str) -> None:
    env = {"RAG_URL": example_rag_url, "INPUT_CONFIG": "fail.yml", "INPUT_FAIL_ON": "never"}

    assert action.main([], env) == 0


def test_extra_arguments_reach_the_subcommand(workspace: Path, example_rag_url: str) -> None:
    env = {"RAG_URL": example_rag_url, "INPUT_CONFIG": "pass.yml"}

    assert action.main(["--log", "calls.jsonl"], env) == 0
    lines = (workspace / "calls.jsonl").read_text(encoding="utf-8").splitlines()
    assert len({e["case_id"] for e in map(json.loads, lines) if e["type"] == "endpoint"}) == 38


def test_an_input_the_mode_does_not_use_exits_2_naming_it(runner: ActionRunner, fake_github: FakeGitHub) -> None:
    run = runner.run(mode="canary", cases="cases/all.yaml")

    assert run.code == 2
    assert "input `cases` does not apply to mode canary" in run.stderr
    assert fake_github.requests == []


@pytest.mark.parametrize(
    ("text", "verdict", "code", "faithfulness"),
    [
        ("Refunds take 3 days.", "promote", 0, "1.0"),
        ("Refunds take 3 days. The moon is free.", "rollback", 1, "0.5"),
    ],
)
def test_canary_mode(
    runner: ActionRunner,
    fake_github: FakeGitHub,
    workspace: Path,
    text: str,
    verdict: str,
    code: int,
    faithfulness: str,
) -> None:
    from tests.fakes.rag import RagServer, answer

    passage = {"d1": "Refunds take 3 days."}
    sample = "".join(f"- id: q{i}\n  question: refund question {i}\n" for i in range(60))
    (workspace / "cases" / "sample.yaml").write_text(sample, encoding="utf-8")
    (workspace / "canary.yml").write_text(
        "endpoint: {retries: 0}\n"
        "canary:\n  sample: cases/sample.yaml\n  control: '${CONTROL_URL}'\n"
        "  rules: {faithfulness: '>= 0.95'}\n  min_requests: 50\n",
        encoding="utf-8",
    )
    with (
        RagServer({}, default=answer(text, ["d1"], passage)) as treatment,
        RagServer({}, default=answer("Refunds take 3 days.", ["d1"], passage)) as control,
    ):
        runner.env["CONTROL_URL"] = control.url
        run = runner.run(mode="canary", config="canary.yml", endpoint=treatment.url, report="canary.json")

    assert run.code == code, run.stderr
    assert run.outputs["verdict"] == verdict and run.outputs["passed"] == str(code == 0).lower()
    assert run.outputs["faithfulness"] == faithfulness and run.outputs["report"] == "canary.json"
    assert len(treatment.seen) == 60
    [comment] = fake_github.comments[PR]
    assert str(comment["body"]).startswith(f"<!-- ragjudge:sticky:canary -->\n## {'✅' if code == 0 else '❌'}")
    assert f"ragjudge canary: {verdict.upper()}" in run.summary
    assert bool(run.commands("error")) == (code != 0)
