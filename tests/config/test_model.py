"""The keys of ragjudge.yml, section by section (`config/model.py` and the `config/*_config.py` it is made of):
the spec's example, defaults, gate rules, URLs, refusal, baseline and repeat, streaming, presets."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.config.endpoint_config import DEFAULT_BODY
from ragjudge.config.gate_config import DEFAULT_CASE_RULES, DEFAULT_SUITE_RULES
from ragjudge.config.loader import load_config
from ragjudge.config.protocol import ProtocolConfig
from tests.config.files import TOKEN, config_error, run_cli, write

pytestmark = pytest.mark.usefixtures("isolated")


SPEC_EXAMPLE = """\
endpoint:
  url: ${RAG_URL}            # --endpoint overrides
  method: POST
  headers: {Authorization: "Bearer ${RAG_TOKEN}"}
  body: '{"question": {{ question | tojson }}}'
  timeout_s: 30
  retries: 2
  concurrency: 8
  max_response_bytes: 5000000
  response: {}
judge:
  provider: offline
cases: [cases/anchors.yaml]
gate:
  case:  {context_recall: ">= 1.0", latency_ms: "<= 10000"}
  suite: {pass_rate: ">= 0.9", rejection_accuracy: ">= 0.9", p95_latency_ms: "<= 3000"}
