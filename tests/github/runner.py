"""`ActionRunner`: runs `ragjudge.github.action.main` the way the Actions runner runs the container."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import yaml

from ragjudge.github.action import main

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghs_FakeToken0123456789abcdefXYZ"
REPO = "octo-org/octo-repo"


def action_defaults() -> dict[str, str]:
    """What the runner passes for every input not given: action.yml's defaults (`${{ github.token }}` resolved)."""
    spec = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    defaults = {}
    for name, item in spec["inputs"].items():
        value = str(item.get("default", ""))
        defaults[name] = TOKEN if value == "${{ github.token }}" else value
    return defaults


def parse_outputs(text: str) -> dict[str, str]:
    """Parse a `$GITHUB_OUTPUT` file as the runner does (`name=value` and `name<<DELIM` ... `DELIM`)."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            while lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            i += 1
            values[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values


@dataclass
class ActionRun:
    """What one run left behind."""

    code: int
    stdout: str
    stderr: str
    outputs_text: str
    summary: str

    @property
    def outputs(self) -> dict[str, str]:
        return parse_outputs(self.outputs_text)

    def commands(self, kind: str) -> list[str]:
        """The `::kind ...::` lines, in order."""
        return [line for line in self.stdout.splitlines() if line.startswith(f"::{kind}")]


class ActionRunner:
    """Holds a faked runner environment; `run(**inputs)` runs the action with it."""

    def __init__(self, workspace: Path, files: Path, event: Path, api_url: str, extra: dict[str, str]) -> None:
        self.workspace = workspace
        self.output_file = files / "output"
        self.summary_file = files / "step_summary"
        self.event = event
        self.env: dict[str, str] = {
            "PATH": "/usr/bin:/bin",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_OUTPUT": str(self.output_file),
            "GITHUB_STEP_SUMMARY": str(self.summary_file),
            "GITHUB_API_URL": api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_RUN_ID": "4242",
            "RUNNER_TEMP": str(files),
            **extra,
        }

    def run(self, **inputs: str) -> ActionRun:
        """Inputs by their action.yml names with `_` for `-` (github_token=...); the rest get the defaults."""
        given = {name.replace("_", "-"): value for name, value in inputs.items()}
        env = dict(self.env)
        for name, value in {**action_defaults(), **given}.items():
            env[f"INPUT_{name.upper()}"] = value
        for path in (self.output_file, self.summary_file):
            path.write_text("", encoding="utf-8")  # fresh per step, as the runner makes them
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([], env)
        return ActionRun(
            code,
            out.getvalue(),
            err.getvalue(),
            self.output_file.read_text(encoding="utf-8"),
            self.summary_file.read_text(encoding="utf-8"),
        )
