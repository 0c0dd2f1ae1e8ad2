"""The reference's points: what a judge may return for them, the offline approximation, and the figures."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragjudge.cases import load_cases
from ragjudge.config.model import CriterionConfig
from ragjudge.errors import CaseFileError
from ragjudge.judge.criteria import criteria_for
from ragjudge.judge.lexical_reference import judge_points, quantities, split_points
from ragjudge.judge.reference import (
    PointError,
    ReferencePoint,
    answer_correctness,
    check_points,
    contradiction_reason,
    contradictions,
    missing_reason,
)
from ragjudge.judge.replies import ReplyError, ignored_keys, parse_judged, response_format
from tests.fakes.rag import make_case

ANSWER = "签收 15 天内支持 15 天无理由退货。请保留订单号。"
LISTED = ["7 天无理由退货", "需提供订单号"]


def test_a_listed_reference_takes_one_verdict_per_point_in_any_order() -> None:
    points = check_points(
        [
            ("需提供订单号", "partial", "请保留订单号", "keeps it, does not say it is needed"),
            ("7 天无理由退货", "contradicted", "签收 15 天内支持 15 天无理由退货", "15, not 7"),
        ],
        LISTED,
        ANSWER,
    )
    assert [(p.point, p.verdict) for p in points] == [("需提供订单号", "partial"), ("7 天无理由退货", "contradicted")]
    assert answer_correctness(points) == 0.25 and contradictions(points) == 1


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            [("7 天无理由退货", "covered", "无理由退货", "ok")],
            "reference_points: no verdict for '需提供订单号' (one entry per point)",
        ),
        (
            [("7 天退货", "covered", "无理由退货", "ok"), ("需提供订单号", "missing", "", "no")],
            "reference_points.0.point: '7 天退货' is not one of the reference's points as given",
        ),
        (
            [("7 天无理由退货", "covered", "7 天无理由退货", "ok"), ("需提供订单号", "missing", "", "no")],
            "reference_points.0.quote: '7 天无理由退货' is not a verbatim excerpt of the answer",
        ),
        (
            [("7 天无理由退货", "missing", "退货", "no"), ("需提供订单号", "missing", "", "no")],
            "reference_points.0.quote: a missing point quotes nothing (leave it empty)",
        ),
        (
            [("7 天无理由退货", "covered", "", "ok"), ("需提供订单号", "missing", "", "no")],
            "reference_points.0.quote: a covered point must quote the answer",
        ),
        (
            [("7 天无理由退货", "missing", "", "no"), ("7 天无理由退货", "missing", "", "again")],
            "reference_points.1.point: '7 天无理由退货' is given twice (also reference_points.0)",
        ),
        (
            [("7 天无理由退货", "wrong", "", "no"), ("需提供订单号", "missing", "", "no")],
            "reference_points.0.verdict: 'wrong' is not one of covered, partial, missing, contradicted",
        ),
    ],
)
def test_points_that_do_not_fit_the_reference_or_the_answer_are_named(
    entries: list[tuple[str, str, str, str]], message: str
) -> None:
    with pytest.raises(PointError) as err:
        check_points(entries, LISTED, ANSWER)
    assert str(err.value) == message


def test_a_text_reference_takes_only_verbatim_fragments_whitespace_aside() -> None:
    reference = "签收后 7 天内\n无理由退货；需提供订单号。"
    points = check_points([("7 天内 无理由退货", "contradicted", "签收 15 天内", "15")], reference, ANSWER)
    assert points[0].point == "7 天内 无理由退货"
    with pytest.raises(PointError, match=r"^reference_points\.0\.point: '30 天价保' is not a verbatim fragment"):
        check_points([("30 天价保", "missing", "", "made up")], reference, ANSWER)
    with pytest.raises(PointError, match=r"^reference_points: at least one point of the reference answer$"):
        check_points([], reference, ANSWER)


def test_reasons_read_as_the_readme_shows_them() -> None:
    point = ReferencePoint("7 天无理由退货", "contradicted", "签收 15 天内支持 15 天无理由退货", "15 days")
    assert contradiction_reason(point) == (
        'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货")'
    )
    assert (
        missing_reason(ReferencePoint("需提供订单号", "missing", "", "no"))
        == 'misses a reference point: "需提供订单号"'
    )


def test_a_combined_reply_with_points_is_parsed_and_an_unknown_key_is_ignored_and_named() -> None:
    reply = {
        "scores": {"relevance": 4, "tone": 5},
        "reasoning": {"relevance": "ok", "tone": "ok"},
        "claims": [],
        "reference_points": [
            {"point": "7 天无理由退货", "verdict": "contradicted", "quote": "15 天无理由退货", "reason": "15"},
            {"point": "需提供订单号", "verdict": "covered", "quote": "请保留订单号", "reason": "asks"},
        ],
        "summary": "a key nobody asked for",
    }
    text = json.dumps(reply, ensure_ascii=False)
    parsed = parse_judged(text, ("relevance", "tone"), [], False, tuple(LISTED), ANSWER)
    assert parsed.points is not None and [p.verdict for p in parsed.points] == ["contradicted", "covered"]
    schema = response_format("combined", ("relevance", "tone"), False, True)
    assert ignored_keys(text, schema) == ["summary"]
    assert "reference_points" in schema["json_schema"]["schema"]["required"]
    del reply["reference_points"]
    with pytest.raises(ReplyError, match=r"^reference_points: Field required$"):
        parse_judged(json.dumps(reply), ("relevance", "tone"), [], False, tuple(LISTED), ANSWER)


def test_the_offline_approximation_splits_on_the_documented_marks() -> None:
    assert split_points("7 天无理由退货；需提供订单号。运费\n由商家承担！") == [
        "7 天无理由退货",
        "需提供订单号",
        "运费",
        "由商家承担",
    ]
    assert split_points(["  a  b ", "c"]) == ["a b", "c"]
    assert [(n, u) for n, u, _ in quantities("3 个工作日到账，满 99 元包邮，5 business days")] == [
        (3.0, "business-day"),
        (99.0, "yuan"),
        (5.0, "business-day"),
    ]


@pytest.mark.parametrize(
    ("point", "answer", "verdict", "reason"),
    [
        ("7 天无理由退货", ANSWER, "contradicted", "the answer says 15 天 where the reference says 7 天"),
        # The point's own number said anywhere is no contradiction, though another number of days is there too.
        ("7 天无理由退货", "7 天无理由退货，15 天换货。", "covered", "100% of its words appear in the answer"),
        (
            "Refunds take 5 business days",
            "Refunds take 3 business days.",
            "contradicted",
            "the answer says 3 business days where the reference says 5 business days",
        ),
        ("需提供订单号", ANSWER, "missing", "only 40% of its words appear in the answer (needs over 50%)"),
        # A decimal point is not a sentence end: the quote keeps the whole price.
        (
            "Express costs $12.99",
            "Express shipping costs $12.99 and arrives in 1-2 business days.",
            "covered",
            "100% of its words appear in the answer",
        ),
        # A number in another unit is not the same claim.
        ("48 小时内发货", "3 天内发货。", "missing", "only 40% of its words appear in the answer (needs over 50%)"),
    ],
)
def test_the_offline_approximation(point: str, answer: str, verdict: str, reason: str) -> None:
    (judged,) = judge_points([point], answer)
    assert (judged.verdict, judged.reason) == (verdict, reason)
    if verdict != "missing":
        assert judged.quote and judged.quote.replace(" ", "") in answer.replace(" ", "")


def test_the_offline_quote_keeps_a_price_whole() -> None:
    (judged,) = judge_points(
        ["Express costs $12.99"], "Express shipping costs $12.99 and arrives in 1-2 business days."
    )
    assert judged.quote == "Express shipping costs $12.99 and arrives in 1-2 business days"


def test_criteria_apply_by_scope_by_name_and_inline() -> None:
    scoped = CriterionConfig(question="q", score_1="bad", score_5="good", categories=["Logistics"], tags=["vip"])
    named = CriterionConfig(question="asked by name", score_1="bad", score_5="good", tags=["never"])
    defined = {"scoped": scoped, "named": named}
    own = CriterionConfig(question="the case's own", score_1="bad", score_5="good")
    both = replace(make_case(category="logistics"), tags=("vip",))
    assert [c.name for c in criteria_for(both, defined)] == ["scoped"]  # the category folded, and a tag
    wrong_tag = replace(both, tags=("new",))
    assert criteria_for(wrong_tag, defined) == ()  # both filters must hold
    extra = replace(wrong_tag, criteria=("named",), inline_criteria=(("own", own),))
    assert [(c.name, c.question) for c in criteria_for(extra, defined)] == [
        ("named", "asked by name"),
        ("own", "the case's own"),
    ]


def test_a_case_file_takes_points_as_a_list_in_yaml_and_jsonl(tmp_path: Path) -> None:
    yaml_case = "- id: a\n  question: 退货期限？\n  expected: [7 天无理由退货, 需提供订单号]\n"
    (tmp_path / "c.yaml").write_text(yaml_case, encoding="utf-8")
    (tmp_path / "c.jsonl").write_text('{"id": "b", "question": "q?", "expected": ["x", "y"]}\n', encoding="utf-8")
    cases = load_cases([tmp_path / "c.yaml", tmp_path / "c.jsonl"]).cases
    assert [c.reference_points for c in cases] == [("7 天无理由退货", "需提供订单号"), ("x", "y")]
    (tmp_path / "bad.yaml").write_text("- id: a\n  question: q\n  expected: []\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match="an empty list has no reference points"):
        load_cases([tmp_path / "bad.yaml"])


def test_answer_correctness_counts_a_partial_point_as_half() -> None:
    def point(verdict: str) -> ReferencePoint:
        return ReferencePoint("p", verdict, "", "r")  # type: ignore[arg-type]

    points = [point("covered"), point("partial"), point("missing"), point("contradicted")]
    assert answer_correctness(points) == 0.375
    assert answer_correctness([point("partial")] * 2) == 0.5 and answer_correctness([]) is None
    assert contradictions(points) == 1


def test_a_long_point_is_cut_to_120_characters() -> None:
    long = ReferencePoint("x" * 130, "missing", "", "r")
    assert missing_reason(long) == 'misses a reference point: "' + "x" * 119 + '…"'
    assert missing_reason(replace(long, point="x" * 120)) == 'misses a reference point: "' + "x" * 120 + '"'
