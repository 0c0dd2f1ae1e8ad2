"""No secret reaches the job summary, `$GITHUB_OUTPUT` or a workflow command (issue 11)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.github_server import FakeGitHub
from tests.github.runner import TOKEN, ActionRunner


def test_a_github_error_quoting_the_token_is_masked_in_summary_warning_and_outputs(
    runner: ActionRunner, fake_github: FakeGitHub
) -> None:
    # Reproduces the probe: the API's error message quoted the token, and it landed verbatim in the
    # job summary file and in a ::warning:: line.
    fake_github.fail_next("POST", 422, body={"message": f"token {TOKEN} is not valid for this repository"})

    run = runner.run(config="fail.yml")

    assert run.code == 1
    [warning] = [w for w in run.commands("warning") if "PR comment" in w]
    assert "token *** is not valid" in warning
    assert "PR comment not posted" in run.summary and "token *** is not valid" in run.summary
    printed = "\n".join(line for line in run.stdout.splitlines() if not line.startswith("::add-mask::"))
    for text in (printed, run.stderr, run.summary, run.outputs_text):
        assert TOKEN not in text
    # The runner is still asked to mask it, in the clear: `::add-mask::***` would mask nothing.
    assert f"::add-mask::{TOKEN}" in run.stdout.splitlines()


def test_a_config_secret_echoed_by_the_endpoint_is_masked_in_every_action_output(
    runner: ActionRunner, workspace: Path, monkeypatch: object, fake_github: FakeGitHub
) -> None:
    # The endpoint path comes from `${RAG_URL}`; a header from `${RAG_KEY}`. The example service does not
    # echo, so the key goes into the case's question, which every output shows.
    key = 'k3y"with\\quote'
    runner.env["RAG_KEY"] = key
    (workspace / "cases" / "echo.yaml").write_text(f"- id: echo\n  question: 'what is {key}?'\n", encoding="utf-8")
    (workspace / "echo.yml").write_text(
        "endpoint: {url: '${RAG_URL}', headers: {X-Api-Key: '${RAG_KEY}'}}\ncases: [cases/echo.yaml]\n"
        "gate: {suite: {pass_rate: '>= 1.0'}, case: {context_recall: '>= 1.0'}}\n",
        encoding="utf-8",
    )

    run = runner.run(config="echo.yml")

    report = (workspace / "ragjudge-report.json").read_text(encoding="utf-8")
    comments = [str(c["body"]) for c in fake_github.comments.get(7, [])]
    for text in (run.stdout, run.stderr, run.summary, run.outputs_text, report, *comments):
        assert key not in text
        assert 'k3y\\"with\\\\quote' not in text  # nor its JSON-escaped form
    assert "what is ***?" in report
