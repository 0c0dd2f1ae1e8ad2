"""Duplicate questions (`cases.duplicates`): normalised alike, warned about across files."""

from __future__ import annotations

import pytest

from ragjudge.cases.caseset import load_cases
from ragjudge.cases.duplicates import normalize_question
from tests.cases.casefiles import jsonl, write


def test_duplicate_questions_after_normalisation_are_warned_about(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        "- id: a\n  question: How do I get a refund?\n"
        "- id: b\n  question: 退款怎么办？\n"
        "- id: c\n  question: '  how do i GET a refund '\n"
        "- id: d\n  question: 退款 怎么办?\n"
        "- id: e\n  question: How do I get a receipt?\n",
    )
    case_set = load_cases([path])
    assert [c.id for c in case_set.cases] == ["a", "b", "c", "d", "e"]
    hint = "after normalisation; run `ragjudge dedupe` to drop it"
    assert case_set.warnings == (
        f"case 'c' ({path}:5) duplicates the question of case 'a' {hint}",
        f"case 'd' ({path}:7) duplicates the question of case 'b' {hint}",
    )


def test_duplicate_questions_across_files(tmp_path):
    one = write(tmp_path / "one.yaml", "- id: a\n  question: Where is my parcel?\n")
    two = jsonl(tmp_path / "two.jsonl", {"id": "b", "question": "where is my parcel"})
    assert load_cases([one, two]).warnings == (
        f"case 'b' ({two}:1) duplicates the question of case 'a' after normalisation; run `ragjudge dedupe` to drop it",
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Refund?", "refund"),
        ("Re fund", "refund"),
        ("退款\u3000怎么办", "退款怎么办"),
        ("退款\t怎么办\n", "退款怎么办"),
        ("退款？！。，、；：", "退款"),
        ("refund?!.,;:", "refund"),
        ("发票（电子）", "发票电子"),
    ],
)
def test_normalisation_equates(a, b):
    assert normalize_question(a) == normalize_question(b)


@pytest.mark.parametrize(("a", "b"), [("退款", "退货"), ("refund 1", "refund 2"), ("a-b", "ab c")])
def test_normalisation_keeps_different_questions_apart(a, b):
    assert normalize_question(a) != normalize_question(b)


def test_normalised_form():
    assert normalize_question("  How, do I？ Get  a Refund!! ") == "howdoigetarefund"
