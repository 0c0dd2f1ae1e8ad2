"""Inputs to the `ragjudge` command line, and the `run` flags the judge-* inputs need."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.config.judge_overrides import with_judge_overrides
from ragjudge.config.loader import parse_config
from ragjudge.errors import UsageError
from ragjudge.github.action import subcommand_options
from ragjudge.github.cli_args import SUBCOMMANDS, cli_argv, cli_environ
from ragjudge.github.inputs import ActionInputs, InputError, Mode

RUN = subcommand_options("run") or set()
ALL = {"--config", "--report", "--comment-file", "--endpoint", "--cases", "--treatment", "--labels"} | {
    "--judge-model",
    "--judge-base-url",
    "--judge-api-key-env",
}


def test_gate_with_defaults() -> None:
    argv = cli_argv(ActionInputs(), Path("/tmp/c.md"), RUN)
    assert argv == [
        "run",
        "--config",
        "ragjudge.yml",
        "--report",
        "ragjudge-report.json",
        "--comment-file",
        "/tmp/c.md",
    ]


def test_every_input_mapped_and_the_key_kept_off_the_command_line() -> None:
    inputs = ActionInputs(
        config="cfg/r.yml",
        endpoint="https://preview/ask",
        cases=("a.yaml", "b.yaml"),
        report="out/r.json",
        judge_model="m",
        judge_base_url="https://judge/v1",
        judge_api_key="sk-secret",
    )
    argv = cli_argv(inputs, Path("c.md"), RUN)
    assert argv == [
        "run",
        "--config",
        "cfg/r.yml",
        "--report",
        "out/r.json",
        "--comment-file",
        "c.md",
        "--endpoint",
        "https://preview/ask",
        "--cases",
        "a.yaml",
        "b.yaml",
        "--judge-model",
        "m",
        "--judge-base-url",
        "https://judge/v1",
        "--judge-api-key-env",
        "OPENAI_API_KEY",
    ]
    assert "sk-secret" not in argv
    assert cli_environ(inputs) == {"OPENAI_API_KEY": "sk-secret"}
    assert cli_environ(ActionInputs()) == {}


@pytest.mark.parametrize(
    ("mode", "command"), [(Mode.GATE, "run"), (Mode.CANARY, "canary"), (Mode.CALIBRATE, "calibrate")]
)
def test_one_subcommand_per_mode(mode: Mode, command: str) -> None:
    assert SUBCOMMANDS[mode] == command
    assert cli_argv(ActionInputs(mode=mode), Path("c.md"), ALL)[:3] == [command, "--config", "ragjudge.yml"]


def test_run_has_every_option_the_gate_mode_uses() -> None:
    assert ALL - {"--treatment", "--labels"} <= RUN


def test_endpoint_and_cases_feed_each_modes_own_option() -> None:
    canary = cli_argv(ActionInputs(mode=Mode.CANARY, endpoint="https://canary/ask"), Path("c.md"), ALL)
    calibrate = cli_argv(ActionInputs(mode=Mode.CALIBRATE, cases=("labels.jsonl",)), Path("c.md"), ALL)
    assert canary[-2:] == ["--treatment", "https://canary/ask"]
    assert calibrate[-2:] == ["--labels", "labels.jsonl"]


def test_options_the_subcommand_lacks_are_left_out_or_refused() -> None:
    options = {"--config", "--report"}
    assert cli_argv(ActionInputs(mode=Mode.CALIBRATE), Path("c.md"), options) == [
        "calibrate",
        "--config",
        "ragjudge.yml",
        "--report",
        "ragjudge-report.json",
    ]
    with pytest.raises(InputError) as err:
        cli_argv(ActionInputs(mode=Mode.CALIBRATE, judge_model="m"), Path("c.md"), options)
    assert err.value.message.startswith("input `judge-model` does not apply to mode calibrate")
    with pytest.raises(InputError, match="input `endpoint` does not apply to mode calibrate"):
        cli_argv(ActionInputs(mode=Mode.CALIBRATE, endpoint="u"), Path("c.md"), ALL)
    with pytest.raises(InputError, match="input `cases` does not apply to mode canary"):
        cli_argv(ActionInputs(mode=Mode.CANARY, cases=("a",)), Path("c.md"), ALL)
    with pytest.raises(InputError, match="input `cases` takes one file in mode calibrate"):
        cli_argv(ActionInputs(mode=Mode.CALIBRATE, cases=("a", "b")), Path("c.md"), ALL)


def test_subcommand_options_of_a_missing_subcommand() -> None:
    assert subcommand_options("no-such-command") is None
    assert "--config" in RUN


def test_run_judge_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-from-var")
    base = parse_config({"judge": {"provider": "openai", "api_key": "sk-config"}}, "t", Path("."))

    changed = with_judge_overrides(base, "gpt-x", "http://judge/v1", "MY_KEY")

    assert (changed.judge.model, changed.judge.base_url) == ("gpt-x", "http://judge/v1")
    assert changed.judge.api_key is not None and changed.judge.api_key.get_secret_value() == "sk-from-var"
    assert with_judge_overrides(base, None, None, None) is base


def test_openai_api_key_fills_in_only_when_the_config_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    empty = parse_config({"judge": {"provider": "openai"}}, "t", Path("."))
    own = parse_config({"judge": {"provider": "openai", "api_key": "sk-config"}}, "t", Path("."))

    filled = with_judge_overrides(empty, None, None, None).judge.api_key
    kept = with_judge_overrides(own, None, None, None).judge.api_key

    assert filled is not None and filled.get_secret_value() == "sk-env"
    assert kept is not None and kept.get_secret_value() == "sk-config"


def test_missing_key_variable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE", raising=False)
    base = parse_config({}, "t", Path("."))
    with pytest.raises(UsageError, match="--judge-api-key-env NOPE: the variable is not set"):
        with_judge_overrides(base, None, None, "NOPE")


def test_run_accepts_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--config", str(tmp_path / "none.yml"), "--judge-model", "m", "--judge-base-url", "u"])
    assert code == 2 and "config file not found" in capsys.readouterr().err


def test_repeat_goes_to_run_and_only_to_run() -> None:
    argv = cli_argv(ActionInputs(repeat="3/2"), Path("c.md"), RUN)
    assert argv[-2:] == ["--repeat", "3/2"]
    assert main(["run", "--repeat", "3/2", "--config", "/nonexistent/r.yml"]) == 2  # the flag parses
    with pytest.raises(InputError, match="input `repeat` does not apply to mode canary"):
        cli_argv(ActionInputs(mode=Mode.CANARY, repeat="3/2"), Path("c.md"), subcommand_options("canary") or set())
