"""`endpoint.refusal.judge`: the model judge says whether an answer declined, in the call it already makes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cases.case import Case
from ragjudge.cli import main
from ragjudge.endpoint.trace import Passage, Trace
from ragjudge.judge.openai_judge import ChatCaller, OpenAIJudge
from tests.fakes.framework_servers import FrameworkServer
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.judge.openai_helpers import (
    GOOD_CLAIMS,
    KEY,
    LogSink,
    Sleeps,
    claim,
    claims_json,
    judge_config,
    kind_of,
    kinds,
    rubric_json,
)

HANDOFF = "Let me connect you with a human agent for that."
"""A decline no built-in phrase catches: only the judge can tell."""


def rubric_with(declined: bool | None, dims: tuple[str, ...] | None = None) -> str:
    data = json.loads(rubric_json(dims=dims) if dims else rubric_json())
    if declined is not None:
        data["declined"] = declined
    return json.dumps(data)


def case(should_answer: bool = True) -> Case:
    return Case("c1", "Can I get a refund after 5 days?", None, (), None, should_answer, (), (), None, None, (), "t")


def trace(answer: str = HANDOFF, refused: bool = False) -> Trace:
    passages = (Passage("p1", "Refunds", "Refunds are paid within 5 working days."),)
    return Trace(answer, refused, None, passages, (), None, None, 5.0, "builtin" if refused else None)


def judge(fake: FakeOpenAI, tmp_path: Path, classify: bool, combined: bool = False) -> OpenAIJudge:
    config = judge_config(fake.base_url, tmp_path / "cache", combined=combined)
    return OpenAIJudge(config, [], caller=ChatCaller(config, sleep=Sleeps()), classify_refusal=classify)


def rubric_request(fake: FakeOpenAI) -> dict[str, Any]:
    return next(b for b in fake.bodies if kind_of(b) == "rubric")


def test_a_decline_is_classified_in_the_rubric_call_and_faithfulness_is_not_asked(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body, i: Reply(content=rubric_with(True))) as fake:
        judgement = judge(fake, tmp_path, classify=True).judge(case(), trace(), LogSink())
        assert kinds(fake) == ["rubric"]
        request = rubric_request(fake)
    assert judgement.declined is True
    assert (judgement.faithfulness, judgement.claims, judgement.calls) == (None, (), 1)
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["declined"] == {"type": "boolean"}
    assert "declined" in schema["required"]
    system = request["messages"][0]["content"]
    assert 'Also say whether the answer declines the question: "declined" is true' in system
    assert system.rstrip().endswith(', "declined": true or false}')
    assert judgement.as_dict()["declined"] is True


def test_in_the_combined_call_a_decline_drops_the_claims(tmp_path: Path) -> None:
    data = json.loads(rubric_with(True))
    data["claims"] = [claim("Let me connect you with a human agent.", False, None, "not a fact")]
    with FakeOpenAI(lambda body, i: Reply(content=json.dumps(data))) as fake:
        judgement = judge(fake, tmp_path, classify=True, combined=True).judge(case(), trace(), LogSink())
        assert kinds(fake) == ["combined"]
        request = fake.bodies[0]
    assert (judgement.declined, judgement.faithfulness, judgement.claims, judgement.calls) == (True, None, (), 1)
    assert request["response_format"]["json_schema"]["schema"]["properties"]["declined"] == {"type": "boolean"}
    assert request["messages"][0]["content"].rstrip().endswith(', "declined": true or false}')


def test_an_answer_is_classified_and_judged_for_faithfulness(tmp_path: Path) -> None:
    def responder(body: dict[str, Any], i: int) -> Reply:
        return Reply(content=rubric_with(False)) if kind_of(body) == "rubric" else GOOD_CLAIMS

    with FakeOpenAI(responder) as fake:
        judgement = judge(fake, tmp_path, classify=True).judge(case(), trace("Refunds take 5 working days."), LogSink())
        assert kinds(fake) == ["rubric", "faithfulness"]
    assert (judgement.declined, judgement.faithfulness) == (False, 1.0)


def test_without_the_setting_nothing_is_asked_or_added(tmp_path: Path) -> None:
    def responder(body: dict[str, Any], i: int) -> Reply:
        return Reply(content=rubric_with(None)) if kind_of(body) == "rubric" else GOOD_CLAIMS

    with FakeOpenAI(responder) as fake:
        judgement = judge(fake, tmp_path, classify=False).judge(case(), trace(), LogSink())
        request = rubric_request(fake)
    assert judgement.declined is None
    assert "declined" not in judgement.as_dict()
    assert "declined" not in request["response_format"]["json_schema"]["schema"]["properties"]
    assert "declined" not in request["messages"][0]["content"]


def test_a_reply_already_declined_in_words_is_not_asked_again(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body, i: Reply(content=rubric_with(None))) as fake:
        judgement = judge(fake, tmp_path, classify=True).judge(case(), trace("I can't help.", True), LogSink())
        request = rubric_request(fake)
    assert judgement.declined is None
    assert "declined" not in request["response_format"]["json_schema"]["schema"]["properties"]


def test_a_rubric_reply_without_the_classification_is_asked_again_then_unscored(tmp_path: Path) -> None:
    with FakeOpenAI(lambda body, i: Reply(content=rubric_with(None))) as fake:
        judgement = judge(fake, tmp_path, classify=True).judge(case(), trace(), LogSink())
    assert judgement.declined is None
    assert judgement.unscored_reason("rubric") == "judge reply invalid after 2 attempts: declined: Field required"


# --- end to end: `ragjudge run` with `endpoint.refusal.judge: true` -------------------------------


@pytest.mark.parametrize(
    ("combined", "expected_calls"),
    [(True, ["combined", "combined", "combined"]), (False, ["faithfulness", "negative", "rubric", "rubric"])],
)
def test_run_scores_the_judges_declines_with_no_extra_call(
    combined: bool,
    expected_calls: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGE_KEY", KEY)
    cases = [
        {"id": "refund", "question": "How long do refunds take?"},
        {"id": "handoff-in-scope", "question": "Is there a refund after a year?"},
        {"id": "handoff-oos", "question": "Will it rain tomorrow?", "category": "out_of_scope"},
    ]

    def responder(body: dict[str, Any], i: int) -> Reply:
        kind = kind_of(body)
        verdict = claim("Refunds are paid within 5 working days.", True, "doc-refund-1")
        if kind == "faithfulness":
            return Reply(content=claims_json(verdict))
        declined = HANDOFF in body["messages"][1]["content"]
        data = json.loads(rubric_with(declined, ("grounding", "calibration") if kind == "negative" else None))
        if kind == "combined":
            data["claims"] = [] if declined else [verdict]
        if "declined" not in body["response_format"]["json_schema"]["schema"]["properties"]:
            data.pop("declined", None)
        return Reply(content=json.dumps(data))

    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    with FrameworkServer("fastapi") as rag, FakeOpenAI(responder) as fake:
        config = {
            "endpoint": {"url": rag.url, "retries": 0, "refusal": {"judge": True}},
            "judge": {
                "provider": "openai",
                "base_url": fake.base_url,
                "api_key": "${JUDGE_KEY}",
                "cache": None,
                "combined": combined,
            },
            "cases": ["cases.yaml"],
            "gate": {"case": {"context_recall": ">= 1.0"}, "suite": {"rejection_accuracy": ">= 1.0"}},
        }
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code = main(["run", "--report", "r.json"])
        calls = kinds(fake)
    capsys.readouterr()
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    got = {c["id"]: (c["status"], c["failed_conditions"], c["trace"]["refused_by"]) for c in data["cases"]}
    assert got == {
        "refund": ("pass", [], None),
        "handoff-in-scope": ("fail", ["declined a question the corpus covers"], "judge"),
        "handoff-oos": ("pass", [], "judge"),
    }
    assert data["suite"]["rejection_accuracy"] == pytest.approx(2 / 3)
    assert code == 1
    # No extra call: combined, one per case; separate, a decline's claims are not asked for.
    assert sorted(calls) == expected_calls
