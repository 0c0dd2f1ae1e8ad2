"""The GitHub Action: inputs in, the gate run in-process, then outputs, summary, annotations, comment.

`main(argv, environ)` is what entrypoint.py runs inside the container. It works
the same outside GitHub (no `GITHUB_*` variables): it then only runs the CLI and
prints plain messages. The step's exit code follows the gate (`fail-on: rules`)
or is 0 once a report exists (`fail-on: never`); a comment that cannot be posted
(a fork's read-only token) is a warning, never a failure.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ragjudge import __version__, masking
from ragjudge.errors import CaseFileError, ExitCode, RagjudgeError
from ragjudge.github.annotations import gate_annotations, step_warnings
from ragjudge.github.cli_args import JUDGE_KEY_VARIABLE, SUBCOMMANDS, cli_argv, cli_environ
from ragjudge.github.env import RunnerEnv
from ragjudge.github.inputs import ActionInputs, CommentWhen, FailOn, InputError, Mode, read_inputs
from ragjudge.github.outputs import step_outputs, write_outputs
from ragjudge.github.rest import GitHubClient
from ragjudge.github.sticky import upsert
from ragjudge.github.summary import append_summary, dry_run_summary, gate_summary, text_summary
from ragjudge.github.workflow_commands import MAX_ANNOTATIONS, WorkflowLog
from ragjudge.report.model import Report
from ragjudge.report.reading import load_report

MAX_PRINTED_CHARS = 20_000
"""A dry run's plan kept for the summary, at most (its tail: the totals come last)."""


@dataclass(frozen=True)
class RunOutcome:
    """What the CLI run left behind."""

    exit_code: int
    data: dict[str, Any] | None
    """The report's JSON, when the run wrote one."""
    report: Report | None
    """The same, as a gate report (modes gate and merge)."""
    comment: str | None
    """The rendered comment, when the run wrote one."""
    error: str = ""
    """The CLI's error message (its stderr's `error:` line), for the annotation."""
    printed: str = ""
    """What the CLI printed (kept for a dry run, whose plan is its output)."""


@dataclass
class Notes:
    """Sentences for the summary and warnings for the annotations, gathered along the way."""

    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the action; `argv` is appended to the subcommand's arguments (for use outside Actions)."""
    env = dict(os.environ if environ is None else environ)
    # One masking scope for the whole step: the inputs' secrets, and those the CLI run registers
    # (config values from the environment), stay masked in the summary, outputs and annotations.
    with masking.scope(), masking.masked_std():
        return _main(argv, env)


def _main(argv: Sequence[str] | None, env: dict[str, str]) -> int:
    runner = RunnerEnv.from_environ(env)
    log = WorkflowLog(runner.in_actions)
    masking.register_environ(env)
    try:
        inputs = read_inputs(env)
    except RagjudgeError as exc:
        return _refuse(exc, log)
    for secret in (*inputs.secrets, env.get(JUDGE_KEY_VARIABLE, "")):
        masking.register(secret)
        log.add_mask(secret)
    subcommand = SUBCOMMANDS[inputs.mode]
    options = subcommand_options(subcommand)
    if options is None:
        message = (
            f"input `mode` is {inputs.mode.value}, which runs `ragjudge {subcommand}`, "
            f"and ragjudge {__version__} has no such command yet"
        )
        return _refuse(InputError(message, tip="use mode: gate, or a release of the action that has it"), log)
    notes = Notes()  # the step's own warnings, gathered for the annotations' budget
    with _scratch(runner.temp_dir) as scratch:
        comment_file = scratch / "comment.md"
        try:
            cli = [*cli_argv(inputs, comment_file, options), *(argv or ())]
        except RagjudgeError as exc:
            return _refuse(exc, log)
        if inputs.baseline_artifact:
            baseline = find_baseline(inputs, runner, scratch, log, notes)
            if baseline is not None:
                cli[1:1] = ["--baseline", str(baseline)]
        outcome = run_cli(inputs, cli, {**env, **cli_environ(inputs)}, comment_file, log, notes)
    return publish(inputs, runner, outcome, log, notes)


