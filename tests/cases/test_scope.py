"""What a category says about a case (`cases.scope`): out-of-scope spellings are to be declined, and a look-alike
is warned about."""

from __future__ import annotations

import pytest

from ragjudge.cases.caseset import load_cases
from tests.cases.casefiles import jsonl, write


@pytest.mark.parametrize(
    ("fields", "should_answer"),
    [
        ({}, True),
        ({"category": "退款"}, True),
        ({"category": "out_of_scope"}, False),
        ({"category": "超纲"}, False),
        ({"category": "Out-Of-Scope"}, False),
        ({"category": "out of scope"}, False),
        ({"category": " OOS "}, False),
        ({"category": "超出范围"}, False),
        ({"category": "OUT_OF_SCOPE", "should_answer": True}, True),
        ({"category": "超纲", "should_answer": True}, True),
        ({"category": "退款", "shouldAnswer": False}, False),
    ],
)
def test_should_answer_follows_the_category_unless_given(tmp_path, fields, should_answer):
    path = jsonl(tmp_path / "c.jsonl", {"id": "x", "question": "q", **fields})
    assert load_cases([path]).cases[0].should_answer is should_answer


def test_a_category_that_looks_out_of_scope_but_is_not_recognised_is_a_warning(tmp_path):
    path = write(
        tmp_path / "c.yaml",
        "- {id: a, question: q1, category: outofscope}\n"
        "- {id: b, question: q2, category: 超纲题}\n"
        "- {id: c, question: q3, category: out-scope, should_answer: false}\n"
        "- {id: d, question: q4, category: refunds}\n",
    )
    loaded = load_cases([path])
    assert [c.should_answer for c in loaded.cases] == [True, True, False, True]
    assert loaded.warnings == (
        f"case 'a' ({path}:1): category 'outofscope' looks like out-of-scope but is not a recognised spelling, "
        "so the case is expected to be answered; write out_of_scope (or set should_answer: false)",
        f"case 'b' ({path}:2): category '超纲题' looks like out-of-scope but is not a recognised spelling, "
        "so the case is expected to be answered; write out_of_scope (or set should_answer: false)",
    )
