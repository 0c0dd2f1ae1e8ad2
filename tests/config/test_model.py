"""ragjudge.yml: keys, environment substitution, path resolution, gate defaults, and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.config.endpoint_config import DEFAULT_BODY
from ragjudge.config.gate_config import DEFAULT_CASE_RULES, DEFAULT_SUITE_RULES
from ragjudge.config.loader import load_config
from ragjudge.config.protocol import ProtocolConfig
from ragjudge.errors import ConfigError

SECRET = "sk-live-0123456789abcdef"
TOKEN = "tok-9f8e7d6c5b4a3210"

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


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Run in an empty directory with none of the variables the tests use set."""
    monkeypatch.chdir(tmp_path)
    for name in ("RAG_URL", "RAG_TOKEN", "OPENAI_API_KEY", "TIMEOUT", "MODEL"):
        monkeypatch.delenv(name, raising=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


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


def test_no_config_file_in_the_working_directory_means_defaults(tmp_path):
    config = load_config(None)
    assert config.endpoint.url is None
    assert config.judge.cache == tmp_path / ".ragjudge" / "cache"


def test_ragjudge_yml_in_the_working_directory_is_read(tmp_path):
    write(tmp_path / "ragjudge.yml", "endpoint:\n  url: http://127.0.0.1:1/ask\n")
    assert load_config(None).endpoint.url == "http://127.0.0.1:1/ask"


def test_an_explicit_config_that_does_not_exist(tmp_path):
    err = config_error(tmp_path / "missing.yml")
    assert err.message == f"{tmp_path / 'missing.yml'}: config file not found"


def test_method_is_case_insensitive(tmp_path):
    assert load_config(write(tmp_path / "c.yml", "endpoint:\n  method: get\n")).endpoint.method == "GET"


# --- unknown keys and bad values -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("endpoint:\n  timeoutt: 3\n", "endpoint.timeoutt"),
        ("endpiont:\n  url: http://x\n", "endpiont"),
        ("endpoint:\n  response:\n    answr: data.text\n", "endpoint.response.answr"),
        ("judge:\n  escalate:\n    model: gpt-4o\n    bnad: 0.2\n", "judge.escalate.bnad"),
        ("gate:\n  suites: {pass_rate: '>= 1'}\n", "gate.suites"),
    ],
)
def test_unknown_key_names_its_path(tmp_path, text, path):
    cfg = write(tmp_path / "ragjudge.yml", text)
    err = config_error(cfg)
    assert err.message == f"{cfg}: unknown key '{path}'"
    assert err.tip == "see the README's config section for every key"


def test_every_problem_gets_its_own_line(tmp_path):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  timeoutt: 3\n  retries: 11\njudge:\n  providr: openai\n")
    assert config_error(cfg).message.splitlines() == [
        f"{cfg}: endpoint.retries: Input should be less than or equal to 10",
        f"{cfg}: unknown key 'endpoint.timeoutt'",
        f"{cfg}: unknown key 'judge.providr'",
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("endpoint:\n  timeout_s: 0\n", "endpoint.timeout_s: Input should be greater than 0"),
        ("endpoint:\n  method: DELETE\n", "endpoint.method: Input should be 'POST', 'PUT' or 'GET'"),
        (
            "endpoint:\n  timeout_s: soon\n",
            "endpoint.timeout_s: Input should be a valid number, unable to parse string as a number",
        ),
        ("cases: cases/a.yaml\n", "cases: a list of case files is expected, not a single path"),
        ("judge:\n  provider: claude\n", "judge.provider: Input should be 'offline' or 'openai'"),
    ],
)
def test_bad_values_name_the_key(tmp_path, text, line):
    cfg = write(tmp_path / "ragjudge.yml", text)
    assert config_error(cfg).message == f"{cfg}: {line}"


def test_top_level_must_be_a_mapping(tmp_path):
    cfg = write(tmp_path / "ragjudge.yml", "- endpoint\n")
    assert config_error(cfg).message == f"{cfg}: the top level must be a mapping of keys, not list"


def test_invalid_yaml_gives_line_and_column(tmp_path):
    cfg = write(
        tmp_path / "ragjudge.yml", "endpoint:\n  url: http://x\n  headers: {Authorization: [unclosed\ncases: []\n"
    )
    assert config_error(cfg).message == f"{cfg}: invalid YAML (line 4, column 6): expected ',' or ']', but got ':'"


def test_tab_indentation_gives_line_and_column(tmp_path):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n\turl: http://x\n")
    assert config_error(cfg).message == (
        f"{cfg}: invalid YAML (line 2, column 1): found character '\\t' that cannot start any token"
    )


def test_config_that_is_not_utf8(tmp_path):
    cfg = tmp_path / "ragjudge.yml"
    cfg.write_bytes("endpoint:\n  url: http://caf\xe9/\n".encode("latin-1"))
    err = config_error(cfg)
    assert err.message == f"{cfg}: not UTF-8 text"
    assert err.tip == "save the config file as UTF-8"


