"""Reading ragjudge.yml (`config/loader.py`): the file found or not, unknown keys and bad values named by key,
YAML errors with a tip, environment substitution, secrets never echoed, relative paths, and exit 2 from the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.config.loader import load_config
from tests.config.files import SECRET, TOKEN, config_error, run_cli, write

pytestmark = pytest.mark.usefixtures("isolated")


# --- finding the file ----------------------------------------------------------------------------


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
    assert err.tip == "see docs/configuration.md for every key"


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


# --- through the CLI -----------------------------------------------------------------------------


def test_cli_unknown_key_exits_2_with_the_message(tmp_path, capsys):
    cfg = write(tmp_path / "ragjudge.yml", "endpoint:\n  url: http://127.0.0.1:9/ask\n  timeoutt: 3\n")
    code, out, err = run_cli(capsys, "--config", str(cfg))
    assert code == 2
    assert err == (
        f"ragjudge: error: {cfg}: unknown key 'endpoint.timeoutt'\nTip: see docs/configuration.md for every key\n"
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


# --- YAML a newcomer writes, and YAML no one should ----------------------------------------------


def test_an_unquoted_jinja_body_gets_a_tip_to_quote_it():
    cfg = write(Path("ragjudge.yml"), 'endpoint:\n  body: {"query": {{ question | tojson }}}\n')
    err = config_error(cfg)
    assert err.message == f"{cfg}: invalid YAML (line 2, column 20): found unhashable key"
    assert err.tip == "quote values that hold a Jinja template: body: '{\"question\": {{ question | tojson }}}'"


def test_a_config_nested_thousands_of_levels_deep_is_exit_2_naming_the_file(tmp_path, capsys):

    path = tmp_path / "ragjudge.yml"
    path.write_text("endpoint:\n  headers: " + "[" * 2000 + "]" * 2000 + "\n", encoding="utf-8")
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"ragjudge: error: {path}: nested too deeply to read" in err
