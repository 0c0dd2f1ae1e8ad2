"""The action's inputs, read from `INPUT_*` and validated, because the runner does not.

The runner passes `with:` values as `INPUT_<NAME>` with the name upper-cased and its
hyphens kept (`INPUT_GITHUB-TOKEN`), and the defaults of action.yml when a value is
not given. The defaults below are the same, so the container also works when it is
run by hand or in another CI, where a shell can only set `INPUT_GITHUB_TOKEN`
(accepted too) or nothing at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import TypeVar

from ragjudge.errors import UsageError

TRUE_VALUES = ("true", "True", "TRUE")
FALSE_VALUES = ("false", "False", "FALSE")

E = TypeVar("E", bound=Enum)


class Mode(StrEnum):
    GATE = "gate"
    CANARY = "canary"
    CALIBRATE = "calibrate"
    MERGE = "merge"


class CommentWhen(StrEnum):
    ALWAYS = "always"
    ON_FAILURE = "on-failure"
    NEVER = "never"


class FailOn(StrEnum):
    RULES = "rules"
    NEVER = "never"


class InputError(UsageError):
    """An action input is missing or has a value the action does not accept."""


@dataclass(frozen=True)
class ActionInputs:
    """The action's inputs after validation; names follow action.yml."""

    config: str = "ragjudge.yml"
    """Path of the config file, relative to the workspace."""
    endpoint: str | None = None
    """Endpoint URL overriding `endpoint.url` (e.g. the PR's preview deployment)."""
    cases: tuple[str, ...] = ()
    """Case files overriding `cases:` (one per line)."""
    mode: Mode = Mode.GATE
    github_token: str | None = None
    """Token for the PR comment; never printed (it is masked)."""
    comment: CommentWhen = CommentWhen.ALWAYS
    comment_header: str = ""
    """Keeps several sticky comments on one PR apart; defaults to the mode (`gate` for mode merge)."""
    report: str = "ragjudge-report.json"
    fail_on: FailOn = FailOn.RULES
    judge_model: str | None = None
    judge_base_url: str | None = None
    judge_api_key: str | None = None
    """Overrides the config's judge key; never printed (it is masked)."""
    repeat: str | None = None
    """`MAX/PASS_AT` for `ragjudge run --repeat` (re-run failing cases)."""
    job_summary: bool = True
    """Append the Markdown summary to `$GITHUB_STEP_SUMMARY`."""
    annotations: bool = True
    """Emit `::error::`/`::warning::` annotations for the worst failures."""
    baseline_artifact: str | None = None
    """Name of the artifact holding main's report: the newest one is found, downloaded and passed as --baseline."""
    junit: str | None = None
    """Where to write the JUnit XML report, relative to the workspace."""
    html: str | None = None
    """Where to write the self-contained HTML report, relative to the workspace."""
    reports: tuple[str, ...] = ()
    """Mode merge: the shards' reports, one path or glob a line."""
    shard: str | None = None
    """`i/n`: evaluate one shard of the case set (`ragjudge run --shard`); merge the reports with `ragjudge merge`."""
    dry_run: bool = False
    """`ragjudge run --dry-run`: print what the run would ask and cost, ask nothing; the plan goes to the summary."""

    @property
    def header(self) -> str:
        # A merged run's comment is the gate's comment: the same sticky one, whether the run was sharded or not.
        return self.comment_header or (Mode.GATE.value if self.mode is Mode.MERGE else self.mode.value)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.github_token, self.judge_api_key) if s)


def raw_input(environ: Mapping[str, str], name: str) -> str | None:
    """`INPUT_NAME` as the runner spells it (hyphens kept), else with `_` for hyphens; trimmed, "" is unset."""
    key = "INPUT_" + name.replace(" ", "_").upper()
    for candidate in (key, key.replace("-", "_")):
        value = environ.get(candidate)
        if value is not None and value.strip():
            return value.strip()
    return None


def boolean_input(environ: Mapping[str, str], name: str, default: bool) -> bool:
    """Only the YAML 1.2 core-schema spellings, as @actions/core's getBooleanInput."""
    value = raw_input(environ, name)
    if value is None:
        return default
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    raise InputError(
        f"input `{name}` must be a boolean, got {value!r}",
        tip="use true or false (True/TRUE/False/FALSE are accepted too)",
    )


def choice_input(environ: Mapping[str, str], name: str, kind: type[E], default: E) -> E:
    value = raw_input(environ, name)
    if value is None:
        return default
    allowed = [str(member.value) for member in kind]
    for member in kind:
        if member.value == value:
            return member
    raise InputError(f"input `{name}` must be one of {', '.join(allowed)}, got {value!r}")


_REPEAT = re.compile(r"^(\d{1,2})(?:/(\d{1,2}))?$")


def repeat_input(environ: Mapping[str, str], name: str) -> str | None:
    """`MAX/PASS_AT` (or `MAX`) with 1 <= PASS_AT <= MAX <= 10, checked here so the message names the input."""
    value = raw_input(environ, name)
    if value is None:
        return None
    match = _REPEAT.match(value)
    if match is None or not 1 <= int(match.group(2) or 1) <= int(match.group(1)) <= 10:
        raise InputError(
            f"input `{name}` must be MAX/PASS_AT with 1 <= PASS_AT <= MAX <= 10, got {value!r}",
            tip="e.g. 3/2: up to 3 runs of a failing case, passing when 2 of them pass",
        )
    return value


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    """Every input, validated; raises InputError (exit 2) naming the first bad one."""
    cases = tuple(line.strip() for line in (raw_input(environ, "cases") or "").splitlines() if line.strip())
    token = raw_input(environ, "github-token") or _plain(environ, "GITHUB_TOKEN")
    return ActionInputs(
        config=raw_input(environ, "config") or ActionInputs.config,
        endpoint=raw_input(environ, "endpoint"),
        cases=cases,
        mode=choice_input(environ, "mode", Mode, Mode.GATE),
        github_token=token,
        comment=choice_input(environ, "comment", CommentWhen, CommentWhen.ALWAYS),
        comment_header=raw_input(environ, "comment-header") or "",
        report=raw_input(environ, "report") or ActionInputs.report,
        fail_on=choice_input(environ, "fail-on", FailOn, FailOn.RULES),
        judge_model=raw_input(environ, "judge-model"),
        judge_base_url=raw_input(environ, "judge-base-url"),
        judge_api_key=raw_input(environ, "judge-api-key"),
        repeat=repeat_input(environ, "repeat"),
        job_summary=boolean_input(environ, "job-summary", True),
        annotations=boolean_input(environ, "annotations", True),
        baseline_artifact=raw_input(environ, "baseline-artifact"),
        junit=raw_input(environ, "junit"),
        html=raw_input(environ, "html"),
        shard=raw_input(environ, "shard"),
        reports=tuple(line.strip() for line in (raw_input(environ, "reports") or "").splitlines() if line.strip()),
        dry_run=boolean_input(environ, "dry-run", False),
    )


def _plain(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None
