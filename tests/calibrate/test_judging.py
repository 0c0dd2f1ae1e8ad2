"""The judge's score for each label: the faithfulness rule that maps it to 0/1, and the judge asked for items
the file gives no score (offline and model judges, the evidence judge for ordinal labels)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.judge.fake_evidence import KEY, by_marker, evidence_responder, other_judges, passage

from ragjudge.calibrate.judging import DEFAULT_FAITHFULNESS, faithfulness_rule, require_openai, score_labels, to_binary
from ragjudge.calibrate.labels import Label
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.config.loader import parse_config
from ragjudge.config.model import Config
from ragjudge.errors import ConfigError
from ragjudge.judge.evidence import EvidenceScorer
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import Judge
from ragjudge.rules import Rule

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
