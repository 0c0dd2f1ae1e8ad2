"""Suite metrics, suite and case rule outcomes, and the verdict."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ragjudge.cli import main
from ragjudge.gate.repeat import final_result
from ragjudge.gate.reporting import build_report
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.gate.suite import evaluate_suite
from ragjudge.gate.suite_case import Judged, SuiteCase
from ragjudge.gate.suite_figures import RunUsage, case_metrics, suite_metrics, with_run_usage
from ragjudge.judge.interface import Judgement, Unscored
from ragjudge.judge.reference import ReferencePoint
from ragjudge.report.judge_block import JudgeBlock
from ragjudge.report.model import ShardBlock
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.rules import Rule, parse_rules
from tests.fakes.rag import error_result, make_case, make_trace, ok_result

CASE_RULES = parse_rules({"context_recall": ">= 1.0", "latency_ms": "<= 10000"}, "case", "gate.case")
PASS_ALL = [Rule("suite", "pass_rate", ">=", 1.0)]


def _ok(case_id: str, latency: float = 100.0, **kw: object) -> CaseResult:
    return score_case(make_case(case_id), ok_result(make_trace(latency_ms=latency, **kw)), None, CASE_RULES)  # type: ignore[arg-type]


def _err(case_id: str) -> CaseResult:
    return score_case(make_case(case_id), error_result("endpoint error: HTTP 500 after 3 attempts"), None, CASE_RULES)


def _recall_fail(case_id: str) -> CaseResult:
    return score_case(make_case(case_id, golden=["d1", "d2"]), ok_result(make_trace(ids=["d1"])), None, CASE_RULES)


def test_counts_and_rates() -> None:
    results = [_ok("a"), _ok("b"), _recall_fail("c"), _err("d")]
    m = suite_metrics(results)
    assert (m["cases"], m["passed"], m["failed"], m["errored"]) == (4, 2, 1, 1)
    assert m["pass_rate"] == 0.5
    assert m["endpoint_error_rate"] == 0.25


def test_rejection_accuracy_counts_only_cases_that_got_a_reply() -> None:
    oos = make_case("oos", category="out_of_scope", should_answer=False)
    results = [
        _ok("in-answered"),  # right
        score_case(make_case("in-declined"), ok_result(make_trace("", refused=True)), None, CASE_RULES),  # wrong
        score_case(oos, ok_result(make_trace("Sorry.", refused=True)), None, CASE_RULES),  # right
        _err("no-reply-1"),  # not counted
        _err("no-reply-2"),  # not counted
    ]
    assert suite_metrics(results)["rejection_accuracy"] == pytest.approx(2 / 3)


def test_out_of_scope_answered_is_a_wrong_rejection() -> None:
    oos = make_case("oos", category="out_of_scope", should_answer=False)
    results = [_ok("a"), score_case(oos, ok_result(make_trace("It is sunny.", confidence="none")), None, CASE_RULES)]
    assert suite_metrics(results)["rejection_accuracy"] == 0.5


def test_latency_percentiles_are_nearest_rank_over_replied_cases() -> None:
    results = [_ok(f"c{i}", latency=float(i * 100)) for i in range(1, 21)] + [_err("e1"), _err("e2")]
    m = suite_metrics(results)
    assert m["p50_latency_ms"] == 1000.0  # 10th of 20
    assert m["p95_latency_ms"] == 1900.0  # 19th of 20


def test_metrics_are_none_when_nothing_replied() -> None:
    m = suite_metrics([_err("a"), _err("b")])
    assert m["p50_latency_ms"] is None
    assert m["p95_latency_ms"] is None
    assert m["rejection_accuracy"] is None
    assert m["faithfulness"] is None
    assert m["cost_usd"] is None
    assert m["judge_error_rate"] is None
    assert m["endpoint_error_rate"] == 1.0
    assert m["pass_rate"] == 0.0


def test_faithfulness_is_the_mean_where_it_applies() -> None:
    def judged(case_id: str, faith: float | None) -> CaseResult:
        judgement = Judgement(judge="j", faithfulness=faith)
        return score_case(make_case(case_id), ok_result(make_trace()), judgement, CASE_RULES)

    results = [judged("a", 1.0), judged("b", 0.5), judged("c", None), _err("d")]
    assert suite_metrics(results)["faithfulness"] == 0.75


def test_judge_error_rate_is_the_share_of_judgements_with_something_unscored() -> None:
    def judged(case_id: str, unscored: tuple[Unscored, ...]) -> CaseResult:
        judgement = Judgement(judge="j", faithfulness=None, unscored=unscored)
        return score_case(make_case(case_id), ok_result(make_trace()), judgement, CASE_RULES)

    results = [judged("a", ()), judged("b", (Unscored("faithfulness", "x"),)), judged("c", ()), judged("d", ())]
    assert suite_metrics(results)["judge_error_rate"] == 0.25


def test_cost_is_the_total_of_reported_costs() -> None:
    results = [_ok("a", cost_usd=0.001), _ok("b", cost_usd=0.0025), _ok("c")]
    assert suite_metrics(results)["cost_usd"] == 0.0035


def test_verdict_pass() -> None:
    suite = evaluate_suite([_ok("a"), _ok("b")], CASE_RULES, PASS_ALL)
    assert suite.verdict == "pass"


def test_verdict_fail_when_a_suite_rule_fails() -> None:
    suite = evaluate_suite([_ok("a"), _recall_fail("b")], CASE_RULES, PASS_ALL)
    assert suite.verdict == "fail"


def test_an_errored_case_fails_the_default_pass_rate() -> None:
    suite = evaluate_suite([_ok("a"), _err("b")], CASE_RULES, PASS_ALL)
    assert suite.verdict == "fail"


def test_verdict_error_when_every_case_errored() -> None:
    suite = evaluate_suite([_err("a"), _err("b")], CASE_RULES, PASS_ALL)
    assert suite.verdict == "error"


def test_verdict_error_with_no_cases() -> None:
    assert evaluate_suite([], CASE_RULES, PASS_ALL).verdict == "error"


def test_a_tolerant_pass_rate_lets_a_failing_case_through() -> None:
    suite = evaluate_suite([_ok("a"), _recall_fail("b")], CASE_RULES, [Rule("suite", "pass_rate", ">=", 0.5)])
    assert suite.verdict == "pass"
    # ...but the case rule still reports the failing case.
    recall = suite.rules[0]
    assert recall.passed is False
    assert recall.reason == "1 case(s) failed context_recall >= 1: b"


def test_suite_rule_outcomes_have_value_and_reason() -> None:
    rules = [
        Rule("suite", "pass_rate", ">=", 1.0),
        Rule("suite", "p95_latency_ms", "<=", 3000),
        Rule("suite", "rejection_accuracy", ">=", 0.9),
    ]
    suite = evaluate_suite([_ok("a", latency=100.0), _recall_fail("b")], [], rules)
    pass_rate, p95, rejection = suite.rules
    assert (pass_rate.value, pass_rate.passed, pass_rate.reason) == (0.5, False, "pass_rate 0.500 < 1")
    assert (p95.value, p95.passed, p95.reason) == (100.0, True, "p95_latency_ms 100 <= 3000")
    assert (rejection.value, rejection.passed, rejection.reason) == (1.0, True, "rejection_accuracy 1 >= 0.9")


def test_a_suite_rule_without_a_value_fails_and_says_why() -> None:
    rules = [Rule("suite", "cost_usd", "<=", 1.0), Rule("suite", "faithfulness", ">=", 0.9)]
    suite = evaluate_suite([_ok("a")], [], rules)
    cost, faith = suite.rules
    assert (cost.value, cost.passed) == (None, False)
    assert cost.reason == "cost_usd has no value: no case it applies to got a reply"
    assert (faith.value, faith.passed) == (None, False)
    assert faith.reason == "faithfulness not applicable: no answer made a claim"
    assert suite.verdict == "fail"


def test_case_rule_outcomes_name_the_failing_cases() -> None:
    results = [_recall_fail(f"r{i}") for i in range(7)] + [_ok("fine")]
    suite = evaluate_suite(results, CASE_RULES, PASS_ALL)
    recall, latency, pass_rate = suite.rules
    assert (recall.rule.scope, recall.value, recall.passed) == ("case", 7.0, False)
    assert recall.reason == "7 case(s) failed context_recall >= 1: r0, r1, r2, r3, r4 and 2 more"
    assert (latency.value, latency.passed) == (0.0, True)
    assert latency.reason == "every evaluated case met latency_ms <= 10000"
    assert pass_rate.rule.scope == "suite"


def test_an_error_is_never_counted_as_passed() -> None:
    results = [_err("a"), _ok("b")]
    suite = evaluate_suite(results, CASE_RULES, [Rule("suite", "pass_rate", ">=", 0.6)])
    assert suite.metrics["passed"] == 1
    assert suite.metrics["pass_rate"] == 0.5
    assert suite.verdict == "fail"


def test_an_unscored_judgement_is_not_counted_as_failing_the_case_rule() -> None:
    faith = Rule("case", "faithfulness", ">=", 0.8)
    unscored = Judgement(judge="j", unscored=(Unscored("faithfulness", "timeout"),))
    low = Judgement(judge="j", faithfulness=0.5)
    results = [
        score_case(make_case("unscored"), ok_result(make_trace()), unscored, [faith]),
        score_case(make_case("low"), ok_result(make_trace()), low, [faith]),
    ]
    assert [r.status for r in results] == ["error", "fail"]
    (outcome,) = evaluate_suite(results, [faith], []).rules
    assert (outcome.value, outcome.passed) == (1.0, False)
    assert outcome.reason == "1 case(s) failed faithfulness >= 0.8: low"


@pytest.mark.parametrize("n", [100, 137, 250])
def test_p50_and_p95_over_many_latencies_equal_an_independent_reference(n: int) -> None:
    numpy = pytest.importorskip("numpy")
    # Deterministic, unsorted, with ties and sub-millisecond parts.
    latencies = [round(50 + ((i * 7919) % 1013) * 2.37, 2) for i in range(n)]
    results = [_ok(f"c{i}", latency=x) for i, x in enumerate(latencies)]
    m = suite_metrics(results)
    assert m["p50_latency_ms"] == float(numpy.percentile(latencies, 50, method="inverted_cdf"))
    assert m["p95_latency_ms"] == float(numpy.percentile(latencies, 95, method="inverted_cdf"))
    assert m["p99_latency_ms"] == float(numpy.percentile(latencies, 99, method="inverted_cdf"))


def test_a_p99_rule_sees_the_tail_p95_does_not() -> None:
    # 100 replies, two slow: the p95 is fast, the p99 (the 99th smallest) is the slow tail.
    results = [_ok(f"c{i}", latency=100.0) for i in range(98)] + [
        _ok("slow1", latency=4000),
        _ok("slow2", latency=5000),
    ]
    rules = parse_rules({"p95_latency_ms": "<= 3000", "p99_latency_ms": "<= 3000"}, "suite", "gate.suite")
    suite = evaluate_suite(results, [], rules)
    p95, p99 = suite.rules
    assert (p95.passed, p95.reason) == (True, "p95_latency_ms 100 <= 3000")
    assert (p99.passed, p99.value, p99.reason) == (False, 4000.0, "p99_latency_ms 4000 > 3000")
    assert suite.verdict == "fail"
    report = build_report(results, suite, JudgeInfoBlock(), [])
    assert report.suite.model_dump()["p99_latency_ms"] == 4000.0


@pytest.mark.parametrize(
    ("p95", "passed", "reason"),
    [
        (3000.04, False, "p95_latency_ms 3000.04 > 3000"),
        (3000.0, True, "p95_latency_ms 3000 <= 3000"),
        (2999.96, True, "p95_latency_ms 3000 <= 3000"),
    ],
)
def test_rounding_never_flips_a_suite_rule_at_its_threshold(p95: float, passed: bool, reason: str) -> None:
    # 20 replies: the 19th smallest is the p95. The report shows 3000.0 for all three; the rule sees the exact value.
    results = [_ok(f"c{i}", latency=100.0) for i in range(18)] + [_ok("p95", latency=p95), _ok("max", latency=9000)]
    rule = Rule("suite", "p95_latency_ms", "<=", 3000.0)
    suite = evaluate_suite(results, [], [rule])
    (outcome,) = suite.rules
    assert (outcome.passed, outcome.reason) == (passed, reason)
    assert suite.metrics["p95_latency_ms"] == 3000.0
    assert suite.verdict == ("pass" if passed else "fail")


def _streamed(case_id: str, ttft: float | None, latency: float = 500.0) -> CaseResult:
    trace = dataclasses.replace(make_trace(latency_ms=latency), ttft_ms=ttft)
    return score_case(make_case(case_id), ok_result(trace), None, CASE_RULES)


def test_ttft_percentiles_are_nearest_rank_over_streamed_replies() -> None:
    results = [_streamed(f"s{i}", float(i * 10)) for i in range(1, 21)] + [_streamed("json", None), _err("e1")]
    m = suite_metrics(results)
    assert (m["p50_ttft_ms"], m["p95_ttft_ms"]) == (100.0, 190.0)  # 10th and 19th of the 20 streamed
    assert results[0].metrics["ttft_ms"] == 10.0
    assert "ttft_ms" not in results[20].metrics  # a JSON body has no time to the first token


def test_the_p50_ttft_of_51_streamed_replies_is_the_26th_smallest() -> None:
    # With 51 replies the nearest ranks of p49, p50 and p51 differ (25th, 26th, 27th), as they do not for 20.
    order = [(i * 37) % 51 for i in range(51)]  # every rank once, unsorted
    results = [_streamed(f"s{i}", 1000.0 + rank, latency=5000.0 - rank) for i, rank in enumerate(order)]
    results += [_streamed("json", None, latency=1.0)]  # a JSON body counts for latency, not for TTFT
    m = suite_metrics(results)
    assert (m["p50_ttft_ms"], m["p95_ttft_ms"]) == (1025.0, 1048.0)  # ranks 26 and ceil(48.45) = 49
    assert m["p50_latency_ms"] == 4974.0  # the 26th of 52 latencies (1 ms, then 4950 up): not the TTFTs


def test_no_streamed_reply_leaves_the_ttft_percentiles_null() -> None:
    m = suite_metrics([_ok("a"), _err("b")])
    assert (m["p50_ttft_ms"], m["p95_ttft_ms"]) == (None, None)


def test_a_saved_case_block_gives_the_same_ttft_percentiles() -> None:
    results = [_streamed("a", 120.04), _streamed("b", 250.0), _streamed("c", None), _err("d")]
    saved = build_report(results, evaluate_suite(results, [], []), JudgeInfoBlock(), [])
    again = case_metrics([SuiteCase.of_block(c) for c in saved.cases])
    assert (again["p50_ttft_ms"], again["p95_ttft_ms"]) == (120.0, 250.0)
    assert [c.trace.ttft_ms for c in saved.cases] == [120.0, 250.0, None, None]  # to 0.1 ms, as latency_ms


def test_a_ttft_rule_fails_a_slow_stream_and_skips_a_json_reply() -> None:
    rules = parse_rules({"ttft_ms": "<= 200"}, "case", "gate.case")
    slow = dataclasses.replace(make_trace(), ttft_ms=300.0)
    assert score_case(make_case("slow"), ok_result(slow), None, rules).failed_conditions == ("ttft_ms 300 > 200",)
    plain = score_case(make_case("plain"), ok_result(make_trace()), None, rules)
    assert (plain.status, plain.skipped_rules) == ("pass", ("ttft_ms not applicable: the reply was not streamed",))


def _run(text: str, cost: float | None, judge_cost: float) -> CaseResult:
    judgement = Judgement(judge="j", tokens=100, cost_usd=judge_cost, calls=1, cache_hits=1)
    case = make_case("r", must_mention=["5 days"])
    return score_case(case, ok_result(make_trace(text, cost_usd=cost)), judgement, CASE_RULES)


def test_the_cost_and_usage_of_a_repeated_case_count_every_run() -> None:
    runs = [
        _run("Refunds take a while.", 0.01, 0.001),
        _run("Refunds take a while.", None, 0.002),
        _run("Refunds take 5 days.", 0.03, 0.004),
    ]
    assert [r.status for r in runs] == ["fail", "fail", "pass"]
    repeated = final_result(runs, 1)
    assert (repeated.status, repeated.flaky, len(repeated.runs)) == ("pass", True, 3)
    metrics = suite_metrics([repeated, _ok("b", cost_usd=0.5)])
    # Endpoint 0.01 + 0.03 (one run reported nothing) + 0.5, judge 0.007: not the passing run's alone.
    assert metrics["cost_usd"] == 0.547
    assert metrics["judge_cost_usd"] == 0.007
    assert (metrics["judge_calls"], metrics["judge_tokens"], metrics["judge_cache_hits"]) == (3, 300, 3)
    assert metrics["p95_latency_ms"] == 100.0


def test_a_repeated_case_whose_runs_reported_no_cost_has_none() -> None:
    repeated = final_result([_run("Refunds take a while.", None, 0.0), _run("Refunds take 5 days.", None, 0.0)], 1)
    assert suite_metrics([repeated])["cost_usd"] is None


def test_the_runs_own_judge_usage_is_added_to_the_suites() -> None:
    assert RunUsage() == RunUsage(0, 0, 0.0)
    assert RunUsage(1, 10, 0.25) + RunUsage(2, 20, 0.5) == RunUsage(3, 30, 0.75)
    metrics = {"judge_calls": 4, "judge_tokens": 400, "judge_cost_usd": 0.1, "cost_usd": 0.3}
    totals = with_run_usage(metrics, RunUsage(2, 100, 0.0123456))
    assert totals == {"judge_calls": 6, "judge_tokens": 500, "judge_cost_usd": 0.112346, "cost_usd": 0.312346}
    assert with_run_usage({"cost_usd": None}, RunUsage(1, 1, 0.5))["cost_usd"] == 0.5
    assert with_run_usage({"cost_usd": None}, RunUsage(1, 1, 0.0))["cost_usd"] is None
    assert with_run_usage({}, RunUsage())["judge_cost_usd"] == 0.0


def test_a_saved_judge_block_without_usage_reads_as_zero() -> None:
    judged = Judged.of_saved(JudgeBlock(faithfulness=0.5))
    assert (judged.calls, judged.cache_hits, judged.tokens, judged.cost_usd) == (0, 0, 0, 0.0)
    assert Judged.of_saved(JudgeBlock(cache_hits=3, calls=2)).cache_hits == 3


def test_a_case_rule_failed_by_five_cases_lists_all_five() -> None:
    results = [_recall_fail(f"r{i}") for i in range(5)]
    recall = evaluate_suite(results, CASE_RULES, PASS_ALL).rules[0]
    assert recall.reason == "5 case(s) failed context_recall >= 1: r0, r1, r2, r3, r4"


def test_a_case_rule_failed_by_six_cases_counts_the_sixth() -> None:
    results = [_recall_fail(f"r{i}") for i in range(6)]
    recall = evaluate_suite(results, CASE_RULES, PASS_ALL).rules[0]
    assert recall.reason == "6 case(s) failed context_recall >= 1: r0, r1, r2, r3, r4 and 1 more"


def test_usage_added_to_a_suite_without_any() -> None:
    assert with_run_usage({}, RunUsage(2, 10, 0.0)) == {"judge_calls": 2, "judge_tokens": 10, "judge_cost_usd": 0.0}


def test_the_suites_answer_correctness_is_the_mean_over_judged_references() -> None:
    def judged(case_id: str, verdicts: tuple[str, ...]) -> CaseResult:
        points = tuple(ReferencePoint("p", v, "", "r") for v in verdicts)  # type: ignore[arg-type]
        return score_case(
            make_case(case_id), ok_result(make_trace()), Judgement(judge="j", reference_points=points), []
        )

    metrics = suite_metrics([judged("a", ("covered", "missing")), judged("b", ("covered",)), _ok("c")])
    assert (metrics["answer_correctness"], metrics["reference_contradictions"]) == (0.75, 0)


def test_costs_are_kept_to_six_decimals() -> None:
    judgement = Judgement(judge="j", cost_usd=0.00000049)
    judged = score_case(make_case("a"), ok_result(make_trace(cost_usd=0.0000012)), judgement, [])
    metrics = suite_metrics([judged])
    assert (metrics["cost_usd"], metrics["judge_cost_usd"]) == (0.000002, 0.0)


# --- saved reports: a criterion score that is not a number is read, not a crash ---------------------------

# How each saved case's `judge.criteria` is tampered with: only c's score is a number.
NOT_NUMBERS: dict[str, Any] = {
    "a": {"polite": {"score": "high", "reason": "warm"}},
    "b": {"polite": {"score": True, "reason": "warm"}},
    "c": {"polite": {"score": 4, "reason": "warm"}},
    "d": ["polite"],
    "e": {"polite": "4"},
    "f": {"polite": {"score": None, "reason": "warm"}},
}


def test_a_saved_criterion_score_that_is_not_a_number_is_left_out() -> None:
    read = [
        Judged.of_saved(JudgeBlock.model_validate({"criteria": c}, strict=True)).criteria for c in NOT_NUMBERS.values()
    ]
    assert read == [{}, {}, {"polite": 4.0}, {}, {}, {}]


def test_a_saved_judge_block_reads_null_figures_as_none_used_and_refuses_other_non_numbers() -> None:
    block = {"faithfulness": None, "cost_usd": None, "calls": None, "cache_hits": None, "tokens": None}
    judged = Judged.of_saved(JudgeBlock.model_validate(block, strict=True))
    assert (judged.faithfulness, judged.cost_usd, judged.calls, judged.cache_hits, judged.tokens) == (
        None,
        0.0,
        0,
        0,
        0,
    )
    # The block is typed: what is not a number is refused where the report is read (exit 2 naming the field,
    # tests/commands/test_merge.py), never taken for one.
    for key, value in {"faithfulness": True, "cost_usd": "0.1", "calls": "two", "tokens": [1]}.items():
        with pytest.raises(ValidationError):
            JudgeBlock.model_validate({key: value}, strict=True)


def _criteria_report(path: Path, ids: list[str], shard: tuple[int, int] | None) -> Path:
    judgement = Judgement(judge="j", criteria={"polite": 3.0}, criteria_reasoning={"polite": "warm"})
    results = [score_case(make_case(i), ok_result(make_trace()), judgement, CASE_RULES) for i in ids]
    report = build_report(results, evaluate_suite(results, CASE_RULES, PASS_ALL), JudgeInfoBlock(judge="j"), [])
    if shard is not None:
        positions = [list(NOT_NUMBERS).index(i) for i in ids]
        block = ShardBlock(index=shard[0], count=shard[1], total_cases=len(NOT_NUMBERS), positions=positions)
        report = report.model_copy(update={"shard": block})
    data = json.loads(report.model_dump_json())
    for case in data["cases"]:
        case["judge"]["criteria"] = NOT_NUMBERS[case["id"]]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_merge_and_a_baseline_read_saved_criterion_scores_that_are_not_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    s1 = _criteria_report(tmp_path / "s1.json", ["a", "b", "c"], (1, 2))
    s2 = _criteria_report(tmp_path / "s2.json", ["d", "e", "f"], (2, 2))
    base = _criteria_report(tmp_path / "base.json", list(NOT_NUMBERS), None)
    outputs = ["--report", "merged.json", "--comment-file", "c.md", "--junit", "j.xml", "--html", "r.html"]
    code = main(["merge", str(s1), str(s2), "--baseline", str(base), *outputs])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), out
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    assert merged["suite"]["criteria.polite_mean"] == 4.0  # c's alone
    assert merged["comparison"]["deltas"][0]["metric"] == "pass_rate"
