"""Deterministic conditions: one exact line of reason per failed condition."""

from __future__ import annotations

import pytest

from ragjudge.gate.checks import DECLINED, mechanical_failures
from tests.fakes.rag import make_case, make_trace


def test_declined_reason_text() -> None:
    assert DECLINED == "declined a question the corpus covers"


def test_an_answer_that_meets_everything_has_no_failures() -> None:
    case = make_case(must_mention=["5 days"], must_not_mention=["30 days"])
    assert mechanical_failures(case, make_trace("Refunds take 5 days.")) == []


def test_missing_required_detail_quotes_the_phrase() -> None:
    case = make_case(must_mention=["order number", "7 days"])
    failures = mechanical_failures(case, make_trace("Refunds are possible within 7 days."))
    assert failures == ['missing required detail: "order number"']


def test_every_missing_detail_is_its_own_line_in_case_order() -> None:
    case = make_case(must_mention=["Order Number", "receipt", "退款"])
    failures = mechanical_failures(case, make_trace("Nothing useful here."))
    assert failures == [
        'missing required detail: "Order Number"',
        'missing required detail: "receipt"',
        'missing required detail: "退款"',
    ]


@pytest.mark.parametrize("answer", ["Keep your ORDER NUMBER ready.", "keep your order number ready", "Order Number"])
def test_required_detail_matches_case_insensitively(answer: str) -> None:
    case = make_case(must_mention=["Order number"])
    assert mechanical_failures(case, make_trace(answer)) == []


def test_required_detail_in_chinese() -> None:
    case = make_case(must_mention=["订单号"])
    assert mechanical_failures(case, make_trace("请提供订单号。")) == []
    assert mechanical_failures(case, make_trace("请提供手机号。")) == ['missing required detail: "订单号"']


def test_forbidden_claim_quotes_the_phrase_case_insensitively() -> None:
    case = make_case(must_not_mention=["Free Shipping", "insured"])
    failures = mechanical_failures(case, make_trace("We offer FREE SHIPPING on every order. Parcels are INSURED."))
    assert failures == ['contains forbidden claim: "Free Shipping"', 'contains forbidden claim: "insured"']


def test_forbidden_claim_absent_passes() -> None:
    case = make_case(must_not_mention=["free shipping"])
    assert mechanical_failures(case, make_trace("Shipping costs 10 yuan.")) == []


def test_declined_an_in_scope_question() -> None:
    case = make_case(should_answer=True)
    trace = make_trace("Sorry, I cannot help with that.", refused=True, confidence="none")
    assert mechanical_failures(case, trace) == ["declined a question the corpus covers"]


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_an_empty_answer_to_an_in_scope_question_counts_as_declined(blank: str) -> None:
    case = make_case(should_answer=True)
    assert mechanical_failures(case, make_trace(blank, refused=False)) == ["declined a question the corpus covers"]


@pytest.mark.parametrize("confidence", ["high", "medium", "low"])
def test_out_of_scope_answered_with_confidence_fails_quoting_it(confidence: str) -> None:
    case = make_case(category="out_of_scope", should_answer=False)
    trace = make_trace("The weather in Paris is sunny.", confidence=confidence)
    assert mechanical_failures(case, trace) == [f'answered an out-of-scope question with confidence "{confidence}"']


def test_out_of_scope_answered_without_a_stated_confidence_fails() -> None:
    case = make_case(category="超纲", should_answer=False)
    trace = make_trace("It will rain tomorrow.", confidence=None)
    assert mechanical_failures(case, trace) == ['answered an out-of-scope question with confidence "not stated"']


def test_out_of_scope_with_confidence_none_does_not_fail() -> None:
    case = make_case(category="out_of_scope", should_answer=False)
    trace = make_trace("I am not sure, this is outside what I know.", confidence="none")
    assert mechanical_failures(case, trace) == []


@pytest.mark.parametrize("confidence", ["high", "none", None])
def test_out_of_scope_refused_does_not_fail_whatever_the_confidence(confidence: str | None) -> None:
    case = make_case(category="out_of_scope", should_answer=False)
    trace = make_trace("Sorry, I don't know.", refused=True, confidence=confidence)
    assert mechanical_failures(case, trace) == []


def test_an_out_of_scope_refusal_is_not_declined() -> None:
    # "declined a question the corpus covers" is only for in-scope cases.
    case = make_case(should_answer=False)
    assert DECLINED not in mechanical_failures(case, make_trace("", refused=True))


def test_all_conditions_are_listed_together_in_order() -> None:
    case = make_case(
        category="out_of_scope",
        should_answer=False,
        must_mention=["policy"],
        must_not_mention=["guaranteed"],
    )
    trace = make_trace("Your money is guaranteed to grow.", confidence="high")
    assert mechanical_failures(case, trace) == [
        'missing required detail: "policy"',
        'contains forbidden claim: "guaranteed"',
        'answered an out-of-scope question with confidence "high"',
    ]


def test_declined_with_missing_details_lists_both() -> None:
    case = make_case(must_mention=["5 days"])
    trace = make_trace("Sorry, I can't answer that.", refused=True)
    assert mechanical_failures(case, trace) == [
        'missing required detail: "5 days"',
        "declined a question the corpus covers",
    ]
