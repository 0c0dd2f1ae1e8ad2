"""Human labels of the team's criteria and of reference-point verdicts: reading them, and asking the judge."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.openai_server import FakeOpenAI
from tests.judge.fake_evidence import KEY, Scripted, scripted_judge

from ragjudge.calibrate.labels import (
    DEFAULT_FAITHFULNESS,
    Label,
    PointLabel,
    check_label_criteria,
    load_labels,
    score_labels,
)
from ragjudge.config.model import CriterionConfig, JudgeConfig
from ragjudge.errors import CaseFileError
from ragjudge.judge.evidence import EvidenceScorer
from ragjudge.judge.factory import make_judge

ORDER = CriterionConfig(question="Does it ask for the order number?", score_1="never", score_5="always")
BASE = {"id": "a", "human": 1, "question": "Where is my order?", "answer": "It ships today.", "contexts": ["c"]}


def _write(tmp_path: Path, *rows: Any) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(CaseFileError) as err:
        load_labels(path)
    return str(err.value)


# --- reading ----------------------------------------------------------------------------------------


def test_criteria_scores_and_point_verdicts_are_read(tmp_path: Path) -> None:
    row = {
        **BASE,
        "criteria": {"asks_for_order": 2},
        "expected": ["Refunds take 5 days", "A receipt is needed"],
        "reference_points": [{"point": " Refunds  take 5 days", "verdict": "covered"}],
    }
    (label,) = load_labels(_write(tmp_path, row))
    assert label.criteria == {"asks_for_order": 2}
    assert label.expected == ("Refunds take 5 days", "A receipt is needed")
    assert label.reference_points == (PointLabel("Refunds take 5 days", "covered"),)  # whitespace folded
    assert label.wants_rubric
    assert not load_labels(_write(tmp_path, BASE))[0].wants_rubric


def test_a_text_reference_takes_its_verbatim_parts_spaces_aside(tmp_path: Path) -> None:
    row = {
        **BASE,
        "expected": "退货需在签收后 7 天内申请。需提供订单号。",
        "reference_points": [{"point": "退货需在签收后7天内申请", "verdict": "partial"}],
    }
    (label,) = load_labels(_write(tmp_path, row))
    assert label.reference_points == (PointLabel("退货需在签收后7天内申请", "partial"),)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"criteria": {"asks_for_order": 7}},
            "field 'criteria.asks_for_order': must be an integer score from 1 to 5 (got 7)",
        ),
        ({"criteria": {"asks_for_order": True}}, "field 'criteria.asks_for_order': must be an integer score"),
        ({"criteria": {"asks_for_order": 3.5}}, "field 'criteria.asks_for_order'"),
        ({"criteria": {"grounding": 3}}, "field 'criteria': 'grounding' is a built-in judge dimension"),
        ({"criteria": {"9lives": 3}}, "field 'criteria': '9lives' is not a criterion name"),
        ({"criteria": {}}, "field 'criteria': an empty mapping labels no criterion"),
        ({"criteria": [3]}, "field 'criteria'"),
        (
            {"reference_points": [{"point": "Refunds take 5 days", "verdict": "covered"}]},
            "field 'expected': required with reference_points",
        ),
        (
            {
                "expected": ["Refunds take 5 days"],
                "reference_points": [{"point": "Refunds take 5 days", "verdict": "yes"}],
            },
            "field 'reference_points.0.verdict': must be one of covered, partial, missing, contradicted (got 'yes')",
        ),
        (
            {
                "expected": ["Refunds take 5 days"],
                "reference_points": [{"point": "Refunds are instant", "verdict": "missing"}],
            },
            "field 'reference_points.0.point': 'Refunds are instant' is not one of the points listed in `expected`",
        ),
        (
            {
                "expected": "Refunds take 5 days.",
                "reference_points": [{"point": "Refunds take 7 days", "verdict": "missing"}],
            },
            "field 'reference_points.0.point': 'Refunds take 7 days' is not a verbatim part of `expected`",
        ),
        (
            {
                "expected": ["A", "B"],
                "reference_points": [{"point": "A", "verdict": "covered"}, {"point": " A ", "verdict": "missing"}],
            },
            "field 'reference_points.1.point': ' A ' is given twice (also reference_points.0)",
        ),
        (
            {"expected": ["A"], "reference_points": [{"point": "A", "verdict": "covered", "quote": "A"}]},
            "unknown field 'reference_points.0.quote'",
        ),
        (
            {"expected": ["A"], "reference_points": [{"verdict": "covered"}]},
            "field 'reference_points.0.point': required field is missing",
        ),
        (
            {"expected": ["A"], "reference_points": [{"point": " ", "verdict": "covered"}]},
            "field 'reference_points.0.point': must not be empty",
        ),
        ({"expected": ["A"], "reference_points": []}, "field 'reference_points': an empty list labels no point"),
        (
            {"expected": [], "reference_points": [{"point": "A", "verdict": "covered"}]},
            "field 'expected': an empty list has no reference points",
        ),
    ],
)
def test_bad_criteria_and_point_labels_name_the_line_and_the_field(
    tmp_path: Path, extra: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, {"id": "ok", "human": 1, "judge": 1}, {**BASE, **extra})
    text = _error(path)
    assert text.startswith(f"{path}:2: ") and message in text, text


def test_criteria_labels_need_the_question_and_the_answer(tmp_path: Path) -> None:
    row = {"id": "a", "human": 1, "judge": 1, "question": "Q?", "criteria": {"asks_for_order": 3}}
    path = _write(tmp_path, row)
    assert _error(path) == f"{path}:1: label 'a' has criteria labels but no answer for the judge to read"
    row = {
        "id": "a",
        "human": 1,
        "judge": 1,
        "expected": ["A"],
        "reference_points": [{"point": "A", "verdict": "covered"}],
        "criteria": {"x": 1},
    }
    assert "has criteria and reference_points labels but no question, answer" in _error(_write(tmp_path, row))


def test_a_criterion_defined_nowhere_is_named_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, {**BASE, "criteria": {"asks_for_order": 3}}, {**BASE, "id": "b", "criteria": {"polite": 2}})
    labels = load_labels(path)
    check_label_criteria(labels[:1], {"asks_for_order": ORDER})
    with pytest.raises(CaseFileError) as err:
        check_label_criteria(labels, {"asks_for_order": ORDER})
    assert str(err.value) == (
        f"{path}:2: field 'criteria.polite': no criterion named 'polite' (judge.criteria defines: asks_for_order)"
    )


# --- asking the judge -------------------------------------------------------------------------------


def _label(i: int, judge: float | None = None, claim: str | None = None, **fields: Any) -> Label:
    return Label(
        f"l{i}",
        1,
        judge,
        f"Question {i}?",
        f"Answer {i} ships today.",
        (f"Answer {i} ships today.",),
        claim,
        f"f:{i}",
        **fields,
    )


def _config(base_url: str, **judge: Any) -> JudgeConfig:
    return JudgeConfig(
        provider="openai",
        base_url=base_url,
        api_key=KEY,
        cache=None,
        max_retries=0,
        criteria={"asks_for_order": ORDER.model_copy(update={"tags": ["orders"]})},
        **judge,
    )


@pytest.mark.parametrize("combined", [True, False])
def test_criteria_ride_on_the_call_that_gives_faithfulness(combined: bool) -> None:
    labels = [_label(i, criteria={"asks_for_order": 3}) for i in range(3)]
    script = {f"Question {i}?": Scripted(criteria={"asks_for_order": 2 + i}) for i in range(3)}
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        config = _config(fake.base_url, combined=combined)
        scored = score_labels(
            labels, True, DEFAULT_FAITHFULNESS, cache(lambda: make_judge(config)), _no_evidence, lambda *_: None, 3
        )
        # Combined: the gate's one call. Separate: the rubric call and the faithfulness call, as the gate makes.
        assert fake.call_count == (3 if combined else 6)
    assert [s.judge for s in scored] == [1.0, 1.0, 1.0]
    assert [s.judgement.criteria if s.judgement else None for s in scored] == [
        {"asks_for_order": 2},
        {"asks_for_order": 3},
        {"asks_for_order": 4},
    ]


def test_a_given_judge_score_or_a_claim_takes_one_call_more_for_the_criteria() -> None:
    labels = [
        _label(0, judge=1, criteria={"asks_for_order": 3}),  # the file's score stands: one call, for the criteria
        _label(1, claim="Answer 1 ships.", criteria={"asks_for_order": 3}),  # the claim's call, then the answer's
        _label(2),  # nothing but faithfulness: the call made today
    ]
    script = {f"Question {i}?": Scripted(criteria={"asks_for_order": 5}) for i in range(3)}
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        config = _config(fake.base_url)
        scored = score_labels(
            labels, True, DEFAULT_FAITHFULNESS, cache(lambda: make_judge(config)), _no_evidence, lambda *_: None, 1
        )
        asked = sorted(
            (
                str(b["messages"][1]["content"]).split("<answer>\n")[1].split("\n</answer>")[0],
                "asks_for_order" in str(b["messages"][0]["content"]),
            )
            for b in fake.bodies
        )
        assert fake.call_count == 4
    # The claim's call asks faithfulness alone: the criteria are asked of the answer.
    assert asked == [("Answer 0 ships today.", True), ("Answer 1 ships today.", True), ("Answer 1 ships.", False),
                     ("Answer 2 ships today.", False)]  # fmt: skip
    assert [(s.source, s.raw) for s in scored] == [("label", 1), ("faithfulness", 1.0), ("faithfulness", 1.0)]
    assert [s.judgement.criteria if s.judgement else None for s in scored] == [
        {"asks_for_order": 5},
        {"asks_for_order": 5},
        None,
    ]


def test_the_reference_is_shown_as_the_gate_shows_it() -> None:
    label = _label(
        0,
        expected=("Refunds take 5 days", "A receipt is needed"),
        reference_points=(PointLabel("A receipt is needed", "missing"),),
    )
    script = {
        "Question 0?": Scripted(points=[("Refunds take 5 days", "missing", ""), ("A receipt is needed", "missing", "")])
    }
    with FakeOpenAI(scripted_judge(script), api_key=KEY) as fake:
        config = _config(fake.base_url)
        (scored,) = score_labels(
            [label], True, DEFAULT_FAITHFULNESS, cache(lambda: make_judge(config)), _no_evidence, lambda *_: None, 1
        )
        user = str(fake.bodies[0]["messages"][1]["content"])
    assert "## Reference answer (its points, one per line)\n- Refunds take 5 days\n- A receipt is needed\n" in user
    assert scored.judgement is not None and scored.judgement.reference_points is not None
    assert [p.verdict for p in scored.judgement.reference_points] == ["missing", "missing"]


def _no_evidence() -> EvidenceScorer:
    raise AssertionError("the evidence judge must not be asked")
