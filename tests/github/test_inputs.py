"""INPUT_* reading and validation."""

from __future__ import annotations

import pytest

from ragjudge.errors import ExitCode
from ragjudge.github.inputs import ActionInputs, CommentWhen, FailOn, InputError, Mode, read_inputs


def test_defaults_with_nothing_set() -> None:
    inputs = read_inputs({})
    assert inputs == ActionInputs()
    assert inputs.header == "gate" and inputs.secrets == ()


def test_hyphenated_names_as_the_runner_passes_them() -> None:
    inputs = read_inputs(
        {
            "INPUT_GITHUB-TOKEN": " ghs_x ",
            "INPUT_COMMENT-HEADER": "search",
            "INPUT_FAIL-ON": "never",
            "INPUT_JUDGE-MODEL": "m",
            "INPUT_JUDGE-BASE-URL": "http://judge/v1",
            "INPUT_JUDGE-API-KEY": "sk-1",
            "INPUT_MODE": "canary",
            "INPUT_COMMENT": "on-failure",
            "INPUT_CASES": "a.yaml\n\n  b.yaml  \n",
            "INPUT_ENDPOINT": "",
        }
    )
    assert inputs.github_token == "ghs_x" and inputs.header == "search"
    assert inputs.fail_on is FailOn.NEVER and inputs.mode is Mode.CANARY and inputs.comment is CommentWhen.ON_FAILURE
    assert (inputs.judge_model, inputs.judge_base_url, inputs.judge_api_key) == ("m", "http://judge/v1", "sk-1")
    assert inputs.cases == ("a.yaml", "b.yaml") and inputs.endpoint is None
    assert inputs.secrets == ("ghs_x", "sk-1")


def test_underscore_names_and_github_token_fallback() -> None:
    inputs = read_inputs({"INPUT_FAIL_ON": "never", "GITHUB_TOKEN": "ghs_env"})
    assert inputs.fail_on is FailOn.NEVER and inputs.github_token == "ghs_env"
    assert read_inputs({"INPUT_GITHUB-TOKEN": "a", "GITHUB_TOKEN": "b"}).github_token == "a"


def test_header_defaults_to_the_mode() -> None:
    assert read_inputs({"INPUT_MODE": "calibrate"}).header == "calibrate"


@pytest.mark.parametrize("value", ["true", "True", "TRUE"])
def test_true_spellings(value: str) -> None:
    assert read_inputs({"INPUT_JOB-SUMMARY": value}).job_summary is True


@pytest.mark.parametrize("value", ["false", "False", "FALSE"])
def test_false_spellings(value: str) -> None:
    assert read_inputs({"INPUT_ANNOTATIONS": value}).annotations is False


@pytest.mark.parametrize("value", ["yes", "1", "on", "tRUE", "no", "0"])
def test_other_boolean_spellings_are_errors(value: str) -> None:
    with pytest.raises(InputError) as err:
        read_inputs({"INPUT_JOB-SUMMARY": value})
    assert err.value.message == f"input `job-summary` must be a boolean, got {value!r}"
    assert err.value.exit_code == ExitCode.BAD_INPUT and "true or false" in (err.value.tip or "")


@pytest.mark.parametrize(
    ("name", "value"), [("MODE", "Gate"), ("COMMENT", "on_failure"), ("FAIL-ON", "always"), ("MODE", "deploy")]
)
def test_choices_are_exact(name: str, value: str) -> None:
    with pytest.raises(InputError, match=f"input `{name.lower()}` must be one of"):
        read_inputs({f"INPUT_{name}": value})


@pytest.mark.parametrize(("value", "kept"), [("3/2", "3/2"), ("3", "3"), (" 10/10 ", "10/10"), ("", None)])
def test_repeat_input(value: str, kept: str | None) -> None:
    assert read_inputs({"INPUT_REPEAT": value}).repeat == kept


@pytest.mark.parametrize("value", ["3/4", "0/0", "11/1", "3/", "three", "3/2/1", "-1"])
def test_a_bad_repeat_input_is_exit_2_naming_it(value: str) -> None:
    with pytest.raises(InputError) as err:
        read_inputs({"INPUT_REPEAT": value})
    assert err.value.message == f"input `repeat` must be MAX/PASS_AT with 1 <= PASS_AT <= MAX <= 10, got {value!r}"
    assert err.value.exit_code is ExitCode.BAD_INPUT
