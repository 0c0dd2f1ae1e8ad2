"""Conversations in case files: `turns:` instead of `question:`, validated at the edge, with errors naming the
turn as people count it; the case-level fields apply to every turn and a turn's own category wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.cases.case import Exchange
from ragjudge.cases.caseset import load_cases
from ragjudge.cases.conversations import rehearsal, template_variables
from ragjudge.cases.duplicates import dedupe_key
from ragjudge.errors import CaseFileError
from ragjudge.gate.provenance import case_set_hash


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(CaseFileError) as caught:
        load_cases([path])
    return caught.value.message


CONVERSATION = """\
- id: chat
  category: refunds
  tags: [conversation]
  difficulty: hard
  criteria: [polite]
  turns:
    - question: 我想退货
      golden_context_ids: [doc-1]
    - question: 那运费谁出？
      must_mention: [商家承担]
      criteria: [precise]
    - question: 能帮我订机票吗？
      category: out_of_scope
- id: single
  question: 发票呢？
"""


def test_a_conversation_is_one_case_whose_turns_share_its_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", CONVERSATION)
    chat, single = load_cases([path]).cases
    assert (chat.id, chat.question, chat.is_conversation, single.is_conversation) == ("chat", "我想退货", True, False)
    assert [(t.id, t.turn, t.conversation, t.category, t.should_answer) for t in chat.turns] == [
        ("chat turn 1", 1, "chat", "refunds", True),
        ("chat turn 2", 2, "chat", "refunds", True),
        ("chat turn 3", 3, "chat", "out_of_scope", False),
    ]
    assert [(t.tags, t.difficulty, t.criteria) for t in chat.turns] == [
        (("conversation",), "hard", ("polite",)),
        (("conversation",), "hard", ("polite", "precise")),
        (("conversation",), "hard", ("polite",)),
    ]
    assert chat.turns[1].must_mention == ("商家承担",) and chat.turns[0].golden_context_ids == ("doc-1",)
    assert chat.turns[1].origin == f"{path}:1 turn 2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "- id: c\n  question: q\n  turns:\n    - question: a\n",
            "case 'c': (case): a case has either `question` or `turns`, not both: put the question in a turn",
        ),
        (
            "- id: c\n  must_mention: [x]\n  expected: y\n  turns:\n    - question: a\n",
            "case 'c': (case): expected, must_mention: on a conversation these belong to a turn (under `turns:`), "
            "not to the whole case",
        ),
        ("- id: c\n  turns: []\n", "case 'c': turns: List should have at least 1 item after validation, not 0"),
        (
            "- id: c\n  turns:\n    - question: a\n    - question: ' '\n",
            "case 'c': turn 2: question: question is empty",
        ),
        (
            "- id: c\n  turns:\n    - question: a\n    - answer: b\n",
            "case 'c': turn 2: question: required field is missing; unknown field 'turn 2: answer'",
        ),
    ],
)
def test_a_bad_conversation_names_the_case_and_the_turn(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "c.yaml", text)
    assert _error(path) == f"{path}:1: {message}"


def test_the_template_sees_the_conversation_so_far(tmp_path: Path) -> None:
    chat = load_cases([_write(tmp_path / "c.yaml", CONVERSATION)]).cases[0]
    from dataclasses import replace

    second = replace(chat.turns[1], history=(Exchange("我想退货", "可以退。"),), conversation_id="c-7")
    seen = template_variables(second)
    assert seen["messages"] == [
        {"role": "user", "content": "我想退货"},
        {"role": "assistant", "content": "可以退。"},
        {"role": "user", "content": "那运费谁出？"},
    ]
    assert seen["history"] == seen["messages"][:2]
    assert (seen["turn"], seen["conversation_id"], seen["question"], seen["case"]["id"]) == (
        2,
        "c-7",
        "那运费谁出？",
        "chat",
    )
    first = template_variables(chat.turns[0])
    assert (first["history"], first["turn"], first["conversation_id"]) == ([], 1, None)
    # Before any call every turn is rendered once, with the earlier questions and empty answers standing in.
    assert [len(t.history) for t in rehearsal(chat)] == [0, 1, 2]
    assert rehearsal(chat)[2].history == (Exchange("我想退货", ""), Exchange("那运费谁出？", ""))


def test_duplicates_and_the_case_set_hash_see_every_turn(tmp_path: Path) -> None:
    base = "- id: a\n  turns:\n    - question: 我想退货\n    - question: {second}\n"
    one = load_cases([_write(tmp_path / "a.yaml", base.format(second="那运费谁出？"))]).cases
    two = load_cases([_write(tmp_path / "b.yaml", base.format(second="那发票呢？"))]).cases
    assert dedupe_key(one[0]) != dedupe_key(two[0])
    assert case_set_hash(one) != case_set_hash(two)
    moved = load_cases([_write(tmp_path / "sub.yaml", "\n\n" + base.format(second="那运费谁出？"))]).cases
    assert case_set_hash(moved) == case_set_hash(one)  # where a case was read from is not hashed
    twice = load_cases(
        [_write(tmp_path / "d.yaml", base.format(second="x") + base.format(second="x").replace("id: a", "id: b"))]
    )
    assert any("duplicates the question of case 'a'" in w for w in twice.warnings)


def test_every_turn_keeps_the_conversations_file_and_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "c.yaml",
        "- id: q\n  question: One?\n- id: talk\n  turns:\n    - question: First?\n    - question: And then?\n",
    )
    single, talk = load_cases([path]).cases
    assert (single.file, single.line) == (str(path), 1)
    assert (talk.file, talk.line) == (str(path), 3)
    assert [(t.file, t.line) for t in talk.turns] == [(str(path), 3), (str(path), 3)]