# --- environment variables -----------------------------------------------------------------------


def test_unset_variable_names_it_and_prints_no_other_value(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", TOKEN)
    cfg = write(
        tmp_path / "ragjudge.yml",
        f"endpoint:\n  url: ${{RAG_URL}}\n  headers: {{Authorization: 'Bearer ${{RAG_TOKEN}}'}}\n"
        f"judge:\n  api_key: {SECRET}\n",
    )
    err = config_error(cfg)
    assert err.message == f"{cfg}: endpoint.url: environment variable RAG_URL is not set"
    assert TOKEN not in err.render()
    assert SECRET not in err.render()


def test_fallback_applies_when_unset(tmp_path):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  url: ${RAG_URL:-http://127.0.0.1:8765/ask}\n")
    assert load_config(cfg).endpoint.url == "http://127.0.0.1:8765/ask"


def test_environment_wins_over_the_fallback(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_URL", "https://staging.example/ask")
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  url: ${RAG_URL:-http://127.0.0.1:8765/ask}\n")
    assert load_config(cfg).endpoint.url == "https://staging.example/ask"


def test_substituted_values_cannot_change_the_structure(tmp_path, monkeypatch):
    # Substitution happens after parsing: quotes, colons and '#' stay inside the value.
    monkeypatch.setenv("RAG_TOKEN", 'a"b: c #d\n  retries: 9')
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  body: 'Bearer ${RAG_TOKEN}'\n")
    config = load_config(cfg)
    assert config.endpoint.body == 'Bearer a"b: c #d\n  retries: 9'
    assert config.endpoint.retries == 2


def test_substituted_numbers_are_validated(tmp_path, monkeypatch):
    monkeypatch.setenv("TIMEOUT", "2.5")
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  timeout_s: ${TIMEOUT}\n")
    assert load_config(cfg).endpoint.timeout_s == 2.5


@pytest.mark.parametrize(
    "text",
    [
        "endpoint:\n  timeout_s: ${TIMEOUT:-}\n",
        "endpoint:\n  timeout_s: ''\n",
        "endpoint:\n  timeout_s:\n",
        "endpoint:\n  timeout_s: ${TIMEOUT:-}\n  url: ${RAG_URL:-}\n",
    ],
)
def test_empty_value_for_an_optional_key_means_unset(tmp_path, text):
    config = load_config(write(tmp_path / "ragjudge.yml", text))
    assert config.endpoint.timeout_s == 30.0
    assert config.endpoint.url is None


def test_empty_model_takes_the_default(tmp_path):
    config = load_config(write(tmp_path / "ragjudge.yml", "judge:\n  model: ${MODEL:-}\n  provider: ''\n"))
    assert (config.judge.model, config.judge.provider) == ("gpt-4o-mini", "offline")


# --- secrets -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # A secret beside an unrelated mistake.
        f"endpoint:\n  headers: {{Authorization: 'Bearer {TOKEN}'}}\n  timeout_s: soon\n",
        f"judge:\n  api_key: {SECRET}\n  provider: claude\n",
        # A secret that is itself the wrong type or in the wrong place.
        f"endpoint:\n  headers:\n    Authorization: ['Bearer {TOKEN}']\n",
        f"judge:\n  api_key: [{SECRET}]\n",
        f"judge:\n  provider: {SECRET}\n",
        f"endpoint:\n  method: {TOKEN}\n",
        f"endpoint:\n  max_response_bytes: {TOKEN}\n",
        # A secret on a line YAML cannot parse.
        f'judge:\n  api_key: "{SECRET}\nendpoint: {{\n',
        f"endpoint:\n  headers: {{Authorization: Bearer {TOKEN}: x}}\n",
    ],
)
def test_secret_values_never_appear_in_errors(tmp_path, text):
    cfg = write(tmp_path / "ragjudge.yml", text)
    rendered = config_error(cfg).render()
    assert str(cfg) in rendered
    assert SECRET not in rendered
    assert TOKEN not in rendered
    assert "9f8e7d6c" not in rendered and "0123456789abcdef" not in rendered


def test_secret_from_the_environment_in_the_wrong_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    cfg = write(tmp_path / "ragjudge.yml", "judge:\n  provider: ${OPENAI_API_KEY}\n")
    err = config_error(cfg)
    assert err.message == f"{cfg}: judge.provider: Input should be 'offline' or 'openai'"


def test_api_key_is_kept_secret_in_the_model(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    config = load_config(write(tmp_path / "ragjudge.yml", "judge:\n  api_key: ${OPENAI_API_KEY}\n"))
    assert config.judge.api_key is not None
    assert config.judge.api_key.get_secret_value() == SECRET
    assert SECRET not in repr(config)
    assert SECRET not in str(config.judge)


# --- relative paths ------------------------------------------------------------------------------


def test_relative_paths_resolve_against_the_config_directory(tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    write(
        tmp_path / "conf" / "ragjudge.yml",
        "cases: [cases/anchors.yaml, ../shared/more.jsonl, /abs/cases.yaml]\n"
        "template: templates/comment.md.j2\n"
        "judge:\n  cache: .cache/judge\n  calibration: labels/human.jsonl\n"
        "canary:\n  sample: canary/sample.jsonl\n  feedback:\n    file: canary/feedback.json\n",
    )
    config = load_config(Path("../conf/ragjudge.yml"))
    base = (tmp_path / "conf").resolve()
    assert config.cases == [base / "cases/anchors.yaml", base / "../shared/more.jsonl", Path("/abs/cases.yaml")]
    assert config.template == base / "templates/comment.md.j2"
    assert config.judge.cache == base / ".cache/judge"
    assert config.judge.calibration == base / "labels/human.jsonl"
    assert config.canary is not None
    assert config.canary.sample == base / "canary/sample.jsonl"
    assert config.canary.feedback is not None
    assert config.canary.feedback.file == base / "canary/feedback.json"


def test_default_cache_resolves_against_the_config_directory(tmp_path):
    cfg = write(tmp_path / "sub" / "ragjudge.yml", "judge:\n  provider: offline\n")
    assert load_config(cfg).judge.cache == (tmp_path / "sub").resolve() / ".ragjudge" / "cache"


def test_home_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = load_config(write(tmp_path / "ragjudge.yml", "cases: ['~/cases.yaml']\n"))
    assert config.cases == [tmp_path / "home" / "cases.yaml"]


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


# --- through the CLI -----------------------------------------------------------------------------


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_unknown_key_exits_2_with_the_message(tmp_path, capsys):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  url: http://127.0.0.1:9/ask\n  timeoutt: 3\n")
    code, out, err = run_cli(capsys, "--config", str(cfg))
    assert code == 2
    assert err == (
        f"ragjudge: error: {cfg}: unknown key 'endpoint.timeoutt'\nTip: see the README's config section for every key\n"
    )
    assert out == ""


def test_cli_unset_variable_exits_2(tmp_path, capsys):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  url: ${RAG_URL}\n")
    code, _, err = run_cli(capsys, "--config", str(cfg))
    assert code == 2
    assert err.splitlines()[0] == f"ragjudge: error: {cfg}: endpoint.url: environment variable RAG_URL is not set"
    assert "Traceback" not in err


def test_cli_invalid_yaml_exits_2(tmp_path, capsys):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint: [\n")
    code, _, err = run_cli(capsys, "--config", str(cfg))
    assert code == 2
    assert err.startswith(f"ragjudge: error: {cfg}: invalid YAML (line 2, column 1): ")
    assert "Traceback" not in err


def test_cli_missing_config_exits_2(tmp_path, capsys):
    code, _, err = run_cli(capsys, "--config", str(tmp_path / "nope.yml"))
    assert code == 2
    assert err == (
        f"ragjudge: error: {tmp_path / 'nope.yml'}: config file not found\nTip: pass --config with an existing file\n"
    )


def test_cli_never_prints_secrets(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", TOKEN)
    cfg = write(
        tmp_path / "ragjudge.yml",
        "endpoint:\n  url: http://127.0.0.1:9/ask\n  headers: {Authorization: 'Bearer ${RAG_TOKEN}'}\n"
        f"  retries: eleven\njudge:\n  api_key: {SECRET}\n",
    )
    code, out, err = run_cli(capsys, "--config", str(cfg))
    assert code == 2
    assert err.splitlines()[0] == (
        f"ragjudge: error: {cfg}: endpoint.retries: "
        "Input should be a valid integer, unable to parse string as an integer"
    )
    assert TOKEN not in out + err
    assert SECRET not in out + err


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


def test_an_unquoted_jinja_body_gets_a_tip_to_quote_it():
    cfg = write(Path("ragjudge.yml"), 'endpoint:\n  body: {"query": {{ question | tojson }}}\n')
    err = config_error(cfg)
    assert err.message == f"{cfg}: invalid YAML (line 2, column 20): found unhashable key"
    assert err.tip == "quote values that hold a Jinja template: body: '{\"question\": {{ question | tojson }}}'"


def test_a_config_nested_thousands_of_levels_deep_is_exit_2_naming_the_file(tmp_path, capsys):
    from ragjudge.cli import main

    path = tmp_path / "ragjudge.yml"
    path.write_text("endpoint:\n  headers: " + "[" * 2000 + "]" * 2000 + "\n", encoding="utf-8")
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"ragjudge: error: {path}: nested too deeply to read" in err


# --- baseline, repeat and the regression rules ------------------------------------------------------


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
        "'openai-chat', 'openai-responses', 'ai-sdk' or 'langserve'"
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
