"""One case: status pass/fail/error, its metrics, and the reason for every failed condition."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from ragjudge.cases.case import Case
from ragjudge.gate.scoring import RunRecord, rules_need_judge, score_case
from ragjudge.judge.interface import Claim, Judgement, Unscored
from ragjudge.judge.offline import OfflineJudge
from ragjudge.judge.reference import ReferencePoint
from ragjudge.report.case_block import RunBlock
from ragjudge.rules import Rule, parse_rules
from tests.fakes.rag import error_result, make_case, make_trace, ok_result

DEFAULT_CASE_RULES = parse_rules({"context_recall": ">= 1.0", "latency_ms": "<= 10000"}, "case", "gate.case")
FAITH = Rule("case", "faithfulness", ">=", 0.8)


def _claims(*supported: tuple[str, bool]) -> tuple[Claim, ...]:
    return tuple(Claim(text, ok, "d1" if ok else None, "r") for text, ok in supported)


def test_a_good_answer_passes_with_its_metrics() -> None:
    case = make_case(golden=["d1", "d2"])
    trace = make_trace("Refunds take 5 days.", ids=["d1", "x", "d2"], latency_ms=123.456, cost_usd=0.002)
    result = score_case(case, ok_result(trace), None, DEFAULT_CASE_RULES)
    assert result.status == "pass"
    assert result.failed_conditions == ()
    assert result.metrics == {
        "context_recall": 1.0,
        "context_precision": (1 + 1 / 3) / 3,
        "latency_ms": 123.5,
        "cost_usd": 0.002,
        "faithfulness": None,
    }


def test_context_recall_rule_failure_reason() -> None:
    case = make_case(golden=["d1", "d2"])
    result = score_case(case, ok_result(make_trace(ids=["d1"])), None, DEFAULT_CASE_RULES)
    assert result.status == "fail"
    assert result.failed_conditions == ("context_recall 0.500 < 1 (missing d2; retrieved d1)",)


def test_latency_rule_failure_reason() -> None:
    result = score_case(make_case(), ok_result(make_trace(latency_ms=12034.2)), None, DEFAULT_CASE_RULES)
    assert result.status == "fail"
    assert result.failed_conditions == ("latency_ms 12034 > 10000",)


def test_latency_exactly_at_the_threshold_passes() -> None:
    result = score_case(make_case(), ok_result(make_trace(latency_ms=10000.0)), None, DEFAULT_CASE_RULES)
    assert result.status == "pass"


def test_faithfulness_failure_quotes_the_unsupported_claims() -> None:
    judgement = Judgement(
        judge="offline-lexical",
        faithfulness=0.5,
        claims=_claims(("Refunds take 5 days.", True), ("Shipping is always free.", False)),
    )
    result = score_case(make_case(), ok_result(make_trace()), judgement, [FAITH])
    assert result.status == "fail"
    assert result.failed_conditions == (
        'faithfulness 0.500 < 0.8 (1 of 2 claims unsupported: "Shipping is always free.")',
    )
    assert result.metrics["faithfulness"] == 0.5


def test_faithfulness_failure_quotes_two_claims_then_counts_the_rest() -> None:
    judgement = Judgement(
        judge="offline-lexical",
        faithfulness=0.2,
        claims=_claims(("One is true.", True), ("Two.", False), ("Three.", False), ("Four.", False), ("Five.", False)),
    )
    result = score_case(make_case(), ok_result(make_trace()), judgement, [FAITH])
    assert result.failed_conditions == (
        'faithfulness 0.200 < 0.8 (4 of 5 claims unsupported: "Two.", "Three." and 2 more)',
    )


def test_a_long_unsupported_claim_is_excerpted_to_80_characters() -> None:
    long_claim = "word " * 40
    judgement = Judgement(judge="j", faithfulness=0.0, claims=_claims((long_claim, False)))
    (reason,) = score_case(make_case(), ok_result(make_trace()), judgement, [FAITH]).failed_conditions
    quoted = reason.split('"')[1]
    assert len(quoted) == 80
    assert quoted.endswith("…")


def test_endpoint_error_makes_an_error_case_with_the_reason() -> None:
    result = score_case(
        make_case(), error_result("endpoint error: HTTP 500 after 3 attempts"), None, DEFAULT_CASE_RULES
    )
    assert result.status == "error"
    assert result.failed_conditions == ("endpoint error: HTTP 500 after 3 attempts",)
    # Every metric key stays, with null: a reader never has to guess whether a key was forgotten.
    assert result.metrics == {
        "context_recall": None,
        "context_precision": None,
        "latency_ms": None,
        "cost_usd": None,
        "faithfulness": None,
    }
    assert result.judgement is None


def test_an_unscored_faithfulness_needed_by_a_rule_is_an_error_not_a_pass() -> None:
    judgement = Judgement(
        judge="gpt-x", unscored=(Unscored("faithfulness", "the judge reply was not valid JSON after 3 tries"),)
    )
    result = score_case(make_case(), ok_result(make_trace()), judgement, [FAITH])
    assert result.status == "error"
    assert result.failed_conditions == ("faithfulness unscored: the judge reply was not valid JSON after 3 tries",)


def test_an_unscored_judgement_no_rule_needs_does_not_error() -> None:
    judgement = Judgement(judge="gpt-x", unscored=(Unscored("faithfulness", "broken"),))
    result = score_case(make_case(), ok_result(make_trace()), judgement, DEFAULT_CASE_RULES)
    assert result.status == "pass"


def test_an_error_also_lists_the_conditions_that_failed() -> None:
    case = make_case(must_mention=["receipt"])
    judgement = Judgement(judge="gpt-x", unscored=(Unscored("faithfulness", "timeout"),))
    result = score_case(case, ok_result(make_trace()), judgement, [FAITH])
    assert result.status == "error"
    assert result.failed_conditions == ("faithfulness unscored: timeout", 'missing required detail: "receipt"')


def test_a_rule_needing_a_judge_with_no_judge_is_an_error() -> None:
    result = score_case(make_case(), ok_result(make_trace()), None, [FAITH])
    assert result.status == "error"
    assert result.failed_conditions == ("faithfulness: no judge ran",)


def test_faithfulness_of_a_refusal_does_not_apply() -> None:
    case = make_case(category="out_of_scope", should_answer=False)
    trace = make_trace("Sorry, I don't know.", refused=True, confidence="none")
    judgement = OfflineJudge().judge(case, trace, lambda _: None)
    assert judgement.faithfulness is None
    result = score_case(case, ok_result(trace), judgement, [FAITH])
    assert result.status == "pass"
    assert result.skipped_rules == ("faithfulness not applicable: the answer makes no claims",)


def test_context_precision_rule_is_skipped_without_golden_ids() -> None:
    rules = [Rule("case", "context_precision", ">=", 0.5)]
    result = score_case(make_case(golden=[]), ok_result(make_trace(ids=["x"])), None, rules)
    assert result.status == "pass"
    assert result.skipped_rules == ("no golden_context_ids for this case",)
    assert result.metrics["context_precision"] is None


def test_context_precision_rule_failure() -> None:
    rules = [Rule("case", "context_precision", ">=", 0.5)]
    result = score_case(make_case(golden=["a"]), ok_result(make_trace(ids=["x", "a"])), None, rules)
    assert result.failed_conditions == ("context_precision 0.250 < 0.5 (not golden: x)",)


def test_cost_rule_without_a_reported_cost_is_an_error() -> None:
    rules = [Rule("case", "cost_usd", "<=", 0.01)]
    result = score_case(make_case(), ok_result(make_trace(cost_usd=None)), None, rules)
    assert result.status == "error"
    assert result.failed_conditions == ("the endpoint reported no cost_usd/costUsd",)


def test_cost_rule_failure() -> None:
    rules = [Rule("case", "cost_usd", "<=", 0.01)]
    result = score_case(make_case(), ok_result(make_trace(cost_usd=0.0312)), None, rules)
    assert result.failed_conditions == ("cost_usd 0.0312 > 0.0100",)


def test_judge_dimension_rule_is_skipped_when_the_offline_judge_cannot_assess_it() -> None:
    case = make_case()
    trace = make_trace(
        "Refunds take five working days.", ids=["d1"], passages={"d1": "Refunds take five working days."}
    )
    judgement = OfflineJudge().judge(case, trace, lambda _: None)
    rules = [Rule("case", "judge.grounding", ">=", 4)]
    result = score_case(case, ok_result(trace), judgement, rules)
    assert result.status == "pass"
    assert result.skipped_rules == ("judge.grounding not assessable by offline-lexical for this case",)


def test_judge_dimension_failure_appends_the_judges_reason() -> None:
    judgement = Judgement(judge="gpt-x", scores={"grounding": 2.0}, reasoning={"grounding": "cites nothing\nat all"})
    rules = [Rule("case", "judge.grounding", ">=", 4)]
    result = score_case(make_case(), ok_result(make_trace()), judgement, rules)
    assert result.status == "fail"
    assert result.failed_conditions == ("judge.grounding 2 < 4: cites nothing at all",)
    assert result.metrics["judge.grounding"] == 2.0


def test_judge_dimension_unscored_is_an_error() -> None:
    judgement = Judgement(judge="gpt-x", unscored=(Unscored("rubric", "model refused"),))
    rules = [Rule("case", "judge.tone", ">=", 4)]
    result = score_case(make_case(), ok_result(make_trace()), judgement, rules)
    assert result.status == "error"
    assert result.failed_conditions == ("judge.tone unscored: model refused",)


def test_mechanical_and_rule_failures_are_all_listed() -> None:
    case = make_case(golden=["d1", "d2"], must_mention=["receipt"], must_not_mention=["free"])
    trace = make_trace("Shipping is free.", ids=["d2"], latency_ms=20000)
    result = score_case(case, ok_result(trace), None, DEFAULT_CASE_RULES)
    assert result.status == "fail"
    assert result.failed_conditions == (
        'missing required detail: "receipt"',
        'contains forbidden claim: "free"',
        "context_recall 0.500 < 1 (missing d1; retrieved d2)",
        "latency_ms 20000 > 10000",
    )


def test_a_declined_in_scope_case_fails_even_though_recall_counts_the_refusal() -> None:
    case = make_case(golden=["d1"])
    result = score_case(case, ok_result(make_trace("", refused=True)), None, DEFAULT_CASE_RULES)
    assert result.status == "fail"
    assert result.failed_conditions == ("declined a question the corpus covers",)
    assert result.metrics["context_recall"] == 1.0


def test_rules_need_judge() -> None:
    assert rules_need_judge([FAITH]) is True
    assert rules_need_judge([Rule("case", "judge.tone", ">=", 3)]) is True
    assert rules_need_judge(DEFAULT_CASE_RULES) is False
    assert rules_need_judge([]) is False


def test_a_case_with_no_reply_carries_every_rules_metric_as_null() -> None:
    rules = parse_rules(
        {"context_recall": ">= 1.0", "judge.relevance": ">= 0.5", "criteria.polite": ">= 0.5", "ttft_ms": "<= 900"},
        "case",
        "gate.case",
    )
    result = score_case(make_case(), error_result("endpoint error: HTTP 500 after 3 attempts"), None, rules)
    assert (result.status, result.failed_conditions) == ("error", ("endpoint error: HTTP 500 after 3 attempts",))
    assert result.metrics == {
        "context_recall": None,
        "context_precision": None,
        "latency_ms": None,
        "cost_usd": None,
        "faithfulness": None,
        "judge.relevance": None,
        "criteria.polite": None,
        "ttft_ms": None,
    }
    assert list(result.metrics)[:5] == ["context_recall", "context_precision", "latency_ms", "cost_usd", "faithfulness"]


def _with_reference(expected: str | tuple[str, ...] | None = "Refunds take 5 days.") -> Case:
    return dataclasses.replace(make_case(), expected=expected)


def _point(point: str, verdict: str) -> ReferencePoint:
    return ReferencePoint(point, verdict, "" if verdict == "missing" else "Refunds take", "r")  # type: ignore[arg-type]


ANSWER_CORRECT = Rule("case", "answer_correctness", ">=", 0.8)


def test_a_reference_the_judge_could_not_read_leaves_the_case_error() -> None:
    judgement = Judgement(judge="j", unscored=(Unscored("reference", "the reply was cut off"),))
    result = score_case(_with_reference(), ok_result(make_trace()), judgement, [ANSWER_CORRECT])
    assert result.status == "error"
    # One cause, said once, naming what it left unscored.
    assert result.failed_conditions == ("reference and answer_correctness unscored: the reply was cut off",)
    quiet = score_case(_with_reference(), ok_result(make_trace()), Judgement(judge="j"), [ANSWER_CORRECT])
    assert (quiet.status, quiet.skipped_rules) == (
        "pass",
        ("answer_correctness not applicable: the reference was not judged for this reply",),
    )


def test_a_case_without_a_reference_skips_the_reference_rule() -> None:
    judgement = Judgement(judge="j", unscored=(Unscored("reference", "x"),))
    result = score_case(_with_reference(None), ok_result(make_trace()), judgement, [ANSWER_CORRECT])
    assert (result.status, result.skipped_rules) == (
        "pass",
        ("answer_correctness not applicable: the case has no reference answer (expected)",),
    )


def test_a_reference_case_with_no_judge_is_not_a_crash() -> None:
    result = score_case(_with_reference(), ok_result(make_trace()), None, [ANSWER_CORRECT])
    assert (result.status, result.failed_conditions) == ("error", ("answer_correctness: no judge ran",))


def test_a_reference_with_no_points_skips_the_rule() -> None:
    judgement = Judgement(judge="j", reference_points=())
    result = score_case(_with_reference(), ok_result(make_trace()), judgement, [ANSWER_CORRECT])
    assert (result.status, result.skipped_rules) == ("pass", ("answer_correctness: the reference has no points",))


def test_answer_correctness_failure_names_the_missed_points() -> None:
    points = (_point("5 days", "covered"), _point("order number", "missing"), _point("receipt", "partial"))
    judgement = Judgement(judge="j", reference_points=points)
    result = score_case(_with_reference(), ok_result(make_trace()), judgement, [ANSWER_CORRECT])
    assert result.status == "fail"
    assert result.failed_conditions == (
        'answer_correctness 0.500 < 0.8 (misses a reference point: "order number"; partly: "receipt")',
    )


def test_a_decline_read_by_the_judge_is_a_refusal() -> None:
    result = score_case(make_case(), ok_result(make_trace("Ask support.")), Judgement(judge="j", declined=True), [])
    assert result.endpoint.trace is not None
    assert (result.endpoint.trace.refused, result.endpoint.trace.refused_by) == (True, "judge")


def test_two_unsupported_claims_are_quoted_with_no_more() -> None:
    judgement = Judgement(judge="j", faithfulness=0.0, claims=_claims(("One.", False), ("Two.", False)))
    result = score_case(make_case(), ok_result(make_trace()), judgement, [FAITH])
    assert result.failed_conditions == ('faithfulness 0.000 < 0.8 (2 of 2 claims unsupported: "One.", "Two.")',)


def test_ten_missing_ids_are_listed_with_no_more() -> None:
    golden = [f"g{i}" for i in range(10)]
    result = score_case(make_case(golden=golden), ok_result(make_trace(ids=["x"])), None, DEFAULT_CASE_RULES)
    assert result.failed_conditions == (
        "context_recall 0.000 < 1 (missing g0, g1, g2, g3, g4, g5, g6, g7, g8, g9; retrieved x)",
    )


def test_a_run_record_round_trips_and_reads_missing_usage_as_zero() -> None:
    judgement = Judgement(judge="j", tokens=120, cost_usd=0.003, calls=2, cache_hits=1)
    result = score_case(make_case(), ok_result(make_trace(latency_ms=123.456, cost_usd=0.01)), judgement, [])
    saved = result.record().as_saved()
    assert saved.model_dump() == {
        "status": "pass",
        "failed_conditions": [],
        "latency_ms": 123.5,
        "cost_usd": 0.01,
        "judge_calls": 2,
        "judge_tokens": 120,
        "judge_cost_usd": 0.003,
        "judge_cache_hits": 1,
    }
    assert RunRecord.of_saved(saved).as_saved() == saved
    assert RunRecord.of_saved(RunBlock(status="fail")) == RunRecord("fail", (), None, None, 0, 0, 0.0, 0)
    nulls = RunBlock.model_validate({"status": "fail", "judge_calls": None, "judge_cost_usd": None})
    assert RunRecord.of_saved(nulls) == RunRecord("fail", (), None, None, 0, 0, 0.0, 0)
    # A run is typed like the case it belongs to: a status that is none of the three is not a run ragjudge wrote.
    with pytest.raises(ValidationError, match="Input should be 'pass', 'fail' or 'error'"):
        RunBlock.model_validate({"status": "odd"})
    errored = score_case(make_case(), error_result("endpoint error: HTTP 500"), None, []).record()
    assert errored == RunRecord("error", ("endpoint error: HTTP 500",), None, None, 0, 0, 0.0, 0)


def test_a_run_record_without_usage_has_none() -> None:
    assert RunRecord("pass", (), 10.0, None) == RunRecord("pass", (), 10.0, None, 0, 0, 0.0, 0)


def test_a_ttft_rule_reads_a_streamed_reply_and_skips_a_json_one() -> None:
    rule = [Rule("case", "ttft_ms", "<=", 900)]
    streamed = dataclasses.replace(make_trace(latency_ms=2000.0), ttft_ms=1234.567)
    slow = score_case(make_case(), ok_result(streamed), None, rule)
    assert (slow.status, slow.failed_conditions, slow.metrics["ttft_ms"]) == ("fail", ("ttft_ms 1235 > 900",), 1234.6)
    json_reply = score_case(make_case(), ok_result(make_trace()), None, rule)
    assert (json_reply.status, json_reply.skipped_rules) == (
        "pass",
        ("ttft_ms not applicable: the reply was not streamed",),
    )
    assert "ttft_ms" not in json_reply.metrics


def test_three_unsupported_claims_quote_two_and_count_the_rest() -> None:
    claims = _claims(("One.", False), ("Two.", False), ("Three.", False), ("Four.", True))
    judgement = Judgement(judge="j", faithfulness=0.25, claims=claims)
    result = score_case(make_case(), ok_result(make_trace()), judgement, [FAITH])
    assert result.failed_conditions == (
        'faithfulness 0.250 < 0.8 (3 of 4 claims unsupported: "One.", "Two." and 1 more)',
    )


def test_eleven_missing_ids_list_ten_and_count_the_rest() -> None:
    golden = [f"g{i}" for i in range(11)]
    result = score_case(make_case(golden=golden), ok_result(make_trace(ids=["x"])), None, DEFAULT_CASE_RULES)
    assert result.failed_conditions == (
        "context_recall 0.000 < 1 (missing g0, g1, g2, g3, g4, g5, g6, g7, g8, g9 and 1 more; retrieved x)",
    )


def test_a_judge_dimensions_reasoning_is_quoted_up_to_200_characters() -> None:
    judgement = Judgement(judge="j", scores={"relevance": 0.25}, reasoning={"relevance": "w" * 300})
    rule = Rule("case", "judge.relevance", ">=", 0.5)
    [reason] = score_case(make_case(), ok_result(make_trace()), judgement, [rule]).failed_conditions
    assert reason == "judge.relevance 0.25 < 0.50: " + "w" * 199 + "…"


def test_missed_reference_points_are_named_only_for_answer_correctness() -> None:
    judgement = Judgement(judge="j", reference_points=(_point("order number", "missing"),))
    case = dataclasses.replace(make_case(golden=["d1"]), expected="Give the order number.")
    result = score_case(case, ok_result(make_trace(ids=["x"])), judgement, DEFAULT_CASE_RULES)
    assert result.failed_conditions == ("context_recall 0.000 < 1 (missing d1; retrieved x)",)


def test_a_criterions_reasoning_is_quoted_up_to_200_characters() -> None:
    judgement = Judgement(judge="j", criteria={"polite": 0.25}, criteria_reasoning={"polite": "w" * 300})
    rule = Rule("case", "criteria.polite", ">=", 0.5)
    [reason] = score_case(make_case(), ok_result(make_trace()), judgement, [rule]).failed_conditions
    assert reason == "criteria.polite 0.25 < 0.50: " + "w" * 199 + "…"


def test_a_single_run_is_not_flaky() -> None:
    result = score_case(make_case(), ok_result(make_trace()), None, DEFAULT_CASE_RULES)
    assert (result.flaky, result.runs) == (False, ())


def test_a_criterion_unscored_with_the_rubric_errors_the_case() -> None:
    judgement = Judgement(judge="j", unscored=(Unscored("rubric", "the reply was not JSON"),))
    rule = Rule("case", "criteria.polite", ">=", 0.5)
    result = score_case(make_case(), ok_result(make_trace()), judgement, [rule])
    assert (result.status, result.failed_conditions) == (
        "error",
        ("criteria.polite unscored: the reply was not JSON",),
    )


def test_four_missed_points_name_three_and_count_the_rest() -> None:
    points = tuple(_point(f"p{i}", "missing") for i in range(4))
    judgement = Judgement(judge="j", reference_points=points)
    [reason] = score_case(_with_reference(), ok_result(make_trace()), judgement, [ANSWER_CORRECT]).failed_conditions
    assert reason == (
        'answer_correctness 0.000 < 0.8 (misses a reference point: "p0"; misses a reference point: "p1"; '
        'misses a reference point: "p2" and 1 more)'
    )


def test_a_conversation_puts_its_errored_turns_reasons_first_and_names_the_turns_not_asked() -> None:
    from ragjudge.gate.scoring import score_conversation

    turns = tuple(
        dataclasses.replace(make_case(f"chat turn {n}", f"q{n}", must_mention=["30 days"]), turn=n) for n in (1, 2, 3)
    )
    chat = dataclasses.replace(make_case("chat", "q1"), turns=turns)
    first = score_case(turns[0], ok_result(make_trace("Refunds take a week.", [])), None, [])
    second = score_case(turns[1], error_result("endpoint error: HTTP 500 after 3 attempts"), None, [])
    result = score_conversation(chat, [first, second])
    assert (first.status, second.status, result.status) == ("fail", "error", "error")
    assert result.failed_conditions == (
        "turn 2: endpoint error: HTTP 500 after 3 attempts",
        'turn 1: missing required detail: "30 days"',
        "turns 3 to 3: not evaluated: turn 2 got no reply, and this turn follows it",
    )
    assert result.endpoint is second.endpoint and result.turns == (first, second)


def test_an_invalid_combined_reply_is_one_reason_naming_every_metric_it_left_unscored() -> None:
    cause = "combined reply invalid after 2 attempts: not JSON"
    judgement = Judgement(
        judge="j", unscored=(Unscored("rubric", cause), Unscored("reference", cause), Unscored("faithfulness", cause))
    )
    rules = [Rule("case", "faithfulness", ">=", 0.8), Rule("case", "judge.relevance", ">=", 3), ANSWER_CORRECT]
    result = score_case(_with_reference(), ok_result(make_trace()), judgement, rules)
    assert result.status == "error"
    assert result.failed_conditions == (
        "reference, faithfulness, judge.relevance and answer_correctness unscored: " + cause,
    )
