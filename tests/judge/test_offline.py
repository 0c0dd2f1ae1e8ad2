"""The offline judge: lexical claim support, deterministic, no model."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ragjudge.judge.interface import NEGATIVE_DIMENSIONS, NO_SOURCES_NOTE, RUBRIC_DIMENSIONS
from ragjudge.judge.offline import NAME, NOTE, OfflineJudge
from ragjudge.judge.text import has_cjk, split_claims, tokens
from tests.fakes.rag import make_case, make_trace

REFUND_ZH = "退款需要提供订单号和购买凭证"


def _judge(answer: str, passages: dict[str, str], **kw: Any) -> Any:
    case = kw.pop("case", make_case())
    judge = OfflineJudge(kw.pop("min_overlap", 0.5))
    trace = make_trace(answer, ids=list(passages), passages=passages, **kw)
    logged: list[dict[str, Any]] = []
    judgement = judge.judge(case, trace, logged.append)
    return judgement, logged


# --- splitting into claims ----------------------------------------------------------------------


def test_claims_split_on_cjk_punctuation() -> None:
    assert split_claims("退款需要订单号。请在7天内申请！运费由买家承担？发票可以重开；") == [
        "退款需要订单号。",
        "请在7天内申请！",
        "运费由买家承担？",
        "发票可以重开；",
    ]


def test_cjk_comma_does_not_split_a_sentence() -> None:
    assert split_claims("退款需要订单号，运费由买家承担。") == ["退款需要订单号，运费由买家承担。"]


def test_claims_split_on_ascii_punctuation_and_newlines() -> None:
    text = (
        "Refunds take 5 days. Keep the receipt! Is shipping free? Invoices are sent by email; keep them\nCall us today"
    )
    assert split_claims(text) == [
        "Refunds take 5 days.",
        "Keep the receipt!",
        "Is shipping free?",
        "Invoices are sent by email;",
        "keep them",
        "Call us today",
    ]


def test_a_decimal_point_does_not_split() -> None:
    assert split_claims("The fee is 3.5 dollars per parcel.") == ["The fee is 3.5 dollars per parcel."]


def test_citation_markers_after_a_full_stop_are_not_a_claim_of_their_own() -> None:
    # hayhooks-style answers cite after the sentence: "[refund-policy]" alone would be an unsupported claim.
    assert split_claims("Refunds are issued within 14 days. [refund-policy]") == ["Refunds are issued within 14 days."]
    assert split_claims("退款在收到退货后14天内处理。 [退款政策]") == ["退款在收到退货后14天内处理。"]
    assert split_claims("运费由商家承担。【质量问题退换货】【doc-3】") == ["运费由商家承担。"]
    assert split_claims("Refunds take 5 days [doc-1]. See [the policy page] for more.") == [
        "Refunds take 5 days [doc-1].",
        "See [the policy page] for more.",
    ]


def test_fragments_with_fewer_than_two_tokens_are_not_claims() -> None:
    assert split_claims("Yes. Done! 好。Refunds take five days.") == ["Refunds take five days."]


def test_list_bullets_are_stripped() -> None:
    assert split_claims("- Refunds take five days\n* Keep the receipt") == [
        "Refunds take five days",
        "Keep the receipt",
    ]


def test_mixed_language_answer() -> None:
    assert split_claims("退款需要订单号。Refunds need an order number.") == [
        "退款需要订单号。",
        "Refunds need an order number.",
    ]


# --- tokens -------------------------------------------------------------------------------------


def test_cjk_text_becomes_character_bigrams() -> None:
    assert tokens("退款需要") == {"退款", "款需", "需要"}


def test_a_lone_cjk_character_is_its_own_token() -> None:
    assert tokens("好") == {"好"}
    assert tokens("7天") == {"7", "天"}


def test_words_are_lowercased_without_stop_words() -> None:
    assert tokens("The Refund is 5 DAYS, and it's fine") == {"refund", "5", "days", "it's", "fine"}


def test_tokens_of_mixed_text() -> None:
    assert tokens("退款 refund") == {"退款", "refund"}


def test_has_cjk() -> None:
    assert has_cjk("退款") is True
    assert has_cjk("refund") is False


# --- judging ------------------------------------------------------------------------------------


def test_identity() -> None:
    judge = OfflineJudge()
    assert judge.name == NAME == "offline-lexical"
    assert judge.lexical is True
    assert NOTE == "offline judge: lexical overlap only (words and CJK bigrams); rubric dimensions not assessed"


def test_faithfulness_is_supported_over_total_with_cjk_bigram_overlap() -> None:
    judgement, _ = _judge("退款需要订单号。运费由买家承担。", {"doc-refund-1": REFUND_ZH})
    assert judgement.faithfulness == 0.5
    supported, unsupported = judgement.claims
    # 5 of the claim's 6 bigrams (退款 款需 需要 订单 单号, not 要订) are in the passage.
    assert (supported.claim, supported.supported, supported.evidence_id) == ("退款需要订单号。", True, "doc-refund-1")
    assert supported.reason == "83% of its words appear in passage doc-refund-1"
    assert (unsupported.claim, unsupported.supported, unsupported.evidence_id) == ("运费由买家承担。", False, None)
    assert unsupported.reason == "at most 0% of its words appear in any passage (needs 50%)"


def test_english_claims_against_the_best_passage() -> None:
    passages = {"d1": "Invoices are emailed within one day.", "d2": "Refunds take five working days after approval."}
    judgement, _ = _judge("Refunds take five working days. Shipping is always free.", passages)
    assert judgement.faithfulness == 0.5
    first, second = judgement.claims
    assert (first.supported, first.evidence_id) == (True, "d2")
    assert first.reason == "100% of its words appear in passage d2"
    assert second.supported is False
    assert second.reason == "at most 0% of its words appear in any passage (needs 50%)"


def test_every_claim_supported_is_faithfulness_one() -> None:
    judgement, _ = _judge("退款需要订单号。", {"d1": REFUND_ZH})
    assert judgement.faithfulness == 1.0


def test_support_needs_min_overlap_within_one_passage() -> None:
    # Claim tokens: refunds, take, five, days. d1 has 1 of 4, d2 ("takes" is not "take") has 2 of 4.
    passages = {"d1": "refunds are possible", "d2": "delivery takes five days"}
    judgement, _ = _judge("Refunds take five days.", passages, min_overlap=0.75)
    (claim,) = judgement.claims
    assert claim.supported is False
    assert claim.reason == "at most 50% of its words appear in any passage (needs 75%)"
    judgement, _ = _judge("Refunds take five days.", passages, min_overlap=0.5)
    assert judgement.claims[0].supported is True


def test_a_refusal_has_no_faithfulness() -> None:
    case = make_case(category="out_of_scope", should_answer=False)
    judgement, _ = _judge("Sorry, I do not know that.", {"d1": "Sorry, I do not know that."}, refused=True, case=case)
    assert judgement.faithfulness is None
    assert judgement.claims == ()


def test_an_answer_without_claims_has_no_faithfulness() -> None:
    judgement, _ = _judge("Yes.", {"d1": "Yes indeed."})
    assert judgement.faithfulness is None


def test_passages_without_text_are_not_evidence() -> None:
    judgement, _ = _judge("Refunds take five days.", {"d1": ""})
    (claim,) = judgement.claims
    assert claim.supported is False
    assert claim.reason == "no passage text was retrieved"
    assert judgement.faithfulness == 0.0


def test_rubric_dimensions_are_unassessable_and_unscored() -> None:
    judgement, _ = _judge("Refunds take five days.", {"d1": "Refunds take five days."})
    assert judgement.unassessable == RUBRIC_DIMENSIONS
    assert dict(judgement.scores) == {}
    assert judgement.unscored == ()
    assert judgement.notes == (NOTE,)
    assert judgement.judge == "offline-lexical"


def test_out_of_scope_cases_list_the_negative_dimensions_as_unassessable() -> None:
    case = make_case(category="out_of_scope", should_answer=False)
    judgement, _ = _judge("It is sunny.", {}, case=case)
    assert judgement.unassessable == NEGATIVE_DIMENSIONS


def test_the_judgement_is_logged() -> None:
    _, logged = _judge("退款需要订单号。运费由买家承担。", {"d1": REFUND_ZH})
    assert logged == [
        {
            "judge_kind": "faithfulness",
            "model": "offline-lexical",
            "claims": 2,
            "supported": 1,
            "faithfulness": 0.5,
            "cache_hit": False,
        }
    ]


@pytest.mark.parametrize("answer", ["退款需要订单号。运费由买家承担。", "Refunds take five days. Shipping is free."])
def test_the_judge_is_deterministic(answer: str) -> None:
    passages = {"d1": REFUND_ZH, "d2": "Refunds take five days."}
    first, _ = _judge(answer, passages)
    second, _ = _judge(answer, passages)
    assert first == second


def test_unknown_passages_are_not_checked_claim_by_claim() -> None:
    trace = dataclasses.replace(make_trace("Refunds take 5 days. Shipping is free."), passages_unknown=True)
    judgement = OfflineJudge().judge(make_case(), trace, lambda fields: None)
    assert (judgement.faithfulness, judgement.claims) == (None, ())
    assert judgement.notes == (NOTE, NO_SOURCES_NOTE)
    # No passages at all, but known to be none: every claim is unsupported, as before.
    known = OfflineJudge().judge(make_case(), make_trace("Refunds take 5 days."), lambda fields: None)
    assert (known.faithfulness, known.claims[0].reason) == (0.0, "no passage text was retrieved")
