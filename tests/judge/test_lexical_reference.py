"""The offline judge's reference check (`judge/lexical_reference.py`): its measured accuracy on labelled pairs,
negation and numbers in words, and the decisions at its edges."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from ragjudge.judge.lexical_reference import judge_point, judge_points
from ragjudge.judge.reference import ReferencePoint

PAIRS = yaml.safe_load((Path(__file__).parent / "offline_reference_pairs.yaml").read_text(encoding="utf-8"))
KINDS = ("covered", "reworded", "missing", "contradicted-number", "contradicted-negation")


def _scored() -> dict[str, list[tuple[dict[str, str], ReferencePoint]]]:
    by_kind: dict[str, list[tuple[dict[str, str], ReferencePoint]]] = {k: [] for k in KINDS}
    for p in PAIRS:
        (judged,) = judge_points([p["point"]], p["answer"])
        by_kind[p["kind"]].append((p, judged))
    return by_kind


def test_the_labelled_pairs_are_the_table_the_docs_report() -> None:
    assert Counter(p["kind"] for p in PAIRS) == dict.fromkeys(KINDS, 16)
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in p["point"]) for p in PAIRS)
    assert (len(PAIRS), chinese) == (80, 40)
    assert {p["verdict"] for p in PAIRS if p["kind"] in ("covered", "reworded")} == {"covered"}
    assert {p["verdict"] for p in PAIRS if p["kind"].startswith("contradicted")} == {"contradicted"}
    assert {p["verdict"] for p in PAIRS if p["kind"] == "missing"} == {"missing"}


def test_the_offline_judge_is_right_on_at_least_95_percent_of_the_labelled_pairs() -> None:
    by_kind = _scored()
    wrong = [
        f"{kind}: {p['point']!r} / {p['answer']!r} -> {judged.verdict} ({judged.reason})"
        for kind, pairs in by_kind.items()
        for p, judged in pairs
        if judged.verdict != p["verdict"]
    ]
    right = len(PAIRS) - len(wrong)
    listed = "\n".join(wrong)
    assert right / len(PAIRS) >= 0.95, f"{right}/{len(PAIRS)} right; wrong:\n{listed}"
    # The figures docs/reference-answers.md and docs/guarantees.md report: a change either way is seen here,
    # and said there.
    per_kind = {kind: sum(judged.verdict == p["verdict"] for p, judged in pairs) for kind, pairs in by_kind.items()}
    assert per_kind == {
        "covered": 16,
        "reworded": 15,
        "missing": 16,
        "contradicted-number": 16,
        "contradicted-negation": 16,
    }, f"wrong:\n{listed}"
    # The one it gets wrong: no stemming, so refund / refunds and take / takes are other words.
    assert wrong == [
        "reworded: 'Refunds take 7 days.' / 'Your refund takes seven days to arrive.' -> missing "
        "(only 50% of its words appear in the answer (needs over 50%))"
    ]


def test_the_hayhooks_answer_that_says_free_contradicts_a_point_that_says_not_free() -> None:
    # Found on a real hayhooks service: the point was covered, and the case passed.
    answer = "Thanks for asking! As our policy states, return shipping was always free."
    assert judge_points("Return shipping is not free.", answer) == (
        ReferencePoint(
            "Return shipping is not free.",
            "contradicted",
            "As our policy states, return shipping was always free",
            'the reference says "not" and the answer does not',
        ),
    )


@pytest.mark.parametrize(
    ("point", "answer", "verdict", "reason"),
    [
        ("7 天无理由退货", "支持七天无理由退货。", "covered", "100% of its words appear in the answer"),
        (
            "7 天无理由退货",
            "支持十四天无理由退货。",
            "contradicted",
            "the answer says 十四天 where the reference says 7 天",
        ),
        ("保修期 2 年", "本产品保修期两年。", "covered", "100% of its words appear in the answer"),
        ("2 个工作日内发货", "两个工作日内发货。", "covered", "100% of its words appear in the answer"),
        ("Refunds take 14 days", "Refunds take fourteen days.", "covered", "100% of its words appear in the answer"),
        (
            "The warranty lasts 2 years",
            "Every device has a two-year warranty that lasts from delivery.",
            "covered",
            "75% of its words appear in the answer",
        ),
        (
            "The warranty lasts 2 years",
            "The warranty lasts one year.",
            "contradicted",
            "the answer says one year where the reference says 2 years",
        ),
        (
            "退款扣除 10% 手续费",
            "退款扣除百分之五手续费。",
            "contradicted",
            "the answer says 百分之五 where the reference says 10%",
        ),
    ],
)
def test_numbers_written_in_words_are_read_as_their_digits(point: str, answer: str, verdict: str, reason: str) -> None:
    (judged,) = judge_points([point], answer)
    assert (judged.verdict, judged.reason) == (verdict, reason)


@pytest.mark.parametrize(
    ("point", "answer", "reason"),
    [
        (
            "Return shipping is free.",
            "Return shipping is not free.",
            'the answer says "not" and the reference does not',
        ),
        (
            "A restocking fee is charged.",
            "No restocking fee is charged.",
            'the answer says "No" and the reference does not',
        ),
        (
            "Sale items can be refunded.",
            "Sale items can never be refunded.",
            'the answer says "never" and the reference does not',
        ),
        (
            "Express shipping is available.",
            "Express shipping isn't available.",
            'the answer says "n\'t" and the reference does not',
        ),
        (
            "Orders can be changed after shipping.",
            "Orders can't be changed after shipping.",
            'the answer says "can\'t" and the reference does not',
        ),
        (
            "You can return an item without a receipt.",
            "You can return an item with a receipt.",
            'the reference says "without" and the answer does not',
        ),
        (
            "Deposits are non-refundable.",
            "Deposits are refundable.",
            'the reference says "non-" and the answer does not',
        ),
        ("支持港澳台地址配送", "不支持港澳台地址配送。", 'the answer says "不" and the reference does not'),
        ("定制商品有退货服务", "定制商品没退货服务。", 'the answer says "没" and the reference does not'),
        ("该商品有保修", "该商品无保修。", 'the answer says "无" and the reference does not'),
        ("会员商品可享受退货", "非会员商品可享受退货。", 'the answer says "非" and the reference does not'),
        ("商品已使用可退货", "商品未使用可退货。", 'the answer says "未" and the reference does not'),
        ("收货前请拆封检查", "收货前请别拆封。", 'the answer says "别" and the reference does not'),
    ],
)
def test_a_point_and_its_clause_that_differ_in_negation_are_contradicted(point: str, answer: str, reason: str) -> None:
    (judged,) = judge_points([point], answer)
    assert (judged.verdict, judged.quote, judged.reason) == ("contradicted", answer.rstrip("。."), reason)


@pytest.mark.parametrize(
    ("point", "answer", "reason"),
    [
        # Words that hold a cue's letters without negating.
        ("客服态度好", "客服态度非常好。", "75% of its words appear in the answer"),
        ("支持七天退货", "支持7天无理由退货。", "75% of its words appear in the answer"),
        ("请使用人脸识别验证", "可通过人脸识别验证身份。", "62% of its words appear in the answer"),
        (
            "Returns must be requested within 30 days",
            "Returns must be requested no later than 30 days after delivery.",
            "83% of its words appear in the answer",
        ),
        # 、 lists what one predicate is said of: the 无法 at its end is the point's too.
        ("注销后账户信息无法恢复", "注销后账户信息、订单记录都无法恢复。", "100% of its words appear in the answer"),
        # A negation elsewhere in the answer's sentence, on the point's words, reaches the clause paired with it.
        (
            "Gift cards are not refundable",
            "Gift cards, downloads and sale items are not refundable.",
            "100% of its words appear in the answer",
        ),
        # A contrasting or conditional clause's negation is its own.
        (
            "Return shipping is free",
            "Return shipping is free but exchanges are not.",
            "100% of its words appear in the answer",
        ),
        (
            "Return shipping is free",
            "Return shipping is free if the item is not damaged.",
            "100% of its words appear in the answer",
        ),
        # A question states nothing: the answer's "No" is not read, and the question does not contradict.
        ("Gift cards cannot be returned", "Can gift cards be returned? No.", "100% of its words appear in the answer"),
        # Of the answer's clauses that pair equally well, one that agrees is enough.
        (
            "Return shipping is not free",
            "Return shipping is free for members. Return shipping is not free for guests.",
            "100% of its words appear in the answer",
        ),
        # A number the point states anywhere in the answer is no contradiction, though another stands beside it.
        (
            "Express shipping costs $12.99",
            "Express shipping costs $9.99 for members and $12.99 for guests.",
            "100% of its words appear in the answer",
        ),
    ],
)
def test_what_is_not_read_as_a_contradiction(point: str, answer: str, reason: str) -> None:
    (judged,) = judge_points([point], answer)
    assert (judged.verdict, judged.reason) == ("covered", reason)


def test_an_enumeration_does_not_hide_the_negation_at_its_end() -> None:
    (judged,) = judge_points(["注销后账户信息可以恢复"], "注销后账户信息、订单记录都无法恢复。")
    assert (judged.verdict, judged.reason) == ("contradicted", 'the answer says "无法" and the reference does not')


@pytest.mark.parametrize(
    ("point", "answer", "reason"),
    [
        (
            "Express shipping costs $12.99",
            "Express shipping costs $9.99.",
            "the answer says 9.99 where the reference says 12.99",
        ),
        (
            "Accounts are locked after 5 failed attempts",
            "Accounts are locked after three failed attempts.",
            "the answer says three where the reference says 5",
        ),
        # A comma between digits separates thousands; it ends no clause.
        (
            "Orders over $1,000 ship free",
            "Orders over $1,500 ship free.",
            "the answer says 1,500 where the reference says 1,000",
        ),
        ("每个订单仅可修改一次", "每个订单可修改两次。", "the answer says 两次 where the reference says 一次"),
        # The point's 2 said as a quantity (2 天) is another number: it does not save the point's 2 件.
        ("单笔订单满 2 件包邮", "单笔订单满 3 件包邮，2 天送达。", "the answer says 3 where the reference says 2"),
    ],
)
def test_a_clause_that_states_another_number_without_a_unit_is_contradicted(
    point: str, answer: str, reason: str
) -> None:
    (judged,) = judge_points([point], answer)
    assert (judged.verdict, judged.reason) == ("contradicted", reason)


@pytest.mark.parametrize("point", ["the", "---", "not", "不"])
def test_a_point_with_no_words_to_look_for_is_missing_with_the_reason(point: str) -> None:
    # Decided: missing, not skipped. A person wrote the point; nothing in the answer can be shown to state it,
    # and skipping it would raise answer_correctness over a reference nobody can check.
    assert judge_points(f"{point}；需提供订单号", "需提供订单号。") == (
        ReferencePoint(point, "missing", "", "the point has no words to look for"),
        ReferencePoint("需提供订单号", "covered", "需提供订单号", "100% of its words appear in the answer"),
    )


def test_a_point_with_exactly_half_its_words_in_the_answer_is_missing_and_just_over_half_covered() -> None:
    # The threshold is "more than half": 1 of 2 words is missing, 6 of 11 covered.
    assert judge_point("alpha bravo", "alpha only here.") == ReferencePoint(
        "alpha bravo", "missing", "", "only 50% of its words appear in the answer (needs over 50%)"
    )
    eleven = "apple banana cherry date elder fig grape honeydew iris jasmine kiwi"
    assert judge_point(eleven, "apple banana cherry date elder fig.") == ReferencePoint(
        eleven, "covered", "apple banana cherry date elder fig", "55% of its words appear in the answer"
    )


def test_a_clause_is_paired_only_when_it_holds_more_than_half_of_the_points_words() -> None:
    # 1 of 2 words: not paired, so its "never" is not compared (and the point is missing, at 50%).
    assert judge_point("Returns are free", "Returns are never accepted.").verdict == "missing"
    # 2 of 3: paired, and its "never" contradicts.
    assert judge_point("Returns are free online", "Returns are never accepted online.") == ReferencePoint(
        "Returns are free online",
        "contradicted",
        "Returns are never accepted online",
        'the answer says "never" and the reference does not',
    )


def test_an_answer_of_questions_only_contradicts_nothing() -> None:
    assert judge_point("Gift cards cannot be returned", "Can gift cards be returned?") == ReferencePoint(
        "Gift cards cannot be returned",
        "covered",
        "Can gift cards be returned",
        "100% of its words appear in the answer",
    )


def test_a_covered_point_quotes_the_first_sentence_holding_the_most_of_its_words() -> None:
    answer = "Refunds go to your card. Exchanges are quick. Refunds go to your card, always."
    assert judge_point("Refunds go to the card", answer).quote == "Refunds go to your card"
    assert judge_point("Refunds always go to the card", answer).quote == "Refunds go to your card, always"
    # Words spread one a sentence: the first sentence holding one, not the whole answer.
    assert judge_point("alpha bravo", "alpha here. bravo there.").quote == "alpha here"


def test_a_contradiction_quotes_the_answers_sentence_that_contradicts_not_its_first_figure(tmp_path: Path) -> None:
    # The example service's refund document edited as a PR would: card refunds in 7-10 business days, not 3-5.
    import importlib
    import json

    service = importlib.import_module("ragjudge.examples.rag_service")
    examples = Path(service.__file__).parent
    docs = json.loads((examples / "corpus" / "docs.json").read_text(encoding="utf-8"))
    edited = [{**d, "text": d["text"].replace("refunds take 3-5", "refunds take 7-10")} for d in docs]
    (tmp_path / "docs.json").write_text(json.dumps(edited), encoding="utf-8")
    pr = service.RagService(service.load_corpus(tmp_path / "docs.json"))
    case = next(c for c in yaml.safe_load((examples / "cases" / "anchors.yaml").read_text()) if c["id"] == "cs-003")
    answer = pr.answer(case["question"])["answer"]
    assert "within 1 business day" in answer  # a figure in the same unit comes first in the answer

    judged = judge_points(case["expected"], answer)
    contradicted = [p for p in judged if p.verdict == "contradicted"]
    assert [(p.point, p.quote) for p in contradicted] == [
        (
            "card refunds then take 3-5 business days to appear.",
            "Credit card refunds take 7-10 business days to appear on your statement",
        )
    ]
