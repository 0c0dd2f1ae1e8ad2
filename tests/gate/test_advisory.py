"""`judge.uncalibrated: report` (`gate/advisory.py`): only what the uncalibrated judge alone decided stops
blocking; a case failing on anything else still fails, errors and conversations are left alone, and a healthy
run is handed back as it came."""

from __future__ import annotations

from ragjudge.gate.advisory import advisory
from ragjudge.gate.scoring import CaseResult
from ragjudge.rules import Rule
from tests.fakes.rag import error_result, make_case, make_trace, ok_result

RULES = [Rule("case", "faithfulness", ">=", 0.8), Rule("case", "context_recall", ">=", 1.0)]
JUDGED = 'faithfulness 0.500 < 0.8 (1 of 2 claims unsupported: "x")'
RECALL = "context_recall 0.000 < 1 (missing d2; retrieved d1)"
DETAIL = 'missing required detail: "store credit"'


def _result(case_id: str, status: str, *conditions: str, turns: tuple[CaseResult, ...] = ()) -> CaseResult:
    endpoint = error_result(conditions[0]) if status == "error" else ok_result(make_trace())
    return CaseResult(make_case(case_id), status, conditions, {}, endpoint, None, turns=turns)  # type: ignore[arg-type]


def test_a_case_failing_only_on_the_judge_passes_with_the_finding_kept() -> None:
    [out], warning = advisory([_result("j", "fail", JUDGED)], RULES, "missing")
    assert (out.status, out.failed_conditions, out.advisory) == ("pass", (), (JUDGED,))
    assert warning == (
        "the judge is not calibrated (missing): 1 condition(s) only it decided, on 1 case(s), are reported as "
        "advisory, not blocking (judge.uncalibrated: report); calibrate it to gate on them"
    )


def test_a_case_failing_on_recall_or_a_missing_detail_too_still_fails() -> None:
    results = [_result("recall", "fail", RECALL, JUDGED), _result("detail", "fail", JUDGED, DETAIL)]
    out, warning = advisory(results, RULES, "stale")
    assert [(r.status, r.failed_conditions, r.advisory) for r in out] == [
        ("fail", (RECALL,), (JUDGED,)),
        ("fail", (DETAIL,), (JUDGED,)),
    ]
    assert warning is not None and "2 condition(s) only it decided, on 2 case(s)" in warning


def test_errored_and_conversation_cases_are_left_as_they_are() -> None:
    # Both fail on a condition worded as the judge's: only the guard keeps them (an unscored judgement is an
    # error for the error budget; a conversation's condition is its turn's, whatever its words).
    errored = _result("e", "error", "faithfulness unscored: judge reply invalid after 2 attempts")
    turn = _result("t1", "fail", JUDGED)
    conversation = _result("conv", "fail", JUDGED, turns=(turn,))
    out, warning = advisory([errored, conversation], RULES, "missing")
    assert out == [errored, conversation]  # an error stays in the error budget; a conversation keeps its turns
    assert out[0].status == "error" and out[1].status == "fail" and out[1].advisory == ()
    assert warning is None


def test_a_healthy_run_comes_back_unchanged_with_no_warning() -> None:
    results = [_result("a", "pass"), _result("b", "fail", DETAIL)]
    assert advisory(results, RULES, "missing") == (results, None)
    assert advisory([], RULES, "missing") == ([], None)