def find_baseline(
    inputs: ActionInputs, runner: RunnerEnv, scratch: Path, log: WorkflowLog, notes: Notes
) -> Path | None:
    """`baseline-artifact`: main's report downloaded into the scratch folder, or None, with a notice saying why
    (a warning, when it is one, goes to `notes`: it is annotated with the gate's)."""
    from ragjudge.github.artifacts import Where, fetch_baseline

    name = inputs.baseline_artifact or ""
    missing = [
        what
        for what, value in (
            ("GITHUB_REPOSITORY", runner.repository),
            ("GITHUB_WORKFLOW_REF", runner.workflow_file),
            ("github-token", inputs.github_token),
        )
        if not value
    ]
    if missing or runner.repository is None or runner.workflow_file is None or not inputs.github_token:
        notes.warnings.append(
            f"baseline-artifact {name!r} skipped: no {', '.join(missing)} (it needs a GitHub Actions run)"
        )
        return None
    where = Where(runner.repository, runner.workflow_file, runner.default_branch, name)
    client = GitHubClient(runner.api_url, inputs.github_token)
    try:
        found = fetch_baseline(client, where, scratch / "baseline", inputs.report)
    except Exception as exc:  # whatever an artifact holds, the gate still runs: a baseline is optional
        notes.warnings.append(
            f"no baseline: artifact {name!r} could not be read ({type(exc).__name__}); the gate applies its "
            "absolute rules only"
        )
        return None
    for skipped in found.skipped:
        log.issue("notice", skipped, "ragjudge: baseline")
    if found.level == "warning":
        notes.warnings.append(found.message)
    else:
        log.issue(found.level, found.message, "ragjudge: baseline")
    return found.path


def _refuse(exc: RagjudgeError, log: WorkflowLog) -> int:
    """Stop before running anything: an annotation for the UI, the message and tip for the log."""
    log.issue("error", exc.message, "ragjudge: invalid input")
    print(exc.render(), file=sys.stderr)
    return int(exc.exit_code)


def subcommand_options(name: str) -> set[str] | None:
    """The option strings `ragjudge <name>` accepts, or None when there is no such subcommand."""
    from ragjudge.cli import build_parser

    for action in build_parser()._actions:
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict):
            sub = choices.get(name)
            return set(sub._option_string_actions) if sub is not None else None
    return None


def run_cli(
    inputs: ActionInputs,
    argv: Sequence[str],
    environ: Mapping[str, str],
    comment_file: Path,
    log: WorkflowLog,
    notes: Notes,
) -> RunOutcome:
    """`ragjudge <argv>` in this process, its output grouped and kept from being read as commands."""
    from ragjudge.cli import main as cli_main

    report_path = Path(inputs.report)
    before = _stamp(report_path)
    captured = _Tee(sys.stderr)
    printed = _Tee(sys.stdout)
    # Only a dry run's output is kept (its plan goes to the summary); a gate run's streams straight through.
    keep: AbstractContextManager[object] = redirect_stdout(printed) if inputs.dry_run else nullcontext()
    with (
        log.group(f"ragjudge {argv[0]}"),
        log.commands_stopped(),
        _process_environ(environ),
        redirect_stderr(captured),
        keep,
    ):
        code = cli_main(list(argv))
    data = report = None
    if report_path.is_file() and _stamp(report_path) != before:
        data = _read_json(report_path)
        if inputs.mode in (Mode.GATE, Mode.MERGE):
            try:
                report = load_report(report_path)
            except CaseFileError as exc:
                notes.warnings.append(exc.message)
    comment = comment_file.read_text(encoding="utf-8") if comment_file.is_file() else None
    kept = printed.getvalue()[-MAX_PRINTED_CHARS:]
    return RunOutcome(code, data, report, comment, _error_line(captured.getvalue()), kept)


def publish(inputs: ActionInputs, runner: RunnerEnv, outcome: RunOutcome, log: WorkflowLog, notes: Notes) -> int:
    """Comment, summary, annotations and outputs; then the step's exit code. `notes`: the step's warnings so far."""
    comment_url = ""
    try:
        comment_url = post_comment(inputs, runner, outcome, notes)
        if inputs.job_summary and runner.summary_file is not None:
            append_summary(runner.summary_file, _summary(inputs, outcome, notes))
        # The step's own warnings (the baseline, the comment) share the gate's warning slots (GitHub shows 10 a
        # step), one a kind, and the last slot counts the kinds left out.
        if inputs.annotations and outcome.report is not None:
            annotations = gate_annotations(outcome.report, notes.warnings)
        else:
            annotations = step_warnings(notes.warnings, MAX_ANNOTATIONS - 1)  # `_annotate` may add one
        for note in annotations:
            log.issue(note.kind, note.message, note.title, note.properties())
        if inputs.annotations and outcome.report is None:
            _annotate(inputs, outcome, log)
    finally:
        passed = outcome.exit_code == ExitCode.PASSED
        write_outputs(runner.output_file, step_outputs(outcome.data, passed, inputs.report, comment_url))
    if outcome.exit_code != ExitCode.PASSED and inputs.fail_on is FailOn.NEVER and outcome.data is not None:
        verdict = outcome.data.get("verdict", "?")
        log.issue("notice", f"verdict {verdict}, but fail-on is never: the step passes (report only)", "ragjudge")
        return int(ExitCode.PASSED)
    return outcome.exit_code