"""


# --- the keys ------------------------------------------------------------------------------------


def test_the_example_from_the_spec(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_URL", "https://preview.example/ask")
    monkeypatch.setenv("RAG_TOKEN", TOKEN)
    config = load_config(write(tmp_path / "ragjudge.yml", SPEC_EXAMPLE))

    e = config.endpoint
    assert e.url == "https://preview.example/ask"
    assert e.method == "POST"
    assert e.headers == {"Authorization": f"Bearer {TOKEN}"}
    assert e.body == DEFAULT_BODY == '{"question": {{ question | tojson }}}'
    assert (e.timeout_s, e.retries, e.concurrency, e.max_response_bytes) == (30.0, 2, 8, 5_000_000)
    assert e.response.answer is None
    assert config.judge.provider == "offline"
    assert config.cases == [tmp_path.resolve() / "cases" / "anchors.yaml"]
    assert config.case_rules() == {"context_recall": ">= 1.0", "latency_ms": "<= 10000"}
    assert config.suite_rules() == {"pass_rate": ">= 0.9", "rejection_accuracy": ">= 0.9", "p95_latency_ms": "<= 3000"}


def test_defaults_for_an_empty_file(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", ""))
    e = config.endpoint
    assert e.url is None
    assert (e.method, e.body, e.timeout_s, e.retries, e.concurrency, e.max_response_bytes) == (
        "POST",
        DEFAULT_BODY,
        30.0,
        2,
        8,
        5_000_000,
    )
    assert e.headers == {}
    assert config.cases == []
    assert config.judge.provider == "offline"


def test_method_is_case_insensitive(tmp_path):
    assert load_config(write(tmp_path / "c.yml", "endpoint:\n  method: get\n")).endpoint.method == "GET"


# --- gate defaults -------------------------------------------------------------------------------


def test_no_gate_keeps_both_default_scopes(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "judge: {provider: offline}\n"))
    assert config.case_rules() == DEFAULT_CASE_RULES == {"context_recall": ">= 1.0", "latency_ms": "<= 10000"}
    assert (
        config.suite_rules()
        == DEFAULT_SUITE_RULES
        == {
            "pass_rate": ">= 0.9",
            "rejection_accuracy": ">= 0.9",
            "p95_latency_ms": "<= 3000",
        }
    )


def test_a_case_scope_replaces_the_case_defaults_only(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "gate:\n  case: {latency_ms: '<= 500'}\n"))
    assert config.case_rules() == {"latency_ms": "<= 500"}
    assert config.suite_rules() == DEFAULT_SUITE_RULES


def test_a_suite_scope_without_pass_rate_gets_pass_rate_one(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "gate:\n  suite: {rejection_accuracy: '>= 0.8'}\n"))
    assert config.suite_rules() == {"rejection_accuracy": ">= 0.8", "pass_rate": ">= 1.0"}
    assert config.case_rules() == DEFAULT_CASE_RULES


def test_an_empty_suite_scope_still_has_pass_rate_one(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "gate:\n  suite: {}\n  case: {}\n"))
    assert config.suite_rules() == {"pass_rate": ">= 1.0"}
    assert config.case_rules() == {}


def test_a_suite_scope_keeps_its_own_pass_rate(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "gate:\n  suite: {pass_rate: '>= 0.75'}\n"))
    assert config.suite_rules() == {"pass_rate": ">= 0.75"}


def test_rules_from_the_config_are_copies(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", ""))
    config.suite_rules()["pass_rate"] = ">= 0"
    config.case_rules().clear()
    assert config.suite_rules() == DEFAULT_SUITE_RULES
    assert config.case_rules() == DEFAULT_CASE_RULES


# --- URLs, refusal, reply logging ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "url", "found"),
    [
        ("endpoint.url", "127.0.0.1:8080/ask", "no scheme"),
        ("endpoint.url", "file:///etc/passwd", "a file:// URL"),
        ("endpoint.url", "ftp://example.org/ask", "a ftp:// URL"),
        ("endpoint.url", "http:///ask", "no host"),
        ("judge.base_url", "localhost:11434/v1", "no scheme"),
        ("judge.base_url", "https://", "no host"),
    ],
)
def test_urls_must_be_http_with_a_host(key, url, found):
    section, name = key.split(".")
    cfg = write(Path("ragjudge.yml"), f"{section}:\n  {name}: '{url}'\n")
    err = config_error(cfg)
    assert err.message == (f"{cfg}: {key}: must be an http:// or https:// URL with a host (found {found})")
    assert main(["run", "--config", str(cfg)]) == 2


def test_refusal_settings_and_an_invalid_pattern():
    cfg = write(
        Path("ragjudge.yml"),
        "endpoint:\n  refusal:\n    patterns: ['^unfortunately', '请联系客服']\n    builtin: false\n    judge: true\n",
    )
    refusal = load_config(cfg).endpoint.refusal
    assert (refusal.patterns, refusal.builtin, refusal.judge) == (["^unfortunately", "请联系客服"], False, True)
    assert load_config(write(Path("d.yml"), "endpoint: {}\n")).endpoint.refusal.model_dump() == {
        "patterns": [],
        "builtin": True,
        "judge": False,
    }
    bad = write(Path("bad.yml"), "endpoint:\n  refusal:\n    patterns: ['ok', '(unclosed']\n")
    assert config_error(bad).message == (
        f"{bad}: endpoint.refusal.patterns: patterns.1 is not a valid regular expression: "
        "missing ), unterminated subpattern at position 0"
    )


def test_max_log_body_bytes_defaults_to_20000():
    assert load_config(write(Path("d.yml"), "endpoint: {}\n")).endpoint.max_log_body_bytes == 20_000


# --- baseline, repeat and the regression rules ---------------------------------------------------


def test_baseline_repeat_and_regression_defaults(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "{}\n"))
    assert (config.baseline.report, config.baseline.max_age_days) == (None, 7.0)
    assert (config.repeat.max, config.repeat.pass_at) == (1, 1)
    assert (config.gate.regression, config.gate.significance) == (None, 0.05)


def test_the_issue_example_for_baseline_repeat_and_regression(tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    write(
        tmp_path / "conf" / "ragjudge.yml",
        "baseline: {report: artifacts/main.json, max_age_days: 3}\n"
        "repeat: {max: 3, pass_at: 2}\n"
        "gate:\n"
        "  regression:\n"
        '    newly_failing: "<= 0"\n'
        '    pass_rate_delta: ">= -0.02"\n'
        '    faithfulness_delta: ">= -0.02"\n'
        '    judge.grounding_delta: ">= -0.3"\n'
        '    p95_latency_ratio: "<= 1.2"\n'
        '    cost_ratio: "<= 1.25"\n'
        "  significance: 0.05\n",
    )
    config = load_config(Path("../conf/ragjudge.yml"))
    assert config.baseline.report == (tmp_path / "conf").resolve() / "artifacts/main.json"
    assert config.baseline.max_age_days == 3
    assert (config.repeat.max, config.repeat.pass_at) == (3, 2)
    assert config.gate.regression is not None and len(config.gate.regression) == 6


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("repeat: {max: 2, pass_at: 3}\n", "ragjudge.yml: repeat: pass_at (3) must not exceed max (2)"),
        ("repeat: {max: 0}\n", "ragjudge.yml: repeat.max: Input should be greater than or equal to 1"),
        ("repeat: {max: 11}\n", "ragjudge.yml: repeat.max: Input should be less than or equal to 10"),
        ("repeat: {tries: 3}\n", "ragjudge.yml: unknown key 'repeat.tries'"),
        ("baseline: {max_age_days: 0}\n", "ragjudge.yml: baseline.max_age_days: Input should be greater than 0"),
        ("baseline: {path: x.json}\n", "ragjudge.yml: unknown key 'baseline.path'"),
        ("gate: {significance: 0.9}\n", "ragjudge.yml: gate.significance: Input should be less than or equal to 0.5"),
    ],
)
def test_bad_baseline_and_repeat_values_name_the_key(tmp_path, text, line):
    path = write(tmp_path / "ragjudge.yml", text)
    error = config_error(path)
    assert error.message.splitlines() == [line.replace("ragjudge.yml", str(path), 1)]


def test_streaming_keys_default_and_validate(tmp_path):
    e = load_config(write(tmp_path / "ragjudge.yml", "")).endpoint
    assert (e.stream, e.idle_timeout_s, e.response.answer_delta) == ("auto", 30.0, None)
    text = "endpoint:\n  stream: sse\n  idle_timeout_s: 2.5\n  response: {answer_delta: choices.0.delta.content}\n"
    e = load_config(write(tmp_path / "ragjudge.yml", text)).endpoint
    assert (e.stream, e.idle_timeout_s, e.response.answer_delta) == ("sse", 2.5, "choices.0.delta.content")
    cfg = write(tmp_path / "bad.yml", "endpoint:\n  stream: websocket\n")
    assert config_error(cfg).message == f"{cfg}: endpoint.stream: Input should be 'auto', 'sse', 'ndjson' or 'none'"
    cfg = write(tmp_path / "zero.yml", "endpoint:\n  idle_timeout_s: 0\n")
    assert config_error(cfg).message == f"{cfg}: endpoint.idle_timeout_s: Input should be greater than 0"


def test_an_unknown_preset_exits_2_naming_the_key_and_the_choices(tmp_path, capsys):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  url: http://127.0.0.1:9/ask\n  preset: openai\n")
    code, out, err = run_cli(capsys, "--config", str(cfg))
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == (
        f"ragjudge: error: {cfg}: endpoint.preset: Input should be "
        "'openai-chat', 'openai-responses', 'ai-sdk', 'langserve' or 'ag-ui'"
    )


def test_the_openai_chat_preset_needs_a_model_unless_the_body_is_given(tmp_path):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  preset: openai-chat\n")
    assert str(config_error(cfg)).splitlines()[0] == (
        f"{cfg}: endpoint: preset openai-chat sends endpoint.model as the request's model: set endpoint.model "
        "(the model, or the pipeline's name for hayhooks), or give your own endpoint.body"
    )
    write(cfg, "endpoint:\n  preset: openai-chat\n  body: '{\"q\": {{ question | tojson }}}'\n")
    assert load_config(cfg).endpoint.body == '{"q": {{ question | tojson }}}'


def test_a_preset_fills_body_and_response_and_what_is_given_wins(tmp_path):
    cfg = write(
        tmp_path / "ragjudge.yml",
        "endpoint:\n  preset: openai-chat\n  model: rag\n  response: {retrieved: references, answer: reply}\n",
    )
    endpoint = load_config(cfg).endpoint
    assert endpoint.body == '{"model": {{ model | tojson }}, "messages": {{ messages | tojson }}, "stream": true}'
    assert (endpoint.response.answer, endpoint.response.answer_delta, endpoint.response.retrieved) == (
        "reply",
        None,
        "references",
    )
    assert endpoint.protocol == "openai-chat"  # the preset declares the protocol of its name
    write(cfg, "endpoint:\n  preset: langserve\n  protocol: {extends: langserve, end: {event: done}}\n")
    endpoint = load_config(cfg).endpoint
    response = endpoint.response
    assert isinstance(endpoint.protocol, ProtocolConfig)  # a given protocol wins
    assert (response.answer_delta, response.retrieved, response.retrieved_id, response.retrieved_text) == (
        None,
        "context",
        "metadata.source",
        "page_content",
    )


def test_judge_counts_are_numbers_not_booleans(tmp_path):
    # YAML reads `true` as a bool, which pydantic would take for 1 rejudge.
    for key in ("rejudge", "consistency_sample", "max_calls"):
        cfg = write(tmp_path / f"{key}.yml", f"endpoint:\n  url: http://127.0.0.1:1/ask\njudge:\n  {key}: true\n")
        assert str(config_error(cfg)).startswith(f"{cfg}: judge.{key}: a number is expected, not true")


def test_judge_cache_null_is_no_cache_and_absent_is_the_default(tmp_path):
    none = write(tmp_path / "none.yml", "endpoint:\n  url: http://127.0.0.1:1/ask\njudge:\n  cache: null\n")
    assert load_config(none).judge.cache is None
    # An environment variable that is empty still means unset: the default folder, beside the config.
    unset = write(
        tmp_path / "unset.yml", "endpoint:\n  url: http://127.0.0.1:1/ask\njudge:\n  cache: ${NO_SUCH_VAR_X:-}\n"
    )
    assert load_config(unset).judge.cache == tmp_path / ".ragjudge" / "cache"


@pytest.mark.parametrize("key", ["rejudge", "samples", "concurrency", "max_passages"])
def test_a_boolean_is_not_a_count(key: str) -> None:
    # Issue 40 item 16: `judge.rejudge: true` was accepted as 1.
    from pydantic import ValidationError

    from ragjudge.config.judge_config import JudgeConfig

    with pytest.raises(ValidationError) as caught:
        JudgeConfig.model_validate({key: True})
    [error] = caught.value.errors(include_url=False)
    assert (error["loc"], error["msg"]) == ((key,), "Value error, a number is expected, not true")
    assert JudgeConfig.model_validate({"rejudge": 2}).rejudge == 2
