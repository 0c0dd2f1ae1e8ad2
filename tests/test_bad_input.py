"""Bad input is refused cheaply (issue 11): exit 2 naming the file and key, never an internal error or a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cli import main

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g", "h"], "abcdefghi", strict=True)
)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text("- {id: a, question: q?}\n", encoding="utf-8")
    return tmp_path


def _config(ws: Path, text: str) -> None:
    (ws / "ragjudge.yml").write_text(text, encoding="utf-8")


def test_the_billion_laughs_config_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Reproduces the probe: this 518-byte-class document ran for 90 s past 1 GB.
    assert len(BOMB) < 600
    _config(ws, BOMB)
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert "ragjudge: error: ragjudge.yml: refused: aliases expand to over 100,000 extra values" in text


def test_a_billion_laughs_case_file_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "bomb.yaml").write_text(BOMB + "cases: [{question: '*i'}]\n", encoding="utf-8")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask", "--cases", "bomb.yaml")
    assert code == 2
    assert "ragjudge: error: bomb.yaml: refused: aliases expand to over 100,000 extra values" in text


def test_a_recursive_alias_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _config(ws, "endpoint: &e {headers: *e}\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert "ragjudge.yml: refused (line 1): an anchor refers to itself (a recursive alias)" in text


@pytest.mark.parametrize("name", ["ragjudge.yml", "deep.yaml", "deep.jsonl"])
def test_deep_nesting_is_exit_2_not_a_recursion_error(ws: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    deep = "[" * 5000 + "]" * 5000
    (ws / name).write_text(deep if name != "ragjudge.yml" else f"gate: {deep}\n", encoding="utf-8")
    args = ["run", "--endpoint", "http://127.0.0.1:9/ask"] + ([] if name == "ragjudge.yml" else ["--cases", name])
    code, text = _run(capsys, *args)
    assert code == 2
    assert f"ragjudge: error: {name}: nested too deeply to read (lists or mappings hundreds of levels deep)" in text
    assert "internal error" not in text


def test_a_case_file_over_the_size_limit_is_exit_2_before_it_is_parsed(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(ws, "max_case_file_bytes: 1000\ncases: [big.yaml]\n")
    (ws / "big.yaml").write_text("- {question: q?}\n" * 100 + "- [unterminated\n", encoding="utf-8")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert "ragjudge: error: " + str(ws / "big.yaml") + ": over 1,000 bytes, the limit for a case file" in text
    assert "max_case_file_bytes" in text


def test_the_default_case_file_limit_is_50_mb(ws: Path) -> None:
    from ragjudge.config.loader import load_config

    _config(ws, "{}\n")
    assert load_config(ws / "ragjudge.yml").max_case_file_bytes == 50_000_000


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        (
            '{X-Key: "a\\r\\nX-Evil: 1"}',
            "endpoint.headers: header 'X-Key': the value contains a line break (CR or LF)",
        ),
        (
            "{X-Key: 令牌}",
            "endpoint.headers: header 'X-Key': the value has a character outside latin-1 at position 1",
        ),
        ('{"X Key": v}', "endpoint.headers: header 'X Key': the name must be letters, digits"),
    ],
)
def test_bad_headers_are_exit_2_naming_the_header(
    ws: Path, capsys: pytest.CaptureFixture[str], headers: str, message: str
) -> None:
    _config(ws, f"endpoint: {{headers: {headers}}}\ncases: [cases.yaml]\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert f"ragjudge: error: ragjudge.yml: {message}" in text


def test_a_header_value_from_the_environment_is_checked_and_not_shown(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", "secret-123\nX-Injected: yes")
    _config(ws, "endpoint: {headers: {Authorization: 'Bearer ${TOKEN}'}}\ncases: [cases.yaml]\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert "header 'Authorization': the value contains a line break" in text and "secret-123" not in text


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("endpoint: {timeout_s: .inf}", "endpoint.timeout_s: Input should be a finite number"),
        ("endpoint: {timeout_s: .nan}", "endpoint.timeout_s: Input should be a finite number"),
        ("endpoint: {timeout_s: 3601}", "endpoint.timeout_s: Input should be less than or equal to 3600"),
        ("endpoint: {timeout_s: 0}", "endpoint.timeout_s: Input should be greater than 0"),
        ("judge: {timeout_s: .inf}", "judge.timeout_s: Input should be a finite number"),
        ("endpoint: {concurrency: 0}", "endpoint.concurrency: Input should be greater than or equal to 1"),
        ("judge: {concurrency: 257}", "judge.concurrency: Input should be less than or equal to 256"),
        ("endpoint: {max_response_bytes: .inf}", "endpoint.max_response_bytes: Input should be a finite number"),
        ("max_case_file_bytes: -1", "max_case_file_bytes: Input should be greater than 0"),
        ("judge: {escalate: {model: m, band: .inf}}", "judge.escalate.band: Input should be a finite number"),
        ("judge: {prices: {m: {input_per_mtok: .nan}}}", "judge.prices.m.input_per_mtok: Input should be a finite"),
        ("judge: {max_passages: 0}", "judge.max_passages: Input should be greater than or equal to 1"),
    ],
)
def test_numbers_are_bounded_at_load_naming_the_key(
    ws: Path, capsys: pytest.CaptureFixture[str], yaml_text: str, message: str
) -> None:
    _config(ws, yaml_text + "\ncases: [cases.yaml]\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert f"ragjudge: error: ragjudge.yml: {message}" in text


@pytest.mark.parametrize("template", ["/proc/self/environ", "/dev/zero", "/etc/hostname"])
def test_a_config_template_outside_the_repository_is_exit_2(
    ws: Path, capsys: pytest.CaptureFixture[str], template: str
) -> None:
    # A pull request can edit ragjudge.yml: `template: /proc/self/environ` would publish the job's secrets.
    _config(ws, f"template: {template}\ncases: [cases.yaml]\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask", "--comment-file", "c.md")
    assert code == 2
    assert f"ragjudge: error: ragjudge.yml: template: {template}: refused" in text
    assert not (ws / "c.md").exists()


def test_a_config_template_linking_outside_the_repository_is_exit_2(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "t.md.j2").symlink_to("/proc/self/environ")
    _config(ws, "template: t.md.j2\ncases: [cases.yaml]\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask", "--comment-file", "c.md")
    assert code == 2
    assert "template: " + str(ws / "t.md.j2") + ": refused: not a template file (a system path)" in text


def test_a_command_line_template_may_be_anywhere_but_not_a_pseudo_file(
    ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "t.md.j2"
    elsewhere.write_text("verdict {{ verdict }}\n", encoding="utf-8")
    from ragjudge.report.markdown import load_template

    assert load_template(elsewhere) == "verdict {{ verdict }}\n"
    from ragjudge.errors import ConfigError

    with pytest.raises(ConfigError, match=r"template: /proc/self/environ: refused: not a template file"):
        load_template(Path("/proc/self/environ"))


# --- newcomer mistakes: pydantic's wording replaced by what to write ------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "message", "tip"),
    [
        (
            "gate: {suite: {pass_rate: 0.9}}\ncases: [cases.yaml]",
            "gate.suite.pass_rate: a rule is a comparison in quotes, not a bare number",
            'write pass_rate: ">= 0.9" (quoted)',
        ),
        (
            "gate: {case: {latency_ms: 3000}}\ncases: [cases.yaml]",
            "gate.case.latency_ms: a rule is a comparison in quotes, not a bare number",
            'write latency_ms: "<= 3000" (quoted)',
        ),
        (
            "cases: cases.yaml",
            "cases: a list of case files is expected, not a single path",
            "write it as a list, even of one file: cases: [cases.yaml]",
        ),
        (
            "cases: [{id: a, question: q}]",
            "cases.0: a case file's path is expected: cases are not written inline in ragjudge.yml",
            "put the cases in a file of their own (cases.yaml, a YAML list) and name it: cases: [cases.yaml]",
        ),
        (
            "gate: {suite: {context_recall: '>= 1.0'}}\ncases: [cases.yaml]",
            "gate.suite.context_recall: context_recall is a case metric, not a suite one",
            "move the rule under gate.case: each case must meet it, and the suite's pass_rate counts the cases "
            "that did",
        ),
        (
            "gate: {case: {pass_rate: '>= 0.9'}}\ncases: [cases.yaml]",
            "gate.case.pass_rate: pass_rate is a suite metric, not a case one",
            "move the rule under gate.suite: it is checked once, on the figure of the whole suite",
        ),
    ],
)
def test_a_newcomer_mistake_in_the_config_names_the_fix(
    ws: Path, capsys: pytest.CaptureFixture[str], yaml_text: str, message: str, tip: str
) -> None:
    _config(ws, yaml_text + "\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert text == f"ragjudge: error: ragjudge.yml: {message}\nTip: {tip}\n"


def test_a_cases_path_written_from_the_working_directory_names_the_config_relative_one(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "ci").mkdir()
    (ws / "ci" / "ragjudge.yml").write_text("cases: [cases.yaml]\n", encoding="utf-8")
    code, text = _run(capsys, "run", "--config", "ci/ragjudge.yml", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert text == (
        f"ragjudge: error: {ws / 'ci' / 'cases.yaml'}: file not found\n"
        f"Tip: `cases:` paths are relative to the config file's folder ({ws / 'ci'}), not the working "
        "directory: write ../cases.yaml\n"
    )


def test_a_cases_path_missing_everywhere_keeps_the_plain_tip(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "ci").mkdir()
    (ws / "ci" / "ragjudge.yml").write_text("cases: [nope.yaml]\n", encoding="utf-8")
    code, text = _run(capsys, "run", "--config", "ci/ragjudge.yml", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert text.endswith("nope.yaml: file not found\nTip: check the path in `cases:` or --cases\n")


@pytest.mark.parametrize(
    ("yaml_text", "where", "tip"),
    [
        (
            "gate:\n  suite:\n    pass_rate: >= 0.9\n",
            "(line 3, column 17): expected chomping or indentation indicators, but found '='",
            'pass_rate: ">= 0.9"',
        ),
        (
            "gate: {suite: {faithfulness: '>= 0.8', pass_rate: > 0.9}}\n",
            "(line 1, column 51): found character '>' that cannot start any token",
            'pass_rate: "> 0.9"',
        ),
    ],
)
def test_an_unquoted_floor_rule_says_to_quote_it(
    ws: Path, capsys: pytest.CaptureFixture[str], yaml_text: str, where: str, tip: str
) -> None:
    _config(ws, yaml_text)
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask", "--cases", "cases.yaml")
    assert code == 2
    tip_line = f'Tip: quote a rule that starts with ">": {tip}\n'
    assert text == f"ragjudge: error: ragjudge.yml: invalid YAML {where}\n" + tip_line


def test_a_config_block_given_twice_is_exit_2_naming_the_key(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 40 item 14: `gate:` twice silently dropped the first block's rules.
    _config(ws, "cases: [cases.yaml]\ngate:\n  pass_rate: '>= 0.9'\ngate:\n  max_error_rate: 0.5\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert (
        "ragjudge: error: ragjudge.yml: refused (line 4): key 'gate' is given twice in one mapping (first at line 2); "
        "YAML would keep the last without a word\nTip: give each key once: merge the two blocks into one"
    ) in text


def test_a_case_with_a_field_given_twice_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "cases.yaml").write_text("- id: a\n  question: q?\n  question: other?\n", encoding="utf-8")
    code, text = _run(capsys, "cases", "stats", "cases.yaml")
    assert code == 2
    assert (
        "ragjudge: error: cases.yaml:3: refused: key 'question' is given twice in one mapping (first at line 2)" in text
    )


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\t"])
def test_a_case_id_holding_a_line_break_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str], brk: str) -> None:
    # Issue 40 item 15: such an id became several ids in the Action's `failed-case-ids`.
    import json

    (ws / "cases.jsonl").write_text(json.dumps({"id": f"a{brk}b", "question": "q?"}) + "\n", encoding="utf-8")
    code, text = _run(capsys, "cases", "stats", "cases.jsonl")
    assert code == 2
    assert "ragjudge: error: cases.jsonl:1: " in text
    assert "id: an id is one line; this one holds a line break or a tab" in text


def test_rejudge_true_is_exit_2_not_one_rejudge(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 40 item 16: booleans are not counts.
    _config(ws, "cases: [cases.yaml]\njudge:\n  rejudge: true\n")
    code, text = _run(capsys, "run", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2
    assert "ragjudge.yml" in text and "judge.rejudge" in text and "a number is expected, not true" in text


def test_a_config_that_is_a_fifo_or_huge_is_exit_2_at_once(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 40: the config is a repository file like the others, read through the one bounded reader.
    import os

    os.mkfifo(ws / "pipe.yml")
    code, text = _run(capsys, "run", "--config", "pipe.yml", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2 and "ragjudge: error: pipe.yml: refused: a FIFO (named pipe), not a file" in text
    (ws / "zero.yml").symlink_to("/dev/zero")
    code, text = _run(capsys, "run", "--config", "zero.yml", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2 and "ragjudge: error: zero.yml: refused: a device, not a file" in text
    (ws / "big.yml").write_text("# " + "x" * 1_000_000 + "\n", encoding="utf-8")
    code, text = _run(capsys, "run", "--config", "big.yml", "--endpoint", "http://127.0.0.1:9/ask")
    assert code == 2 and "ragjudge: error: big.yml: over 1,000,000 bytes, more than any config" in text
