"""`merge_reports` gives the suite `run` gives: the same figures from the saved case blocks as from the live results.

The shard reports here are built the way `run --shard` builds them (`build_report` over the shard's results) and
read back from JSON, as `merge` reads the files; the unsharded report is built from the same results.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragjudge.cases.files import read_items
from ragjudge.cases.scope import expects_answer
from ragjudge.config.loader import load_config
from ragjudge.endpoint.result import EndpointResult
from ragjudge.gate.bias_probe import BiasCheck
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.merge_shards import ShardReport, merge_reports
from ragjudge.gate.pipeline import RunPlan
from ragjudge.gate.recorded import load_traces
from ragjudge.gate.repeat import run_repeated
from ragjudge.gate.reporting import build_report
from ragjudge.gate.scoring import CaseResult, RunRecord, Status, score_case
from ragjudge.gate.suite import evaluate_suite
from ragjudge.judge.bias import BiasResult
from ragjudge.judge.factory import make_judge
from ragjudge.judge.interface import Judgement, Unscored
from ragjudge.report.model import Report, ShardBlock
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.rules import Rule, parse_rules
from tests.fakes.rag import error_result, make_case, make_trace, ok_result
from tests.fakes.reports import OFFLINE_INFO

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "ragjudge.yml"

SUITE_RULES = [Rule("suite", "pass_rate", ">=", 0.5), Rule("suite", "rejection_accuracy", ">=", 0.9)]


def shard_reports(
    results: Sequence[CaseResult],
    parts: Sequence[Sequence[int]],
    *,
    case_rules: Sequence[Rule] = (),
    suite_rules: Sequence[Rule] = SUITE_RULES,
    unrecorded: Collection[str] = (),
) -> list[ShardReport]:
    """One report per part (positions into `results`), as `run --shard` writes them, read back from JSON.

    The cases in `unrecorded` (ids) lose their `should_answer`, as in a report written before it was
    recorded: the reader then takes it from the category, as a case file that leaves it out does.
    """
    out = []
    for index, positions in enumerate(parts, start=1):
        part = [results[k] for k in positions]
        report = build_report(
            part, evaluate_suite(part, case_rules, suite_rules), JudgeInfoBlock.model_validate(OFFLINE_INFO), []
        )
        report = report.model_copy(
            update={"shard": ShardBlock(index=index, count=len(parts), total_cases=len(results), positions=positions)}
        )
        data = json.loads(report.model_dump_json())
        for case in data["cases"]:
            if case["id"] in unrecorded:
                del case["should_answer"]
        out.append(ShardReport(Path(f"s{index}.json"), Report.model_validate(data)))
    return out


def unsharded(
    results: Sequence[CaseResult], case_rules: Sequence[Rule] = (), suite_rules: Sequence[Rule] = SUITE_RULES
) -> Report:
    return build_report(
        results, evaluate_suite(results, case_rules, suite_rules), JudgeInfoBlock.model_validate(OFFLINE_INFO), []
    )


def _declined(case_id: str, category: str) -> CaseResult:
    case = make_case(case_id, "Write me a poem?", category=category, should_answer=False)
    return score_case(case, ok_result(make_trace("Sorry, I can only help with orders.", refused=True)), None, [])


def test_an_out_of_scope_category_without_should_answer_is_out_of_scope_to_merge_as_to_run() -> None:
    # As a case file reads them: no should_answer, and a category that means "decline this" once folded.
    results = [
        _declined("poem", "Out-Of-Scope"),
        _declined("stock", "OOS"),
        _declined("flight", " out_of  scope "),
        score_case(make_case("refund"), ok_result(make_trace()), None, []),
    ]
    full = unsharded(results)
    assert full.suite.rejection_accuracy == 1.0  # every decline was right, to `run`
    merged = merge_reports(shard_reports(results, [[0, 2], [1, 3]], unrecorded=[r.case.id for r in results]))
    assert merged.suite.model_dump() == full.suite.model_dump()
    assert merged.rules == full.rules
    assert merged.verdict == full.verdict == "pass"


def _judged(case_id: str, cost_usd: float) -> CaseResult:
    judgement = Judgement(judge="model", faithfulness=1.0, tokens=300, cost_usd=cost_usd, calls=1)
    return score_case(make_case(case_id), ok_result(make_trace(cost_usd=0.0001)), judgement, [])


def test_the_judge_cost_is_rounded_once_over_the_whole_set_as_in_run() -> None:
    # Each shard's judge cost rounds to 0.000000 alone; the whole set's is 0.000001.
    results = [_judged("a", 4e-7), _judged("b", 4e-7)]
    full = unsharded(results)
    assert full.suite.model_extra is not None and full.suite.model_extra["judge_cost_usd"] == 1e-6
    merged = merge_reports(shard_reports(results, [[0], [1]]))
    assert merged.suite.model_dump() == full.suite.model_dump()


def _with_bias_check(report: Report, calls: int, tokens: int, cost_usd: float) -> Report:
    check = BiasCheck(None, 2, 0, 1)  # type: ignore[arg-type]  # attach() reads only the result
    check.result = BiasResult(
        "position", items=2, passages=4, changed=0, max_rate=0.1, calls=calls, tokens=tokens, cost_usd=cost_usd
    )
    return check.attach(report)


def test_the_bias_checks_calls_and_cost_count_in_the_merged_usage_as_in_runs() -> None:
    results = [_judged("a", 0.0002), _judged("b", 0.0003), _judged("c", 0.0001)]
    parts = shard_reports(results, [[0, 2], [1]])
    biased = [
        ShardReport(parts[0].path, _with_bias_check(parts[0].report, 3, 900, 0.00042)),
        ShardReport(parts[1].path, _with_bias_check(parts[1].report, 2, 600, 0.00028)),
    ]
    merged = merge_reports(biased)
    # What `run` reports for the whole set when its bias check made those calls.
    whole = _with_bias_check(unsharded(results), 5, 1500, 0.0007)
    usage = ("cost_usd", "judge_calls", "judge_tokens", "judge_cost_usd", "judge_cache_hits")
    assert {k: merged.suite.model_dump()[k] for k in usage} == {k: whole.suite.model_dump()[k] for k in usage}
    assert merged.suite.cost_usd == round(0.0001 * 3 + 0.0006 + 0.0007, 6)


@pytest.mark.xfail(strict=True, reason="the report keeps latencies to 0.1 ms: the merge cannot see 3000.04")
def test_a_latency_rule_at_its_threshold_gates_the_merge_as_it_gates_run() -> None:
    # `run` compares the exact p95 (suite.py); a shard's report keeps each latency to 0.1 ms.
    results = [score_case(make_case(f"c{i}"), ok_result(make_trace(latency_ms=100.0)), None, []) for i in range(18)]
    results += [score_case(make_case(f"p{i}"), ok_result(make_trace(latency_ms=3000.04)), None, []) for i in range(2)]
    rules = [Rule("suite", "p95_latency_ms", "<=", 3000.0)]
    full = unsharded(results, suite_rules=rules)
    merged = merge_reports(shard_reports(results, [list(range(10)), list(range(10, 20))], suite_rules=rules))
    assert merged.verdict == full.verdict == "fail"


# Generated results: every shape the suite reads (no reply, declines, judge errors, repeats, costs), split any way.
CATEGORIES = [None, "refund", "Out-Of-Scope", "OOS", "out_of_scope", " out of  scope", "超纲", "off-scope"]
CONDITIONS = ["context_recall 0.50 < 1.00 (missing d2)", "latency_ms 900.0 > 800", "must mention '7天'"]
CASE_RULES = [Rule("case", "context_recall", ">=", 1.0), Rule("case", "latency_ms", "<=", 800.0)]
# Latencies on the 0.1 ms grid the report keeps them on: at a finer grain see the xfail above.
latencies = st.integers(0, 60_000).map(lambda n: n / 10)
costs = st.none() | st.floats(0, 0.01, allow_subnormal=False)
judge_costs = st.floats(0, 0.001, allow_subnormal=False)


@st.composite
def judgements(draw: st.DrawFn) -> Judgement:
    return Judgement(
        judge="model",
        faithfulness=draw(st.none() | st.floats(0, 1)),
        unscored=draw(st.sampled_from([(), (Unscored("faithfulness", "timeout"),)])),
        tokens=draw(st.integers(0, 5000)),
        cost_usd=draw(judge_costs),
        calls=draw(st.integers(0, 4)),
        cache_hits=draw(st.integers(0, 2)),
    )


@st.composite
def run_records(draw: st.DrawFn) -> RunRecord:
    return RunRecord(
        status=draw(st.sampled_from(["pass", "fail", "error"])),
        failed_conditions=tuple(draw(st.lists(st.sampled_from(CONDITIONS), max_size=2))),
        latency_ms=draw(st.none() | latencies),
        endpoint_cost_usd=draw(costs),
        judge_calls=draw(st.integers(0, 3)),
        judge_tokens=draw(st.integers(0, 3000)),
        judge_cost_usd=draw(judge_costs),
        judge_cache_hits=draw(st.integers(0, 2)),
    )


@st.composite
def case_results(draw: st.DrawFn, case_id: str) -> tuple[CaseResult, bool]:
    """A result, and whether its case left should_answer to its category."""
    category = draw(st.sampled_from(CATEGORIES))
    stated = draw(st.none() | st.booleans())
    case = make_case(case_id, category=category, should_answer=expects_answer(stated, category))
    if draw(st.booleans()):
        trace = make_trace(refused=draw(st.booleans()), latency_ms=draw(latencies), cost_usd=draw(costs))
        endpoint: EndpointResult = ok_result(trace)
        judgement = draw(st.none() | judgements())
    else:
        endpoint, judgement = error_result("endpoint error: HTTP 500 after 3 attempts"), None
    status: Status = draw(st.sampled_from(["pass", "fail", "error"]))
    conditions = tuple(draw(st.lists(st.sampled_from(CONDITIONS), max_size=2))) if status != "pass" else ()
    runs = tuple(draw(st.lists(run_records(), max_size=3))) if draw(st.booleans()) else ()
    flaky = bool(runs) and status == "pass" and draw(st.booleans())
    result = CaseResult(case, status, conditions, {}, endpoint, judgement, runs=runs, flaky=flaky)
    return result, stated is None


@st.composite
def suite_rules(draw: st.DrawFn) -> list[Rule]:
    thresholds = {
        "pass_rate": (">=", st.floats(0, 1)),
        "rejection_accuracy": (">=", st.floats(0, 1)),
        "faithfulness": (">=", st.floats(0, 1)),
        "judge_error_rate": ("<=", st.floats(0, 1)),
        "endpoint_error_rate": ("<=", st.floats(0, 1)),
        "p50_latency_ms": ("<=", latencies),
        "p95_latency_ms": ("<=", latencies),
        "cost_usd": ("<=", st.floats(0, 0.05)),
    }
    metrics = draw(st.lists(st.sampled_from(sorted(thresholds)), unique=True, max_size=len(thresholds)))
    return [Rule("suite", m, thresholds[m][0], draw(thresholds[m][1])) for m in metrics]


@st.composite
def splits(draw: st.DrawFn, n: int) -> list[list[int]]:
    """The positions 0..n-1 dealt into 1 to 4 parts (a part may be empty, as a shard of few cases may be)."""
    count = draw(st.integers(1, 4))
    owner = draw(st.lists(st.integers(0, count - 1), min_size=n, max_size=n))
    return [[k for k in range(n) if owner[k] == part] for part in range(count)]


@st.composite
def sharded_runs(draw: st.DrawFn) -> tuple[list[CaseResult], list[str], list[list[int]], list[Rule]]:
    n = draw(st.integers(1, 14))
    drawn = [draw(case_results(f"c{k}")) for k in range(n)]
    unstated = [r.case.id for r, left in drawn if left]
    return [r for r, _ in drawn], unstated, draw(splits(n)), draw(suite_rules())


@settings(max_examples=200, deadline=None)
@given(sharded_runs())
def test_merging_any_split_of_a_runs_results_gives_the_unsharded_suite(
    run: tuple[list[CaseResult], list[str], list[list[int]], list[Rule]],
) -> None:
    results, unstated, parts, rules = run
    full = unsharded(results, CASE_RULES, rules)
    merged = merge_reports(shard_reports(results, parts, case_rules=CASE_RULES, suite_rules=rules, unrecorded=unstated))
    assert merged.suite.model_dump() == full.suite.model_dump()
    assert merged.rules == full.rules
    assert merged.verdict == full.verdict
    assert [c.id for c in merged.cases] == [c.id for c in full.cases]


# The example's cases answered by the example service, recorded, and judged through `run`'s pipeline.
SPELLINGS = {"cs-039": "Out-Of-Scope", "cs-040": "OOS", "cs-041": "out_of_scope", "cs-042": "Out of scope"}


@pytest.fixture(scope="module")
def recorded_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[CaseResult], list[Rule], list[Rule]]:
    example = importlib.import_module("ragjudge.examples.rag_service")  # as tests/conftest.py finds it
    service = example.RagService(example.load_corpus(ROOT / "examples" / "corpus" / "docs.json"))
    cases = [item.data for item in read_items(ROOT / "examples" / "cases" / "anchors.yaml")]
    lines = []
    for k, case in enumerate(cases):
        case.pop("tags", None)
        if case["id"] in SPELLINGS:  # out of scope by category alone, in spellings case files accept
            case["category"] = SPELLINGS[case["id"]]
            case.pop("should_answer", None)
        lines.append({**case, **service.answer(case["question"]), "latencyMs": 40.0 + (k * 37) % 400})
    traces = tmp_path_factory.mktemp("recorded") / "traces.jsonl"
    traces.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    config = load_config(CONFIG)
    case_rules = parse_rules(config.case_rules(), "case", "gate.case")
    suite_rules = parse_rules(config.suite_rules(), "suite", "gate.suite")
    loaded, source = load_traces(traces, config.endpoint, need_latency=True)
    judge = make_judge(config.judge, case_rules)
    plan = RunPlan(loaded, case_rules, config.endpoint.concurrency, config.judge.concurrency)
    results = run_repeated(plan, source, judge, EventLog(None), 1, 1)
    assert [r.case.should_answer for r in results if r.case.id in SPELLINGS] == [False] * 4
    return results, case_rules, suite_rules


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_over_recorded_traces_merging_any_split_gives_the_unsharded_suite(
    recorded_results: tuple[list[CaseResult], list[Rule], list[Rule]], data: st.DataObject
) -> None:
    results, case_rules, suite_rules = recorded_results
    parts = data.draw(splits(len(results)))
    full = unsharded(results, case_rules, suite_rules)
    # No case of the example states should_answer: a report that did not record it reads it from the category.
    unrecorded = [r.case.id for r in results] if data.draw(st.booleans()) else []
    merged = merge_reports(
        shard_reports(results, parts, case_rules=case_rules, suite_rules=suite_rules, unrecorded=unrecorded)
    )
    assert full.suite.rejection_accuracy == 1.0 and full.verdict == "pass"
    assert merged.suite.model_dump() == full.suite.model_dump()
    assert merged.rules == full.rules
    assert merged.verdict == full.verdict


def test_the_error_budget_applies_to_the_merged_set_as_to_run() -> None:
    # The first shard is within the budget on its own (1 of 2 errored), the second is not; merged, 3 of 4 is
    # over it, and only the merged set's reason is given.
    down = "endpoint error: HTTP 503 after 1 attempt"
    results = [score_case(make_case(f"e{i}"), error_result(down), None, []) for i in range(3)]
    results.append(score_case(make_case("ok"), ok_result(make_trace()), None, []))
    reason = (
        "3 of 4 cases errored (75%), over gate.max_error_rate 0.5: the verdict is error; the error that dominated "
        f"(3 of 3): {down}"
    )
    full = unsharded(results)
    assert (full.verdict, full.error_reason, full.warnings[0]) == ("error", reason, reason)
    parts = shard_reports(results, [[0, 3], [1, 2]])
    merged = merge_reports(parts)
    assert (merged.verdict, merged.error_reason, merged.warnings) == ("error", reason, [reason])
    assert parts[1].report.error_reason is not None
    assert merge_reports(parts, 0.8).verdict == "fail"  # within a larger budget, the rules decide
