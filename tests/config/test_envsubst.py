"""`${VAR}` and `${VAR:-fallback}` over a parsed YAML tree."""

from __future__ import annotations

import pytest

from ragjudge.config.envsubst import substitute
from ragjudge.errors import ConfigError, ExitCode


def test_replaces_references_inside_strings():
    env = {"RAG_TOKEN": "tok-1", "HOST": "rag.internal", "PORT": "8443"}
    tree = {"endpoint": {"url": "https://${HOST}:${PORT}/ask", "headers": {"Authorization": "Bearer ${RAG_TOKEN}"}}}
    assert substitute(tree, "cfg.yml", env) == {
        "endpoint": {"url": "https://rag.internal:8443/ask", "headers": {"Authorization": "Bearer tok-1"}}
    }


def test_walks_lists_and_leaves_other_values_alone():
    env = {"DIR": "suites"}
    tree = {"cases": ["${DIR}/a.yaml", "b.yaml"], "n": 3, "on": True, "ratio": 0.5}
    assert substitute(tree, "cfg.yml", env) == {"cases": ["suites/a.yaml", "b.yaml"], "n": 3, "on": True, "ratio": 0.5}


def test_keys_are_not_substituted():
    assert substitute({"${A}": "x"}, "cfg.yml", {"A": "k"}) == {"${A}": "x"}


def test_unset_variable_is_an_error_naming_it_and_the_key():
    with pytest.raises(ConfigError) as info:
        substitute({"endpoint": {"headers": {"Authorization": "Bearer ${RAG_TOKEN}"}}}, "ragjudge.yml", {})
    err = info.value
    assert err.message == "ragjudge.yml: endpoint.headers.Authorization: environment variable RAG_TOKEN is not set"
    assert err.tip == "export RAG_TOKEN=..., or write ${RAG_TOKEN:-default} to give a fallback"
    assert err.exit_code == ExitCode.BAD_INPUT


def test_unset_variable_in_a_list_names_the_index():
    with pytest.raises(ConfigError) as info:
        substitute({"cases": ["a.yaml", "${SUITE}"]}, "ragjudge.yml", {})
    assert info.value.message == "ragjudge.yml: cases.1: environment variable SUITE is not set"


def test_unset_variable_at_the_top_level():
    with pytest.raises(ConfigError) as info:
        substitute("${X}", "ragjudge.yml", {})
    assert info.value.message == "ragjudge.yml: (top level): environment variable X is not set"


def test_error_prints_no_value_but_the_variable_name():
    env = {"RAG_TOKEN": "sk-live-9f8e7d6c5b4a", "OTHER": "hunter2-secret"}
    tree = {"endpoint": {"headers": {"Authorization": "Bearer ${RAG_TOKEN}", "X-Key": "${OTHER} ${MISSING}"}}}
    with pytest.raises(ConfigError) as info:
        substitute(tree, "ragjudge.yml", env)
    text = info.value.render()
    assert "MISSING" in text
    for value in ("sk-live-9f8e7d6c5b4a", "hunter2-secret", "Bearer"):
        assert value not in text


def test_fallback_when_unset():
    assert substitute({"url": "${RAG_URL:-http://127.0.0.1:8765/ask}"}, "c", {}) == {"url": "http://127.0.0.1:8765/ask"}


def test_set_variable_wins_over_the_fallback():
    assert substitute({"url": "${RAG_URL:-http://fallback}"}, "c", {"RAG_URL": "http://real"}) == {"url": "http://real"}


def test_empty_variable_takes_the_fallback():
    # As in the shell: `:-` applies to unset and to empty.
    assert substitute({"url": "${RAG_URL:-http://fallback}"}, "c", {"RAG_URL": ""}) == {"url": "http://fallback"}


def test_empty_variable_without_a_fallback_is_an_empty_value_not_an_error():
    assert substitute({"headers": {"X-A": "a${EMPTY}b"}}, "c", {"EMPTY": ""}) == {"headers": {"X-A": "ab"}}


@pytest.mark.parametrize(
    ("tree", "env", "expected"),
    [
        ({"url": "${RAG_URL:-}", "method": "POST"}, {}, {"method": "POST"}),
        ({"url": "${RAG_URL}", "method": "POST"}, {"RAG_URL": ""}, {"method": "POST"}),
        ({"url": "", "method": "POST"}, {}, {"method": "POST"}),
        ({"url": None, "method": "POST"}, {}, {"method": "POST"}),
        ({"endpoint": {"timeout_s": "${T:-}"}}, {}, {"endpoint": {}}),
    ],
)
def test_a_key_whose_value_ends_up_empty_is_dropped(tree, env, expected):
    assert substitute(tree, "c", env) == expected


def test_replacement_is_not_expanded_again():
    # A value that itself looks like a reference is data, not another lookup.
    assert substitute({"h": "${A}"}, "c", {"A": "${B}"}) == {"h": "${B}"}


@pytest.mark.parametrize("text", ["$HOME", "${1ABC}", "${}", "$ {A}", "price: $5"])
def test_text_that_is_not_a_reference_is_left_alone(text):
    assert substitute({"v": text}, "c", {"HOME": "/root", "A": "a"}) == {"v": text}


def test_fallback_may_contain_colons_and_slashes():
    assert substitute({"v": "${U:-https://h:1/p?a=b}"}, "c", {}) == {"v": "https://h:1/p?a=b"}


def test_reads_the_process_environment_by_default(monkeypatch):
    monkeypatch.setenv("RAGJUDGE_TEST_VAR", "from-env")
    monkeypatch.delenv("RAGJUDGE_TEST_UNSET", raising=False)
    assert substitute({"a": "${RAGJUDGE_TEST_VAR}", "b": "${RAGJUDGE_TEST_UNSET:-fb}"}, "c") == {
        "a": "from-env",
        "b": "fb",
    }
