"""The reference's points: what a judge may return for them, the offline approximation, and the figures."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragjudge.cases.caseset import load_cases
from ragjudge.config.judge_config import CriterionConfig
from ragjudge.errors import CaseFileError
from ragjudge.judge.criteria import criteria_for
from ragjudge.judge.interface import Judgement
from ragjudge.judge.lexical_reference import judge_points, quantities, split_points
from ragjudge.judge.offline import OfflineJudge
from ragjudge.judge.prompting import template
from ragjudge.judge.reference import (
    MIN_QUOTE_CHARS,
    PointError,
    ReferencePoint,
    answer_correctness,
    check_points,
    contradiction_reason,
    contradictions,
    missing_reason,
    quote_error,
    split_reference,
)
from ragjudge.judge.replies import ReplyError, ignored_keys, parse_judged, response_format
from tests.fakes.openai_server import FakeOpenAI, Reply, queue
from tests.fakes.rag import make_case, make_trace
from tests.judge.openai_helpers import make_judge, rubric_json, user_text

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
        # Every verdict carries its reason: blank is empty (issue 27, a decision no test pinned).
        (
            [("7 天无理由退货", "missing", "", "no"), ("需提供订单号", "missing", "", " \n\t ")],
            "reference_points.1.reason: must not be empty",
        ),
        (
            [("7 天无理由退货", "covered", "15 天无理由退货", ""), ("需提供订单号", "missing", "", "no")],
            "reference_points.0.reason: must not be empty",
        ),
    ],
)
def test_points_that_do_not_fit_the_reference_or_the_answer_are_named(
    entries: list[tuple[str, str, str, str]], message: str
) -> None:
    with pytest.raises(PointError) as err:
        check_points(entries, LISTED, ANSWER)
    assert str(err.value) == message


# Issue 27, item 3: the judge chose the one point of a text reference that the answer covers.
REFERENCE = "Refunds take 7 days. You need the order number."


@pytest.mark.parametrize(
    ("reference", "points"),
    [
        (REFERENCE, ("Refunds take 7 days", "You need the order number")),
        ("签收后 7 天内\n无理由退货；需提供订单号。", ("签收后 7 天内", "无理由退货", "需提供订单号")),
        # A Latin stop ends a point only before a space or the end: a price and a version stay whole.
        ("Express costs $12.99. Ships in v2.1 boxes! Free?", ("Express costs $12.99", "Ships in v2.1 boxes", "Free")),
        # A list's markers are not part of its points, and a part with no word is no point.
        ("1. Refunds take 7 days.\n2) Keep the box\n---\n- You need  the order number", (
            "Refunds take 7 days", "Keep the box", "You need the order number")),
        ("1、七天无理由退货\n2、需提供订单号", ("七天无理由退货", "需提供订单号")),
        (["  a  b ", "c"], ("a b", "c")),  # a list as written, whitespace folded
    ],
)  # fmt: skip
def test_ragjudge_splits_a_text_reference_into_its_points_itself(
    reference: str | list[str], points: tuple[str]
) -> None:
    assert split_reference(reference) == points


def test_a_text_reference_takes_a_verdict_on_each_of_ragjudges_points_never_on_a_point_of_the_judges_choosing() -> None:
    answer = "Refunds are possible."
    with pytest.raises(PointError) as err:
        check_points([("Refunds", "covered", "Refunds", "it says refunds")], REFERENCE, answer)
    assert str(err.value) == "reference_points.0.point: 'Refunds' is not one of the reference's points as given"
    with pytest.raises(PointError) as err:
        check_points([("Refunds take 7 days", "partial", "Refunds are possible", "no period")], REFERENCE, answer)
    assert str(err.value) == "reference_points: no verdict for 'You need the order number' (one entry per point)"
    points = check_points(
        [
            ("Refunds take 7 days", "partial", "Refunds are possible", "no period"),
            ("You need the order number", "missing", "", "not said"),
        ],
        REFERENCE,
        answer,
    )
    assert answer_correctness(points) == 0.25
    # Spaces aside, as between Chinese words.
    reference = "签收后 7 天内\n无理由退货；需提供订单号。"
    entries = [("签收后7天内", "contradicted", "签收 15 天内", "15"), ("无理由退货", "covered", "无理由退货", "ok")]
    points = check_points([*entries, ("需提供订单号", "missing", "", "no")], reference, ANSWER)
    assert [p.point for p in points] == ["签收后 7 天内", "无理由退货", "需提供订单号"]  # as ragjudge gave them


@pytest.mark.parametrize(
    ("quote", "answer", "message"),
    [
        ("R", "Refunds are possible.", "'R' is too short to be evidence (a quote has at least 4 letters, digits "
         "or CJK characters)"),
        ("are", "Refunds are possible.", "'are' is too short to be evidence (a quote has at least 4 letters, "
         "digits or CJK characters)"),
        ("退货", ANSWER, "'退货' is too short to be evidence (a quote has at least 4 letters, digits or CJK "
         "characters)"),
        ("efunds", "Refunds are possible.", "'efunds' is not whole words of the answer: it cuts a word in two"),
        ("Refunds are poss", "Refunds are possible.", "'Refunds are poss' is not whole words of the answer: it "
         "cuts a word in two"),
        ("Refunds take 7 days", "Refunds are possible.", "'Refunds take 7 days' is not a verbatim excerpt of the "
         "answer"),
    ],
)  # fmt: skip
def test_a_quote_must_be_evidence_whole_words_of_the_answer_and_more_than_a_letter(
    quote: str, answer: str, message: str
) -> None:
    entries = [("Refunds take 7 days", "covered", quote, "r"), ("You need the order number", "missing", "", "r")]
    with pytest.raises(PointError) as err:
        check_points(entries, REFERENCE, answer)
    assert str(err.value) == f"reference_points.0.quote: {message}"


@pytest.mark.parametrize(
    ("quote", "answer"),
    [
        ("Refunds", "Refunds are possible."),  # one whole word of four letters or more
        ("possible.", "Refunds are possible."),
        ("are possible", "Refunds are  possible."),  # spaces aside
        ("efunds", "Refunds, or efunds, are possible."),  # cut in its first place, whole in its second
        ("15 天无理由", ANSWER),  # CJK has no word boundary to respect
        ("7天无理", "退款7天无理由"),
    ],
)
def test_a_quote_of_whole_words_is_evidence(quote: str, answer: str) -> None:
    assert quote_error(quote, answer) is None
    assert MIN_QUOTE_CHARS == 4


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


def test_the_offline_judge_is_given_the_same_points_and_cannot_pass_two_on_one() -> None:
    # One English point before: 4 of its 7 words in the answer made it covered, answer_correctness 1.0.
    case = replace(make_case(), expected=REFERENCE)
    judgement = OfflineJudge().judge(case, make_trace("Refunds take 7 days."), lambda fields: None)
    assert judgement.reference_points is not None
    assert [(p.point, p.verdict) for p in judgement.reference_points] == [
        ("Refunds take 7 days", "covered"),
        ("You need the order number", "missing"),
    ]
    assert answer_correctness(judgement.reference_points) == 0.5


# ------------------------------------------------------------------------- through the loopback judge
ATTACK_ANSWER = "Refunds are possible."
REFUNDS_ONLY = [{"point": "Refunds", "verdict": "covered", "quote": "Refunds", "reason": "it says refunds"}]
INVALID = (
    "judge reply invalid after 2 attempts: reference_points.0.point: 'Refunds' is not one of the reference's "
    "points as given"
)


def _combined_reply(points: list[dict[str, str]]) -> Reply:
    reply = {
        **json.loads(rubric_json()),
        "claims": [{"claim": "Refunds are possible.", "supported": True, "evidence_id": "p1", "reason": "p1"}],
        "reference_points": points,
    }
    return Reply(content=json.dumps(reply))


def _attacked(fake: FakeOpenAI, *replies: Reply) -> Judgement:
    fake.responder = queue(*replies)
    case = replace(make_case(), expected=REFERENCE)
    trace = make_trace(ATTACK_ANSWER, ids=["p1"], passages={"p1": REFERENCE})
    return make_judge(fake, None, combined=True).judge(case, trace, lambda fields: None)


def test_a_judge_that_picks_the_one_point_the_answer_covers_is_refused_then_unscored_never_1(
    fake: FakeOpenAI,
) -> None:
    # Issue 27, item 3: this reply made answer_correctness 1.0 and the case passed.
    judgement = _attacked(fake, _combined_reply(REFUNDS_ONLY))
    first, retry = fake.bodies
    assert (
        "## Reference answer (its points, one per line)\n- Refunds take 7 days\n- You need the order number\n\n"
        in user_text(first)
    )
    assert retry["messages"][-1]["content"].startswith(
        "Your reply could not be used: reference_points.0.point: 'Refunds' is not one of the reference's points "
        "as given\n"
    )
    assert judgement.reference_points is None
    assert judgement.unscored_reason("reference") == INVALID


def test_a_one_letter_quote_is_refused_and_the_corrected_reply_stands(fake: FakeOpenAI) -> None:
    r_quote = [
        {"point": "Refunds take 7 days", "verdict": "covered", "quote": "R", "reason": "refunds"},
        {"point": "You need the order number", "verdict": "covered", "quote": "R", "reason": "number"},
    ]
    fixed = [
        {"point": "Refunds take 7 days", "verdict": "partial", "quote": "Refunds are possible", "reason": "no days"},
        {"point": "You need the order number", "verdict": "missing", "quote": "", "reason": "not said"},
    ]
    judgement = _attacked(fake, _combined_reply(r_quote), _combined_reply(fixed))
    assert fake.bodies[1]["messages"][-1]["content"].startswith(
        "Your reply could not be used: reference_points.0.quote: 'R' is too short to be evidence (a quote has at "
        "least 4 letters, digits or CJK characters)\n"
    )
    assert judgement.reference_points is not None
    assert answer_correctness(judgement.reference_points) == 0.25


def test_the_prompt_states_the_quote_rule_the_check_applies() -> None:
    block = template("reference.j2").render()
    assert (
        f'"quote" is copied verbatim from the answer: the whole words that cover, partly cover or contradict the '
        f"point, at least {MIN_QUOTE_CHARS} letters, digits or CJK characters, never part of a word; for a missing "
        'point it is "".'
    ) in block
    assert "Split the reference text into its points yourself" not in block


def test_a_contradiction_names_the_passage_its_words_came_from() -> None:
    from ragjudge.judge.reference import ReferencePoint, contradiction_reason

    point = ReferencePoint("7 天无理由退货", "contradicted", "签收 15 天内支持 15 天无理由退货", "15 days, not 7")
    bare = 'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货"'
    assert contradiction_reason(point) == bare + ")"
    # A supported claim that holds the quote (spaces and case aside) names its passage; an unsupported one, one
    # without evidence, or one about something else names none.
    claims = [
        ("签收 15 天内支持 15 天 无理由退货。", True, "doc-refund-2021"),
        ("签收 15 天内支持 15 天无理由退货", False, "doc-other"),
        ("签收 15 天内支持 15 天无理由退货", True, None),
        ("需提供订单号", True, "doc-order"),
    ]
    assert contradiction_reason(point, claims) == bare + ", from passage doc-refund-2021)"
    # A quote spanning two claims' passages names both.
    both = [("签收 15 天内", True, "doc-a"), ("支持 15 天无理由退货", True, "doc-b")]
    assert contradiction_reason(point, both) == bare + ", from passages doc-a, doc-b)"
