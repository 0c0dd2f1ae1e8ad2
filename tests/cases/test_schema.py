"""A case's fields as written (`cases.schema`): the seeds' spellings, the values each field takes, and errors
naming the case and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cases.caseset import load_cases
from tests.cases.casefiles import jsonl, load_error, write


def test_camel_case_spellings_of_the_seeds(tmp_path):
    path = jsonl(
        tmp_path / "seed.jsonl",
        {
            "id": "cs-002",
            "question": "耳机用了 5 天发现有问题能退吗？",
            "goldenContextIds": ["doc-refund-1"],
            "mustMention": ["订单号"],
            "mustNotMention": ["不能退"],
            "shouldAnswer": False,
        },
    )
    case = load_cases([path]).cases[0]
    assert case.golden_context_ids == ("doc-refund-1",)
    assert case.must_mention == ("订单号",)
    assert case.must_not_mention == ("不能退",)
    assert case.should_answer is False


def test_numeric_id_becomes_text(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: 7\n  question: q\n")
    assert load_cases([path]).cases[0].id == "7"


def test_case_without_a_question_by_id(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q1\n- id: b\n  expected: an answer\n")
    err = load_error(path)
    assert err.message == f"{path}:3: case 'b': question: required field is missing"
    assert err.tip is not None and err.tip.startswith("fields are id, question, expected, golden_context_ids")


def test_case_without_a_question_or_id_is_named_by_index(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q1\n- expected: an answer\n  tags: [x]\n")
    assert load_error(path).message == f"{path}:3: case #2: question: required field is missing"


def test_jsonl_case_without_a_question(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "question": "q"}, {"expected": "x"})
    assert load_error(path).message == f"{path}:2: case #2: question: required field is missing"


def test_blank_question(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: '   '\n")
    assert load_error(path).message == f"{path}:1: case 'a': question: question is empty"


def test_unknown_field(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n- id: b\n  question: q2\n  mustmention: [x]\n")
    assert load_error(path).message == f"{path}:3: case 'b': unknown field 'mustmention'"


def test_unknown_field_in_jsonl_together_with_a_missing_question(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "qestion": "typo"})
    assert load_error(path).message == (
        f"{path}:1: case 'a': question: required field is missing; unknown field 'qestion'"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("  source: web\n", "source: Input should be 'public', 'human', 'reflow' or 'synthetic'"),
        ("  difficulty: extreme\n", "difficulty: Input should be 'easy', 'medium' or 'hard'"),
        ("  tags: refund\n", "tags: a list is expected, not a single text"),
        ("  should_answer: perhaps\n", "should_answer: Input should be a valid boolean, unable to interpret input"),
        ("  golden_context_ids: [[a]]\n", "golden_context_ids.0: Input should be a valid string"),
    ],
)
def test_bad_field_values_name_the_field(tmp_path, line, message):
    path = write(tmp_path / "c.yaml", "- id: 9\n  question: q\n" + line)
    assert load_error(path).message == f"{path}:1: case '9': {message}"


def test_item_that_is_not_a_mapping(tmp_path):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n- just a question?\n")
    assert load_error(path).message == f"{path}:3: case #2: expected a mapping of fields, found str"


@pytest.mark.parametrize(
    ("line", "message", "tip"),
    [
        (
            "  golden_context_ids: doc-1\n",
            "golden_context_ids: a list is expected, not a single text",
            'write it as a list, even of one: golden_context_ids: ["doc-1"]',
        ),
        (
            "  must_mention: refund\n",
            "must_mention: a list is expected, not a single text",
            'write it as a list, even of one: must_mention: ["refund"]',
        ),
        (
            "  mustNotMention: 退款\n",
            "mustNotMention: a list is expected, not a single text",
            'write it as a list, even of one: mustNotMention: ["退款"]',
        ),
    ],
)
def test_a_text_where_a_list_belongs_names_the_fix(tmp_path: Path, line: str, message: str, tip: str) -> None:
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n" + line)
    error = load_error(path)
    assert (error.message, error.tip) == (f"{path}:1: case 'a': {message}", tip)


def test_a_text_where_a_list_belongs_in_jsonl_names_the_fix(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "question": "q", "golden_context_ids": "doc-1"})
    error = load_error(path)
    assert error.message == f"{path}:1: case 'a': golden_context_ids: a list is expected, not a single text"
    assert error.tip == 'write it as a list, even of one: golden_context_ids: ["doc-1"]'
