"""Human labels of the team's criteria and of reference-point verdicts: reading them, asking the judge, pairing
the judge's scores and verdicts with the person's, and the bars on them."""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score, f1_score
from statsmodels.stats.proportion import proportion_confint
from tests.fakes.openai_server import FakeOpenAI
from tests.judge.fake_evidence import KEY, Scripted, scripted_judge

from ragjudge.calibrate.judging import DEFAULT_FAITHFULNESS, ScoredLabel, score_labels
from ragjudge.calibrate.labels import Label, PointLabel, check_label_criteria, load_labels
from ragjudge.calibrate.pairing import (
    criteria_agreement,
    criterion_lines,
    reference_agreement,
    reference_lines,
)
from ragjudge.calibrate.verdict import (
    Bar,
    check_labelled,
    evaluate,
    evaluate_criterion,
    evaluate_reference,
    parse_fail_under,
)
from ragjudge.config.judge_config import CriterionConfig, JudgeConfig
from ragjudge.errors import CaseFileError, UsageError
from ragjudge.judge.evidence import EvidenceScorer
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import Judgement, Unscored
from ragjudge.judge.reference import ReferencePoint
from ragjudge.stats.agreement import compare

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
            "field 'reference_points.0.point': 'Refunds take 7 days' is not one of the points of `expected` as "
            "ragjudge splits it ('Refunds take 5 days')",
        ),
        (
            {
                # A verbatim part of the text, but not one of its points: the judge is never asked about it.
                "expected": "Refunds take 5 days. A receipt is needed.",
                "reference_points": [{"point": "Refunds", "verdict": "covered"}],
            },
            "field 'reference_points.0.point': 'Refunds' is not one of the points of `expected` as ragjudge "
            "splits it ('Refunds take 5 days', 'A receipt is needed')",
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


# --- pairing ----------------------------------------------------------------------------------------


def _scored(i: int, judgement: Judgement | None, **fields: Any) -> ScoredLabel:
    return ScoredLabel(_label(i, **fields), 1.0, 1.0, "faithfulness", judgement=judgement)


def test_criteria_agreement_matches_the_references() -> None:
    human = [5, 4, 2, 1, 3, 5, 2, 4, 3, 1]
    judge = [5, 3, 2, 2, 3, 4, 1, 4, 3, 1]
    scored = [
        _scored(i, Judgement("m", criteria={"asks_for_order": j}), criteria={"asks_for_order": h})
        for i, (h, j) in enumerate(zip(human, judge, strict=True))
    ]
    failed = Judgement("m", unscored=(Unscored("criteria.asks_for_order", "judge reply invalid"),))
    scored.append(_scored(10, failed, criteria={"asks_for_order": 2}))
    scored.append(_scored(11, Judgement("m")))  # labels no criterion: not counted
    (c,) = criteria_agreement(scored).values()
    r = c.report
    assert r is not None and (c.name, c.labelled, r.n) == ("asks_for_order", 11, 10)
    assert [u.as_dict() for u in c.unscored] == [{"id": "l10", "where": "f:10", "reason": "judge reply invalid"}]
    assert r.kappa == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    qwk = cohen_kappa_score(human, judge, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert r.weighted_kappa == pytest.approx(qwk, abs=1e-12)
    assert r.mae == pytest.approx(np.abs(np.array(judge) - np.array(human)).mean())
    assert r.mean_error == pytest.approx(-0.2)
    assert r.spearman == pytest.approx(spearmanr(human, judge).statistic, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert r.weighted_f1 == pytest.approx(f1_score(human, judge, average="weighted", zero_division=0))
    assert r.ci95 == pytest.approx(proportion_confint(6, 10, method="wilson"), abs=1e-12)
    lines = criterion_lines(c)
    assert lines[0] == f"criteria.asks_for_order: agreement=0.600 ci95=[{r.ci95[0]:.3f}, {r.ci95[1]:.3f}] n=10"
    assert lines[1].startswith(f"  kappa={r.kappa:.3f} weighted_kappa={qwk:.3f} mae=0.400 mean_error=-0.200 ")
    assert lines[-1] == "  unscored: l10 (f:10): judge reply invalid"


def _point(point: str, verdict: str, quote: str = "") -> ReferencePoint:
    return ReferencePoint(point, verdict, quote, "r")  # type: ignore[arg-type]


def test_point_verdicts_are_paired_by_their_text_and_a_point_not_returned_disagrees() -> None:
    listed = ("Refunds take 5 days", "The card is credited", "A receipt is needed")
    one = Judgement(
        "m",
        reference_points=(
            _point(listed[0], "covered", "x"),
            _point(listed[1], "partial", "x"),
            _point(listed[2], "missing"),
        ),
    )
    two = Judgement("m", reference_points=(_point("退货需在签收后7天内申请", "contradicted", "x"),))
    declined = Judgement("m", declined=True)
    scored = [
        _scored(
            0,
            one,
            expected=listed,
            reference_points=(
                PointLabel(listed[0], "covered"),
                PointLabel(listed[1], "covered"),
                PointLabel(listed[2], "missing"),
            ),
        ),
        _scored(
            1,
            two,
            expected="退货需在签收后 7 天内申请。需提供订单号。",
            reference_points=(
                PointLabel("退货需在签收后 7 天内申请", "contradicted"),
                PointLabel("需提供订单号", "missing"),
            ),
        ),
        _scored(2, declined, expected=listed, reference_points=(PointLabel(listed[0], "covered"),)),
        _scored(3, Judgement("m")),
    ]
    p = reference_agreement(scored)
    assert p is not None and (p.n, p.items, p.agreed) == (5, 2, 3)
    human = ["covered", "covered", "missing", "contradicted", "missing"]
    judge = ["covered", "partial", "missing", "contradicted", "not_returned"]
    assert [(q.human, q.judge) for q in p.pairs] == list(zip(human, judge, strict=True))
    assert p.ci95 == pytest.approx(proportion_confint(3, 5, method="wilson"), abs=1e-12)
    assert p.kappa == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    by = {v: (a.n, a.agreed) for v, a in p.by_verdict.items()}
    assert by == {"covered": (2, 1), "partial": (0, 0), "missing": (2, 1), "contradicted": (1, 1)}
    assert p.by_verdict["covered"].ci95 == pytest.approx(proportion_confint(1, 2, method="wilson"), abs=1e-12)
    assert p.confusion["missing"] == {"covered": 0, "partial": 0, "missing": 1, "contradicted": 0, "not_returned": 1}
    assert [u.id for u in p.unscored] == ["l2"] and "declines" in p.unscored[0].reason
    lines = reference_lines(p)
    assert lines[0] == (
        f"reference: agreement=0.600 ci95=[{p.ci95[0]:.3f}, {p.ci95[1]:.3f}] n=5 points (2 items) kappa={p.kappa:.3f}"
    )
    assert '  not returned: l1 (f:1): the judge gave no verdict for "需提供订单号" (human: missing)' in lines
    assert reference_agreement([_scored(0, Judgement("m"))]) is None


# --- bars ---------------------------------------------------------------------------------------------


def test_bars_on_criteria_and_points_are_named_by_their_scope() -> None:
    bars = parse_fail_under(
        [
            "criteria.asks_for_order.kappa=0.6",
            "reference.agreement=0.8",
            "reference.contradicted.agreement=0.9",
            "kappa=0.5",
        ]
    )
    assert [(b.scope, b.criterion) for b in bars] == [
        ("criteria", "asks_for_order"),
        ("reference", None),
        ("reference", None),
        ("labels", None),
    ]


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("criteria.asks_for_order=0.6", "--fail-under criteria.asks_for_order: write criteria.NAME.METRIC"),
        ("criteria.asks_for_order.mae=0.6", "mae is an error (lower is better), so a floor does not apply"),
        ("criteria.asks_for_order.tpr=0.6", "tpr applies to binary (0/1) labels, and a criterion is scored 1 to 5"),
        ("criteria.asks_for_order.recall=0.6", "--fail-under criteria.asks_for_order.recall: unknown metric"),
        ("criteria.tone.kappa=0.6", "'tone' is a built-in judge dimension"),
        ("reference.spearman=0.6", "--fail-under reference.spearman: unknown metric"),
        ("reference.maybe.agreement=0.6", "--fail-under reference.maybe.agreement: unknown metric"),
        ("reference.agreement=most", "'most' is not a number"),
    ],
)
def test_bad_scoped_bars_are_usage_errors(arg: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_fail_under([arg])
    assert message in str(err.value)


def test_a_bar_on_what_no_line_labels_is_a_usage_error() -> None:
    bars = parse_fail_under(["criteria.polite.kappa=0.5"])
    check_labelled(bars, {"polite"}, False, Path("l.jsonl"))
    with pytest.raises(UsageError) as err:
        check_labelled(bars, {"asks_for_order"}, True, Path("l.jsonl"))
    assert str(err.value) == (
        "--fail-under criteria.polite.kappa: no line of l.jsonl scores criteria.polite "
        "(the lines score: asks_for_order)"
    )
    with pytest.raises(UsageError) as err:
        check_labelled(parse_fail_under(["reference.kappa=0.5"]), set(), False, Path("l.jsonl"))
    assert "no line of l.jsonl gives reference_points" in str(err.value)


def test_a_bar_on_a_criterion_leaves_the_default_agreement_bar_standing() -> None:
    report = compare([1, 0, 1], [1, 0, 1], binary=True)
    results = evaluate(report, None, [Bar("criteria.x.kappa", 0.5), Bar("reference.agreement", 0.5)])
    assert [r.metric for r in results] == ["agreement_ci95_lower"]
    assert [r.metric for r in evaluate(report, None, [Bar("kappa", 0.5), Bar("criteria.x.kappa", 0.5)])] == ["kappa"]


def test_criterion_and_point_bars_pass_fail_and_say_why_when_undefined() -> None:
    scored = [
        _scored(i, Judgement("m", criteria={"x": j}), criteria={"x": h})
        for i, (h, j) in enumerate([(1, 1), (2, 2), (3, 4), (5, 5)])
    ]
    (c,) = criteria_agreement(scored).values()
    bars = [Bar("criteria.x.agreement", 0.75), Bar("criteria.x.kappa", 0.9), Bar("criteria.y.kappa", 0.1)]
    assert [(r.passed, r.reason) for r in evaluate_criterion(c, bars)] == [
        (True, "criteria.x.agreement 0.750 >= 0.75"),
        (False, f"criteria.x.kappa {c.report.kappa:.3f} < 0.9"),  # type: ignore[union-attr]
    ]
    failed = [_scored(0, Judgement("m", unscored=(Unscored("rubric", "down"),)), criteria={"x": 3})]
    (none,) = criteria_agreement(failed).values()
    assert [r.reason for r in evaluate_criterion(none, bars[:1])] == [
        "criteria.x.agreement undefined: the judge scored criteria.x on none of its labelled items: cannot show >= 0.75"
    ]
    assert none.unscored[0].reason == "down"
    points = reference_agreement(
        [
            _scored(
                0,
                Judgement("m", reference_points=(_point("A", "covered", "x"),)),
                expected=("A",),
                reference_points=(PointLabel("A", "covered"),),
            )
        ]
    )
    assert points is not None
    results = evaluate_reference(points, parse_fail_under(["reference.agreement=1", "reference.missing.agreement=0.5"]))
    assert [(r.passed, r.reason) for r in results] == [
        (True, "reference.agreement 1.000 >= 1"),
        (
            False,
            "reference.missing.agreement undefined: the human called no labelled point missing: cannot show >= 0.5",
        ),
    ]
