"""Labels files: validation with file:line and field (tests/calibrate/test_judging.py: the judge's score)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragjudge.calibrate.labels import check_given_scores, is_binary, load_labels
from ragjudge.errors import CaseFileError


def _write(tmp_path: Path, *rows: Any, name: str = "labels.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows))
    return path


def _error(path: Path) -> str:
    with pytest.raises(CaseFileError) as err:
        load_labels(path)
    return str(err.value)


# --- reading ----------------------------------------------------------------------------------------


def test_judge_and_seed_002s_judgeScore_are_both_read(tmp_path: Path) -> None:
    path = _write(tmp_path, {"id": "a", "human": 1, "judge": 1}, {"id": 7, "human": 0, "judgeScore": 0.25})
    labels = load_labels(path)
    assert [(x.id, x.human, x.judge) for x in labels] == [("a", 1, 1.0), ("7", 0, 0.25)]
    assert labels[1].where == f"{path}:2"


def test_an_item_without_a_judge_score_carries_what_the_judge_needs(tmp_path: Path) -> None:
    row = {"id": "q", "human": 1, "question": "Q?", "answer": "A.", "contexts": ["c1", "c2"], "claim": "C."}
    (label,) = load_labels(_write(tmp_path, row))
    assert (label.judge, label.contexts, label.claim) == (None, ("c1", "c2"), "C.")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "a", "human": "yes", "judge": 1}, "field 'human': must be 0 or 1, or an integer score from 0 to 5"),
        ({"id": "a", "human": 7, "judge": 1}, "(got 7)"),
        ({"id": "a", "human": True, "judge": 1}, "field 'human'"),
        ({"id": "a", "human": 1.5, "judge": 1}, "field 'human'"),
        ({"id": "a", "judge": 1}, "field 'human': required field is missing"),
        ({"human": 1, "judge": 1}, "field 'id': required field is missing"),
        ({"id": " ", "human": 1, "judge": 1}, "field 'id': id is empty"),
        ({"id": "a", "human": 1, "judge": "high"}, "field 'judge': must be a number (got 'high')"),
        ({"id": "a", "human": 1, "judgeScore": True}, "field 'judgeScore': must be a number"),
        ({"id": "a", "human": 1, "judge": 1, "judge_score": 1}, "unknown field 'judge_score'"),
        ({"id": "a", "human": 1, "judge": 1, "judgeScore": 1}, "give `judge` or `judgeScore`, not both"),
        ({"id": "a", "human": 1, "contexts": "c"}, "field 'contexts'"),
        (
            {"id": "a", "human": 1},
            "label 'a' has no judge score (`judge` or `judgeScore`) and no question, answer, contexts",
        ),
        ({"id": "a", "human": 1, "question": "Q?", "contexts": []}, "and no answer, contexts to ask the judge with"),
    ],
)
def test_bad_items_name_the_line_and_the_field(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    path = _write(tmp_path, {"id": "ok", "human": 1, "judge": 1}, row)
    text = _error(path)
    assert text.startswith(f"{path}:2: ") and message in text


def test_file_level_errors(tmp_path: Path) -> None:
    assert _error(_write(tmp_path, "{not json")).startswith(f"{tmp_path / 'labels.jsonl'}:1: invalid JSON")
    assert _error(_write(tmp_path, "[1, 2]")).endswith(":1: expected a JSON object, found list")
    dup = _write(tmp_path, {"id": "a", "human": 1, "judge": 1}, {"id": "a", "human": 0, "judge": 0})
    assert _error(dup) == f"{dup}:2: duplicate id 'a' (first used at {dup}:1)"
    assert _error(_write(tmp_path, "")).endswith(": no labels")
    assert _error(tmp_path / "absent.jsonl").endswith("absent.jsonl: file not found")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"id": "\xe9", "human": 1, "judge": 1}\n')
    assert "not UTF-8" in _error(tmp_path / "latin1.jsonl")


def test_the_scale_is_binary_only_when_every_human_label_is_0_or_1(tmp_path: Path) -> None:
    binary = load_labels(_write(tmp_path, {"id": "a", "human": 1, "judge": 1}, {"id": "b", "human": 0, "judge": 0}))
    ordinal = load_labels(_write(tmp_path, {"id": "a", "human": 1, "judge": 1}, {"id": "b", "human": 4, "judge": 5}))
    assert is_binary(binary) and not is_binary(ordinal)


def test_binary_labels_need_judge_scores_between_0_and_1(tmp_path: Path) -> None:
    path = _write(tmp_path, {"id": "a", "human": 1, "judge": 1}, {"id": "b", "human": 0, "judge": 4})
    with pytest.raises(CaseFileError) as err:
        check_given_scores(load_labels(path), binary=True)
    assert str(err.value) == (
        f"{path}:2: label 'b': judge score 4 is not between 0 and 1, but the human labels are binary (0/1)"
    )


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('{"id": "a", "human": 0, "human": 1, "judge": 1}', "human"),
        ('{"id": "a", "human": 1, "judge": 0.2, "judgeScore": 0.9, "judge": 0.9}', "judge"),
        ('{"id": "a", "human": 1, "judge": 1, "criteria": {"polite": 2, "polite": 5}}', "criteria.polite"),
    ],
)
def test_a_key_given_twice_on_a_line_is_an_error_naming_the_line_and_the_key(
    tmp_path: Path, line: str, key: str
) -> None:
    path = _write(tmp_path, {"id": "z", "human": 1, "judge": 1}, line)
    assert _error(path) == (
        f"{path}:2: key {key!r} is given twice in one object (a JSON reader keeps the last without a word)"
    )


def test_a_yaml_label_giving_a_key_twice_is_refused(tmp_path: Path) -> None:
    # Issue 40 item 14: YAML kept the last of two equal keys; a label `human: 0 ... human: 1` said the opposite.
    path = tmp_path / "labels.yaml"
    path.write_text("- id: a\n  human: 0\n  question: q?\n  human: 1\n", encoding="utf-8")
    assert _error(path) == (
        f"{path}:4: refused: key 'human' is given twice in one mapping (first at line 2); YAML would keep the last "
        "without a word"
    )
