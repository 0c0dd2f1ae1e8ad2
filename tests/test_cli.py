"""The command line's shape: a fast start (nothing heavy imported before a command needs it), one help line each."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from ragjudge.cli import COMMANDS, build_parser, chosen_command, command_module

HEAVY = ("openai", "jinja2", "requests", "pydantic", "yaml", "httpx", "ragjudge.github", "ragjudge.canary")


def imported_after(code: str) -> list[str]:
    """The heavy top-level modules a fresh interpreter has loaded after running `code`."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out.splitlines()[-1])
    return sorted({h for h in HEAVY for m in loaded if m == h or m.startswith(h + ".")})


def test_importing_the_cli_loads_nothing_heavy() -> None:
    assert imported_after("import ragjudge.cli") == []


def test_version_loads_nothing_heavy() -> None:
    code = "import ragjudge.cli\ntry:\n    ragjudge.cli.main(['--version'])\nexcept SystemExit:\n    pass"
    assert imported_after(code) == []


def test_an_offline_run_never_imports_the_openai_sdk() -> None:
    loaded = imported_after("import ragjudge.cli\nragjudge.cli.build_parser('run')\nimport ragjudge.gate.evaluation")
    assert "openai" not in loaded
    assert "ragjudge.github" not in loaded


def test_a_run_reaches_its_first_endpoint_call_without_importing_requests() -> None:
    # requests (about 40 ms to import) serves only the GitHub and Prometheus clients; the endpoint client is
    # urllib3's, and a run should not pay for requests before its first call.
    code = (
        "import ragjudge.cli\nragjudge.cli.build_parser('run')\nimport ragjudge.gate.evaluation\n"
        "from ragjudge.config.endpoint_config import EndpointConfig\n"
        "from ragjudge.endpoint.client import EndpointClient\n"
        "EndpointClient(EndpointConfig(), 'https://rag.example/ask')"
    )
    assert "requests" not in imported_after(code)


def test_making_the_model_judge_does_not_import_the_sdk_before_its_first_call() -> None:
    code = (
        "from pydantic import SecretStr\n"
        "from ragjudge.config.judge_config import JudgeConfig\n"
        "from ragjudge.judge.factory import make_judge\n"
        "make_judge(JudgeConfig(provider='openai', api_key=SecretStr('sk-test-000000'), cache=None))"
    )
    assert "openai" not in imported_after(code)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_help_line_is_the_commands_own(name: str) -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(command_module(name)).add_parser(sub)
    (action,) = sub._choices_actions
    assert (action.dest, action.help) == (name, COMMANDS[name])


def test_the_full_parser_has_every_commands_options() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)
    assert "--judge-api-key-env" in sub.choices["run"]._option_string_actions
    assert "--labels" in sub.choices["calibrate"]._option_string_actions


@pytest.mark.parametrize(
    ("argv", "expected"),
    [(["run", "--config", "x.yml"], "run"), (["--version"], None), (["-h", "demo"], "demo"), ([], None)],
)
def test_the_chosen_command_is_the_first_word_that_is_not_an_option(argv: list[str], expected: str | None) -> None:
    assert chosen_command(argv) == expected
