"""`probe_options`: what the repro line adds to `--config` so that it asks the service the run asked."""

from __future__ import annotations

from ragjudge import masking
from ragjudge.gate.reproduce import holder, probe_options

MAIN = "http://127.0.0.1:8001/ask"
PR = "http://127.0.0.1:8002/ask"


def test_the_configs_own_url_needs_nothing() -> None:
    assert probe_options(MAIN, MAIN, {}) == []


def test_recorded_traces_asked_nothing() -> None:
    assert probe_options(None, MAIN, {"RAG_URL": MAIN}) == []


def test_an_override_is_carried_as_written() -> None:
    assert probe_options(PR, MAIN, {"INPUT_ENDPOINT": PR}) == ["--endpoint", PR]


def test_a_masked_url_is_named_by_its_variable_a_teams_own_before_the_inputs() -> None:
    masking.register(PR)
    env = {"INPUT_ENDPOINT": PR, "PREVIEW_URL": PR, "GITHUB_OTHER": PR, "ZED": "x"}
    assert probe_options(PR, MAIN, env) == ["--endpoint", "$PREVIEW_URL"]
    assert probe_options(PR, MAIN, {"INPUT_ENDPOINT": PR}) == ["--endpoint", "$INPUT_ENDPOINT"]
    assert probe_options(PR, PR, {}) == []  # the config's `${VAR}` inside a longer URL: --config reaches it


def test_credentials_held_by_no_variable_are_left_for_the_reader() -> None:
    url = "https://user:pw@preview.example/ask?key=abc"
    assert probe_options(url, MAIN, {}) == ["--endpoint", "https://preview.example/ask"]
    assert holder(url, {"RUNNER_X": url}) is None
