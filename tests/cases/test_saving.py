"""Writing cases back (`cases.writing`): appended as text where the file's list ends, read back through the
loader before anything is written, and refused rather than written wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ragjudge.cases.caseset import load_cases
from ragjudge.cases.saving import Addition, append, open_target, write_cases
from ragjudge.errors import UsageError

NEW = Addition({"id": "new", "question": "New?", "expected": "No", "category": "on"}, "added by the test")


def appended(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    append(open_target(path), [NEW])
    return path.read_text(encoding="utf-8")


def test_a_missing_file_is_created_with_the_case(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.yaml"
    append(open_target(path), [NEW])
    assert path.read_text(encoding="utf-8") == (
        "# added by the test\n- id: new\n  question: New?\n  expected: 'No'\n  category: 'on'\n"
    )


def test_a_flow_list_with_a_trailing_comma_takes_no_second_one(tmp_path: Path) -> None:
    text = appended(tmp_path / "c.yaml", '[\n  {id: a, question: "Old?"},  # a comment, with a comma\n]\n')
    assert text.startswith('[\n  {id: a, question: "Old?"},  # a comment, with a comma\n\n# added by the test\n{"id"')
    assert [(c.id, c.expected, c.category) for c in load_cases([tmp_path / "c.yaml"]).cases] == [
        ("a", None, None),
        ("new", "No", "on"),
    ]


def test_an_empty_flow_list_takes_the_case_inside_its_brackets(tmp_path: Path) -> None:
    assert appended(tmp_path / "c.yaml", "[]\n") == (
        '[\n# added by the test\n{"id": "new", "question": "New?", "expected": "No", "category": "on"}\n]\n'
    )


def test_a_kept_block_scalar_does_not_gain_a_line(tmp_path: Path) -> None:
    old = "- id: a\n  question: Old?\n  expected: |+\n    text\n\n"
    text = appended(tmp_path / "c.yaml", old)
    assert text.startswith(old + "# added by the test\n")
    assert [c.expected for c in load_cases([tmp_path / "c.yaml"]).cases] == ["text\n\n", "No"]


def test_jsonl_gets_one_line_a_case_and_no_comment(tmp_path: Path) -> None:
    text = appended(tmp_path / "c.jsonl", '{"id": "a", "question": "Old?"}')
    assert text == (
        '{"id": "a", "question": "Old?"}\n{"id": "new", "question": "New?", "expected": "No", "category": "on"}\n'
    )


def test_a_file_the_case_cannot_be_appended_to_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("null\n", encoding="utf-8")
    with pytest.raises(UsageError) as refused:
        append(open_target(path), [NEW])
    assert refused.value.message == f"{path}: the new cases cannot be appended to this file's list without rewriting it"
    assert path.read_text(encoding="utf-8") == "null\n"


def test_a_mapping_is_not_a_list_to_append_to(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("cases:\n  - id: a\n    question: Old?\n", encoding="utf-8")
    with pytest.raises(UsageError) as refused:
        open_target(path)
    assert refused.value.message == f"{path}: stubs are appended to a top-level YAML list, and this file is a dict"


def test_written_whole_the_texts_stay_texts(tmp_path: Path) -> None:
    path = tmp_path / "kept.yaml"
    write_cases(path, [{"id": "a", "question": "Yes", "expected": "no"}], jsonl=False)
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == [{"id": "a", "question": "Yes", "expected": "no"}]
