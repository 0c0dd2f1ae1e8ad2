"""The case set (`cases.caseset`): files in order, ids unique across them, an empty set refused, and bad case
files as exit 2 through the CLI."""

from __future__ import annotations

import pytest

from ragjudge.cases.caseset import load_cases
from ragjudge.cli import main
from tests.cases.casefiles import jsonl, load_error, write


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    # The CLI reads ./ragjudge.yml when present: keep the working directory empty.
    monkeypatch.chdir(tmp_path)


def test_several_files_in_order(tmp_path):
    one = write(tmp_path / "one.yaml", "- id: a\n  question: q1\n")
    two = jsonl(tmp_path / "two.jsonl", {"id": "b", "question": "q2"})
    assert [c.id for c in load_cases([one, two]).cases] == ["a", "b"]


def test_case_without_id_gets_one_from_file_and_position(tmp_path):
    path = write(tmp_path / "anchors.yaml", "- id: a\n  question: q1\n- question: q2\n")
    assert [c.id for c in load_cases([path]).cases] == ["a", "anchors-2"]


@pytest.mark.parametrize(
    ("name", "text"), [("e.yaml", ""), ("e.yaml", "[]\n"), ("e.yaml", "# nothing yet\n"), ("e.jsonl", "\n\n")]
)
def test_empty_case_set(tmp_path, name, text):
    path = write(tmp_path / name, text)
    err = load_error(path)
    assert err.message == f"{path}: the case set is empty"
    assert err.tip == "add at least one case with a question"


def test_empty_case_set_over_several_files_names_them_all(tmp_path):
    a = write(tmp_path / "a.yaml", "")
    b = write(tmp_path / "b.jsonl", "")
    assert load_error(a, b).message == f"{a}, {b}: the case set is empty"


def test_no_case_files_at_all():
    err = load_error()
    assert err.message == "no case files given"
    assert err.tip == "set `cases:` in ragjudge.yml or pass --cases FILE"


def test_duplicate_id_names_both_places(tmp_path):
    path = write(
        tmp_path / "c.yaml", "- id: cs-1\n  question: q1\n\n- id: cs-2\n  question: q2\n- id: cs-1\n  question: q3\n"
    )
    err = load_error(path)
    assert err.message == f"{path}:6: case 'cs-1': duplicate id (first used at {path}:1)"
    assert err.tip == "give every case its own id"


def test_duplicate_id_across_files(tmp_path):
    one = write(tmp_path / "one.yaml", "- id: cs-1\n  question: q1\n")
    two = jsonl(tmp_path / "two.jsonl", {"id": "x", "question": "q"}, {"id": "cs-1", "question": "q2"})
    assert load_error(one, two).message == f"{two}:2: case 'cs-1': duplicate id (first used at {one}:1)"


def test_generated_id_that_collides_with_a_given_one(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: c-2\n  question: q1\n- question: q2\n")
    assert load_error(path).message == f"{path}:3: case 'c-2': duplicate id (first used at {path}:1)"


BAD_FILES = {
    "not_utf8": (b"- id: a\n  question: caf\xe9\n", "bad.yaml", "{p}:2: not UTF-8 (invalid byte at offset 23)"),
    "empty": (b"[]\n", "bad.yaml", "{p}: the case set is empty"),
    "duplicate_id": (
        b"- id: a\n  question: q1\n- id: a\n  question: q2\n",
        "bad.yaml",
        "{p}:3: case 'a': duplicate id (first used at {p}:1)",
    ),
    "no_question": (b"- id: a\n  expected: x\n", "bad.yaml", "{p}:1: case 'a': question: required field is missing"),
    "unknown_field": (
        b'{"id": "a", "question": "q", "colour": "red"}\n',
        "bad.jsonl",
        "{p}:1: case 'a': unknown field 'colour'",
    ),
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_cli_exits_2_for_bad_case_files_without_a_traceback(tmp_path, capsys, kind, closed_url):
    data, name, message = BAD_FILES[kind]
    path = tmp_path / name
    path.write_bytes(data)
    code = main(["run", "--endpoint", closed_url, "--cases", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.splitlines()[0] == "ragjudge: error: " + message.format(p=path)
    assert err.splitlines()[1].startswith("Tip: ")
    assert "Traceback" not in err
    assert out == ""


def test_cli_case_file_from_the_config_resolves_next_to_it(tmp_path, capsys, closed_url):
    conf = tmp_path / "conf"
    (conf / "cases").mkdir(parents=True)
    (conf / "cases" / "anchors.yaml").write_text("- id: a\n  question: q\n  colour: red\n", encoding="utf-8")
    write(conf / "ragjudge.yml", f"endpoint:\n  url: {closed_url}\ncases: [cases/anchors.yaml]\n")
    code = main(["run", "--config", str(conf / "ragjudge.yml")])
    _, err = capsys.readouterr()
    assert code == 2
    assert (
        err.splitlines()[0]
        == f"ragjudge: error: {conf.resolve() / 'cases' / 'anchors.yaml'}:1: case 'a': unknown field 'colour'"
    )


@pytest.fixture
def closed_url() -> str:
    # Never called: bad case files are reported before the endpoint is.
    return "http://127.0.0.1:9/ask"