def post_comment(inputs: ActionInputs, runner: RunnerEnv, outcome: RunOutcome, notes: Notes) -> str:
    """The sticky comment per the `comment` input; returns its URL, or "" when there is none."""
    failed = outcome.exit_code != ExitCode.PASSED
    if inputs.comment is CommentWhen.NEVER:
        return ""
    if runner.pr_number is None or runner.repository is None:
        event = runner.event_name or "no GitHub event"
        notes.summary.append(f"No PR comment: this run is not for a pull request ({event}).")
        return ""
    if inputs.dry_run:
        notes.summary.append("No PR comment: a dry run asks nothing and posts nothing.")
        return ""
    if outcome.comment is None:
        notes.summary.append("No PR comment: ragjudge did not produce one (see the log).")
        return ""
    if not inputs.github_token:
        notes.warnings.append("no github-token: the PR comment was not posted")
        return ""
    body = outcome.comment  # it links the workflow run beside its verdict (`run_url_of`)
    client = GitHubClient(runner.api_url, inputs.github_token)
    create = inputs.comment is CommentWhen.ALWAYS or failed
    try:
        result = upsert(client, runner.repository, runner.pr_number, inputs.header, body, create=create)
    except RagjudgeError as exc:
        tip = f" ({exc.tip})" if exc.tip else ""
        notes.warnings.append(f"the PR comment was not posted: {exc.message}{tip}")
        notes.summary.append(f"PR comment not posted: {exc.message}.")
        return ""
    except (KeyError, TypeError, ValueError) as exc:  # a reply not shaped like GitHub's: still only a warning
        notes.warnings.append(f"the PR comment was not posted: unexpected API reply ({type(exc).__name__}: {exc})")
        return ""
    notes.warnings.extend(result.warnings)
    if result.action == "skipped":
        notes.summary.append("No PR comment: the gate passed and `comment` is on-failure.")
    else:
        notes.summary.append(f"PR comment {result.action}: {result.url}")
    return result.url


def _summary(inputs: ActionInputs, outcome: RunOutcome, notes: Notes) -> str:
    if inputs.dry_run and outcome.exit_code == ExitCode.PASSED:
        return dry_run_summary(inputs.mode.value, outcome.printed, notes.summary)
    if outcome.report is not None:
        return gate_summary(outcome.report, inputs.report, notes.summary, html=inputs.html is not None)
    if outcome.comment is not None:
        return text_summary(outcome.comment, inputs.report, notes.summary)
    text = f"## ⚠️ ragjudge {inputs.mode.value}: exited with code {outcome.exit_code}\n\n"
    if outcome.error:
        text += "```text\n" + outcome.error.replace("```", "'''") + "\n```\n"
    return text_summary(text, inputs.report, notes.summary)


def _annotate(inputs: ActionInputs, outcome: RunOutcome, log: WorkflowLog) -> None:
    """The annotations of a run that left no gate report (a canary, a stop before the run)."""
    if outcome.exit_code == ExitCode.PASSED:
        return
    if outcome.data is not None:
        verdict = outcome.data.get("verdict", "?")
        kind = "error" if outcome.exit_code == ExitCode.GATE_FAILED else "warning"  # e.g. 4: inconclusive
        log.issue(kind, f"ragjudge {inputs.mode.value}: verdict {verdict}", f"ragjudge {inputs.mode.value}")
    else:
        message = outcome.error or f"ragjudge exited with code {outcome.exit_code}; see the log"
        log.issue("error", message, f"ragjudge {inputs.mode.value}: could not run")


class _Tee(io.StringIO):
    """Keeps a copy of what is written to stderr, so the CLI's error can become an annotation."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self._target = target

    def write(self, text: str) -> int:
        self._target.write(text)
        return super().write(text)

    def flush(self) -> None:
        self._target.flush()


def _error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    picked = [line for line in lines if "error:" in line or line.startswith("Tip:")]
    return "\n".join(picked or lines[-1:])[:2000]


@contextmanager
def _process_environ(values: Mapping[str, str]) -> Iterator[None]:
    """The CLI reads os.environ (`${VAR}` in the config); give it exactly the step's environment."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _scratch(base: Path | None) -> Iterator[Path]:
    """A private folder for the rendered comment: RUNNER_TEMP on a runner, else the system's."""
    if base is not None and not base.is_dir():
        base = None
    with tempfile.TemporaryDirectory(prefix="ragjudge-", dir=base) as name:
        yield Path(name)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
