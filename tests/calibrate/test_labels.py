"""Labels files: validation with file:line and field, and the judge's score for unscored items."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.judge.fake_evidence import KEY, by_marker, evidence_responder, other_judges, passage

from ragjudge.calibrate.labels import (
    DEFAULT_FAITHFULNESS,
    Label,
    check_given_scores,
    faithfulness_rule,
    is_binary,
    load_labels,
    require_openai,
    score_labels,
    to_binary,
)
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.config.loader import parse_config
from ragjudge.config.model import Config
from ragjudge.errors import CaseFileError, ConfigError
from ragjudge.judge.evidence import EvidenceScorer
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import Judge
from ragjudge.rules import Rule


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


# --- mapping to the human scale ---------------------------------------------------------------------


def test_faithfulness_rule_comes_from_gate_case_with_a_default() -> None:
    assert faithfulness_rule(Config()) == DEFAULT_FAITHFULNESS == Rule("case", "faithfulness", ">=", 0.8)
    config = parse_config({"gate": {"case": {"faithfulness": "> 0.5"}}}, "t", Path("."))
    assert faithfulness_rule(config) == Rule("case", "faithfulness", ">", 0.5)


@pytest.mark.parametrize(("value", "expected"), [(0, 0.0), (1, 1.0), (0.8, 1.0), (0.79, 0.0), (0.95, 1.0)])
def test_to_binary_keeps_0_and_1_and_thresholds_fractions(value: float, expected: float) -> None:
    assert to_binary(value, DEFAULT_FAITHFULNESS) == expected


# --- asking the judge -------------------------------------------------------------------------------


def _label(i: int, human: int, answer: str, contexts: tuple[str, ...], claim: str | None = None) -> Label:
    return Label(f"l{i}", human, None, "What is the policy?", answer, contexts, claim, f"f:{i}")


def _log(entries: list[tuple[str, dict[str, Any]]]) -> Any:
    return lambda label_id, fields: entries.append((label_id, fields))


def test_binary_items_are_scored_by_the_offline_judges_faithfulness() -> None:
    ctx = ("Refunds are paid back to the original card within five working days.",)
    labels = [
        _label(0, 1, "Refunds are paid back to the original card within five working days.", ctx),
        _label(1, 0, "Shipping to Mars costs nothing at all on weekends.", ctx),
        # The claim, when given, is what is checked, not the answer.
        _label(2, 1, "Shipping to Mars costs nothing.", ctx, claim="Refunds are paid back to the original card."),
    ]
    judge = OfflineFactory()
    entries: list[tuple[str, dict[str, Any]]] = []
    scored = score_labels(labels, True, DEFAULT_FAITHFULNESS, judge, _no_evidence, _log(entries), 2)
    assert [(s.judge, s.raw, s.source) for s in scored] == [(1.0, 1.0, "faithfulness"), (0.0, 0.0, "faithfulness"),
                                                           (1.0, 1.0, "faithfulness")]  # fmt: skip
    assert sorted(e[0] for e in entries) == ["l0", "l1", "l2"]


def test_an_answer_without_claims_is_unscored_not_zero() -> None:
    labels = [_label(0, 1, "Hi", ("Refunds take five days.",))]
    (scored,) = score_labels(labels, True, DEFAULT_FAITHFULNESS, OfflineFactory(), _no_evidence, _log([]), 1)
    assert scored.judge is None and scored.unscored == "the answer makes no factual claim to check"


def test_given_scores_are_not_asked_for() -> None:
    given = Label("g", 1, 0.9, None, None, (), None, "f:1")
    (scored,) = score_labels([given], True, DEFAULT_FAITHFULNESS, _no_judge, _no_evidence, _log([]), 1)
    assert (scored.judge, scored.raw, scored.source) == (1.0, 0.9, "label")


@pytest.mark.parametrize(("combined", "prompt"), [(True, "You judge one answer"), (False, "You are a strict auditor")])
def test_binary_items_are_scored_by_the_model_judge_with_the_threshold(combined: bool, prompt: str) -> None:
    labels = [_label(i, 1, "Refunds take 5 days.", ("Refunds take 5 days.",)) for i in range(3)]
    with FakeOpenAI(other_judges, api_key=KEY) as fake:
        config = JudgeConfig(
            provider="openai", base_url=fake.base_url, api_key=KEY, cache=None, max_retries=0, combined=combined
        )
        factory = cache(lambda: make_judge(config))
        scored = score_labels(labels, True, DEFAULT_FAITHFULNESS, factory, _no_evidence, _log([]), 3)
        # One call per label either way: the combined call the gate makes, or faithfulness alone.
        assert fake.call_count == 3
        assert all(str(b["messages"][0]["content"]).startswith(prompt) for b in fake.bodies)
    assert [s.judge for s in scored] == [1.0, 1.0, 1.0]


def test_a_failing_model_judge_leaves_the_item_unscored() -> None:
    labels = [_label(0, 1, "Refunds take 5 days.", ("Refunds take 5 days.",))]
    with FakeOpenAI(Reply(content="no idea"), api_key=KEY) as fake:
        config = JudgeConfig(provider="openai", base_url=fake.base_url, api_key=KEY, cache=None, max_retries=0)
        (scored,) = score_labels(
            labels, True, DEFAULT_FAITHFULNESS, cache(lambda: make_judge(config)), _no_evidence, _log([]), 1
        )
    assert scored.judge is None and (scored.unscored or "").startswith("judge reply invalid after 2 attempts")


def test_ordinal_items_get_the_best_passages_evidence_score() -> None:
    labels = [
        Label(
            "a", 5, None, "Q?", "Refunds take 5 days.", (passage("[S2]", "r", 0), passage("[S5]", "r", 1)), None, "f:1"
        ),
        Label("b", 1, None, "Q?", "A.", (passage("", "r", 0),), "Refunds are instant.", "f:2"),
    ]
    with FakeOpenAI(evidence_responder(by_marker), api_key=KEY) as fake:
        config = JudgeConfig(provider="openai", base_url=fake.base_url, api_key=KEY, cache=None)
        scorer = cache(lambda: EvidenceScorer(config))
        scored = score_labels(labels, False, DEFAULT_FAITHFULNESS, _no_judge, scorer, _log([]), 2)
        claims = sorted(b["messages"][1]["content"].split("<claim>\n")[1].split("\n</claim>")[0] for b in fake.bodies)
    assert [(s.judge, s.source) for s in scored] == [(5.0, "evidence"), (0.0, "evidence")]
    assert claims == ["Refunds are instant.", "Refunds take 5 days."]  # the claim, else the answer


def test_a_fabricated_quote_leaves_an_ordinal_item_unscored() -> None:
    labels = [Label("a", 5, None, "Q?", "A.", (passage("[S5]", "r", 0),), None, "f:1")]
    with FakeOpenAI(evidence_responder(by_marker, quote=lambda p: "made up"), api_key=KEY) as fake:
        config = JudgeConfig(provider="openai", base_url=fake.base_url, api_key=KEY, cache=None)
        (scored,) = score_labels(
            labels, False, DEFAULT_FAITHFULNESS, _no_judge, cache(lambda: EvidenceScorer(config)), _log([]), 1
        )
    assert scored.judge is None and scored.unscored == 'key_quote is not in passage 0: "made up"'


def test_claims_need_the_model_judge() -> None:
    with pytest.raises(ConfigError) as err:
        require_openai(Config(), "scoring claims")
    assert "needs judge.provider: openai (the config has 'offline')" in str(err.value)


class OfflineFactory:
    def __init__(self) -> None:
        self.judge: Judge = make_judge(JudgeConfig(provider="offline"))

    def __call__(self) -> Judge:
        return self.judge


def _no_judge() -> Judge:
    raise AssertionError("the judge must not be asked")


def _no_evidence() -> EvidenceScorer:
    raise AssertionError("the evidence judge must not be asked")


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
