"""From action inputs to a `ragjudge` command line: one subcommand per mode.

Each mode names its subcommand and the option that the `endpoint` and `cases`
inputs feed (None: the input does not apply to that mode). `--config` always
goes; `--report`, `--comment-file` and the `--judge-*` overrides go when the
subcommand has them, so a subcommand can grow options without this file
changing. An input given for an option the subcommand lacks is an error naming
it. The judge key is never on the command line: it goes in OPENAI_API_KEY, and
`--judge-api-key-env` names that variable.
"""

from __future__ import annotations

import glob
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragjudge.github.inputs import ActionInputs, InputError, Mode

JUDGE_KEY_VARIABLE = "OPENAI_API_KEY"


@dataclass(frozen=True)
class ModeCommand:
    """How one mode runs."""

    subcommand: str
    endpoint: str | None
    """The option the `endpoint` input feeds."""
    cases: str | None
    """The option the `cases` input feeds."""
    many_cases: bool = True
    """Whether that option takes several files."""
    reports: bool = False
    """Whether the `reports` input feeds the positional arguments (mode merge)."""


MODES = {
    Mode.GATE: ModeCommand("run", endpoint="--endpoint", cases="--cases"),
    Mode.CANARY: ModeCommand("canary", endpoint="--treatment", cases=None),
    Mode.CALIBRATE: ModeCommand("calibrate", endpoint=None, cases="--labels", many_cases=False),
    Mode.MERGE: ModeCommand("merge", endpoint=None, cases=None, reports=True),
}
SUBCOMMANDS = {mode: spec.subcommand for mode, spec in MODES.items()}


def cli_argv(inputs: ActionInputs, comment_file: Path, options: Collection[str]) -> list[str]:
    """The argv for `ragjudge`; `options` are the option strings the subcommand accepts."""
    spec = MODES[inputs.mode]
    argv = [spec.subcommand, "--config", inputs.config]
    if "--report" in options:
        argv += ["--report", inputs.report]
    if "--comment-file" in options:
        argv += ["--comment-file", str(comment_file)]
    if inputs.endpoint:
        argv += [_option(inputs, "endpoint", spec.endpoint, options), inputs.endpoint]
    if inputs.cases:
        flag = _option(inputs, "cases", spec.cases, options)
        if len(inputs.cases) > 1 and not spec.many_cases:
            raise InputError(f"input `cases` takes one file in mode {inputs.mode.value} ({flag} FILE)")
        argv += [flag, *inputs.cases]
    if inputs.baseline_artifact:
        # Checked here, before anything is downloaded; the path is added once the artifact is found.
        _option(inputs, "baseline-artifact", "--baseline", options)
    for name, flag, value in (
        ("junit", "--junit", inputs.junit),
        ("html", "--html", inputs.html),
        ("shard", "--shard", inputs.shard),
        ("judge-model", "--judge-model", inputs.judge_model),
        ("judge-base-url", "--judge-base-url", inputs.judge_base_url),
        ("judge-api-key", "--judge-api-key-env", JUDGE_KEY_VARIABLE if inputs.judge_api_key else None),
        ("repeat", "--repeat", inputs.repeat),
    ):
        if value:
            argv += [_option(inputs, name, flag, options), value]
    if inputs.dry_run:
        argv.append(_option(inputs, "dry-run", "--dry-run", options))
    if spec.reports:
        argv += report_paths(inputs.reports)
    elif inputs.reports:
        raise InputError(
            f"input `reports` does not apply to mode {inputs.mode.value} (it lists the shards' reports for mode merge)",
            tip="remove `reports` from the step's `with:`",
        )
    return argv


def report_paths(patterns: Sequence[str]) -> list[str]:
    """Mode merge: the report files, each line a path or a glob relative to the workspace, in order."""
    if not patterns:
        raise InputError(
            "mode merge needs input `reports`: the shards' report files",
            tip="e.g. `reports: shards/*.json` after downloading the shards' artifacts into shards/",
        )
    paths: list[str] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not found:
            raise InputError(
                f"input `reports`: {pattern!r} matches no file", tip="download the shards' artifacts first"
            )
        paths += [p for p in found if p not in paths]
    return paths


def cli_environ(inputs: ActionInputs) -> dict[str, str]:
    """Variables the CLI run needs on top of the step's environment."""
    return {JUDGE_KEY_VARIABLE: inputs.judge_api_key} if inputs.judge_api_key else {}


def _option(inputs: ActionInputs, name: str, flag: str | None, options: Collection[str]) -> str:
    if flag is None or flag not in options:
        subcommand = MODES[inputs.mode].subcommand
        raise InputError(
            f"input `{name}` does not apply to mode {inputs.mode.value} (`ragjudge {subcommand}` has no such option)",
            tip=f"remove `{name}` from the step's `with:`",
        )
    return flag
