"""`merge_reports` gives the suite `run` gives: the same figures from the saved case blocks as from the live results.

The shard reports here are built the way `run --shard` builds them (`build_report` over the shard's results) and
read back from JSON, as `merge` reads the files; the unsharded report is built from the same results.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path

from ragjudge.gate.merge_shards import ShardReport, merge_reports
from ragjudge.gate.reporting import build_report
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.gate.suite import evaluate_suite
from ragjudge.report.model import Report, ShardBlock
from ragjudge.rules import Rule
from tests.helpers_rag import OFFLINE_INFO, make_case, make_trace, ok_result

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
        report = build_report(part, evaluate_suite(part, case_rules, suite_rules), dict(OFFLINE_INFO), [])
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
    return build_report(results, evaluate_suite(results, case_rules, suite_rules), dict(OFFLINE_INFO), [])


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
