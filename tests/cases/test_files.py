"""Reading a case file (`cases.files`): YAML 1.2 or JSONL by the name, with line numbers, and errors that
name the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.cases.caseset import load_cases
from ragjudge.errors import CaseFileError
from tests.cases.casefiles import jsonl, load_error, write


def test_jsonl_with_blank_lines_keeps_line_numbers(tmp_path):
    path = write(
        tmp_path / "cases.jsonl",
        '{"id": "a", "question": "How long do refunds take?"}\n'
        "\n"
        '{"id": "b", "question": "Where is my parcel?", "golden_context_ids": ["doc-ship-1"]}\n',
    )
    a, b = load_cases([path]).cases
    assert (a.id, a.origin) == ("a", f"{path}:1")
    assert (b.id, b.origin, b.golden_context_ids) == ("b", f"{path}:3", ("doc-ship-1",))


def test_a_jsonl_case_with_a_key_given_twice_is_an_error_naming_the_line_and_the_path(tmp_path):
    path = write(
        tmp_path / "cases.jsonl",
        '{"id": "a", "question": "q"}\n'
        '{"id": "b", "turns": [{"question": "t1"}, {"question": "t2", "expected": "x", "expected": "y"}]}\n',
    )
    with pytest.raises(CaseFileError) as raised:
        load_cases([path])
    assert raised.value.message == (
        f"{path}:2: key 'turns.1.expected' is given twice in one object (a JSON reader keeps the last without a word)"
    )
    assert raised.value.tip == "give each key once"


def test_ndjson_suffix_is_jsonl(tmp_path):
    path = jsonl(tmp_path / "cases.ndjson", {"id": "n1", "question": "q"})
    assert [c.id for c in load_cases([path]).cases] == ["n1"]


def test_yaml_mapping_with_a_cases_list(tmp_path):
    path = write(
        tmp_path / "suite.yaml", "version: 1\ncases:\n  - id: a\n    question: q1\n  - id: b\n    question: q2\n"
    )
    cases = load_cases([path]).cases
    assert [(c.id, c.origin) for c in cases] == [("a", f"{path}:3"), ("b", f"{path}:5")]


def test_utf8_with_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + "- id: a\n  question: 发票\n".encode())
    assert load_cases([path]).cases[0].question == "发票"


def test_file_that_is_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("- id: a\n  question: café au lait?\n".encode("latin-1"))
    err = load_error(path)
    assert err.message == f"{path}:2: not UTF-8 (invalid byte at offset 23)"
    assert err.tip == "re-save the file as UTF-8"


def test_jsonl_that_is_not_utf8(tmp_path):
    path = tmp_path / "gbk.jsonl"
    path.write_bytes(b'{"id": "a", "question": "ok"}\n' + '{"id": "b", "question": "退款"}\n'.encode("gbk"))
    assert load_error(path).message == f"{path}:2: not UTF-8 (invalid byte at offset 55)"


def test_missing_file(tmp_path):
    err = load_error(tmp_path / "nope.yaml")
    assert err.message == f"{tmp_path / 'nope.yaml'}: file not found"


def test_file_that_is_not_a_list(tmp_path):
    path = write(tmp_path / "c.yaml", "id: a\nquestion: q\n")
    assert load_error(path).message == f"{path}: expected a list of cases, found dict"


def test_invalid_yaml_names_the_line(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: [unclosed\n- id: b\n")
    assert load_error(path).message == f"{path}:3: invalid YAML: expected ',' or ']', but got ':'"


def test_invalid_json_line(tmp_path):
    path = write(tmp_path / "c.jsonl", '{"id": "a", "question": "q"}\n{"id": "b", question: "q"}\n')
    assert load_error(path).message == f"{path}:2: invalid JSON: Expecting property name enclosed in double quotes"


def test_yaml_1_2_booleans_keep_yes_no_and_on_as_text(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        "- id: a\n  question: Yes\n  expected: No\n  category: on\n  tags: [off, y, n]\n  should_answer: true\n"
        "- id: b\n  question: Is it free?\n  should_answer: False\n",
    )
    first, second = load_cases([path]).cases
    assert (first.question, first.expected, first.category, first.tags) == ("Yes", "No", "on", ("off", "y", "n"))
    assert (first.should_answer, second.should_answer) == (True, False)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.yaml", "- id: a\n  question: " + "[" * 2000 + "]" * 2000 + "\n"),
        ("deep.jsonl", '{"id": "a", "question": ' + "[" * 2000 + "]" * 2000 + "}\n"),
    ],
)
def test_a_case_file_nested_thousands_of_levels_deep_is_a_case_file_error(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFileError) as refused:
        load_cases([path])
    assert refused.value.message == f"{path}: nested too deeply to read (lists or mappings hundreds of levels deep)"
    assert refused.value.exit_code == 2


@pytest.mark.parametrize("lines", [1, 3])
def test_json_lines_in_a_yaml_file_says_to_rename_it(tmp_path: Path, lines: int) -> None:
    items = [{"id": f"c{i}", "question": f"q{i}?"} for i in range(lines)]
    path = write(tmp_path / "cases.yaml", "".join(json.dumps(i) + "\n\n" for i in items))
    error = load_error(path)
    assert error.message == f"{path}: JSON Lines content (one JSON object per line) in a file named .yaml"
    assert error.tip == (
        "rename it to cases.jsonl: a case file is read as JSONL by its name (.jsonl, .ndjson), as a YAML list otherwise"
    )


def test_one_case_not_written_as_a_list_item_names_the_fix(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "id: a\nquestion: q\n")
    error = load_error(path)
    assert (error.message, error.tip) == (
        f"{path}: expected a list of cases, found dict",
        "start each case with `- ` (a YAML list item), or list them under `cases:`",
    )
