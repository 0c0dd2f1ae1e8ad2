"""The JSON report: the machine contract's names and values, writing, reading back, redaction."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.rag import error_result, make_case, make_trace, ok_result
from tests.fakes.reports import make_report

from ragjudge.errors import CaseFileError, ExitCode
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.judge.offline import OfflineJudge
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.report.reading import load_report
from ragjudge.report.trace_block import PASSAGE_CHARS, PassageBlock
from ragjudge.report.writing import redact, write_report
from ragjudge.rules import Rule

# The contract; the names never change within schema_version 1.
SUITE_KEYS = {
    "cases",
    "passed",
    "failed",
    "errored",
    "pass_rate",
    "faithfulness",
    "rejection_accuracy",
    "p50_latency_ms",
    "p95_latency_ms",
    "judge_error_rate",
    "endpoint_error_rate",
    "cost_usd",
}
# Added beside them (documented in docs/report.md): the judge's usage, and cases that passed only on a repeat.
SUITE_USAGE_KEYS = {
    "judge_calls",
    "judge_cache_hits",
    "judge_tokens",
    "judge_cost_usd",
    "service_cost_usd",
    "flaky_cases",
}
# The reference judgement's figures (null when no reference was judged).
SUITE_REFERENCE_KEYS = {"answer_correctness", "reference_contradictions"}
# Streamed replies' time to the first token (null when no reply was streamed).
SUITE_STREAM_KEYS = {"p50_ttft_ms", "p95_ttft_ms"}
# Suite metrics the registry gained after the contract, written beside it under their names (docs/metrics.md).
SUITE_REGISTRY_KEYS = {"p99_latency_ms"}
RULE_KEYS = {"scope", "metric", "op", "threshold", "value", "passed", "reason"}
CASE_KEYS = {"id", "category", "status", "failed_conditions", "metrics", "judge", "trace"}
TRACE_KEYS = {"answer", "refused", "confidence", "retrieved_ids", "latency_ms", "cost_usd", "error"}
CASE_RULES = [Rule("case", "context_recall", ">=", 1.0), Rule("case", "faithfulness", ">=", 0.5)]
SUITE_RULES = [Rule("suite", "pass_rate", ">=", 1.0), Rule("suite", "p95_latency_ms", "<=", 3000)]


def _judged(case_id: str, answer: str, ids: list[str], passages: dict[str, str], **case_kw: Any) -> CaseResult:
    case = make_case(case_id, **case_kw)
    trace = make_trace(answer, ids=ids, passages=passages, latency_ms=250.04, cost_usd=0.001)
    judgement = OfflineJudge().judge(case, trace, lambda _: None)
    return score_case(case, ok_result(trace), judgement, CASE_RULES)


@pytest.fixture
def report() -> Report:
    results = [
        _judged("ok-1", "Refunds take five days.", ["d1"], {"d1": "Refunds take five days."}, golden=["d1"]),
        _judged("bad-2", "Shipping is always free.", ["d9"], {"d9": "Invoices by email."}, golden=["d1", "d2"]),
        score_case(make_case("err-3"), error_result("endpoint error: HTTP 500 after 3 attempts"), None, CASE_RULES),
    ]
    return make_report(results, CASE_RULES, SUITE_RULES, warnings=["a warning"])


def _json(report: Report) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(report.model_dump_json())
    return data


def test_top_level_keys(report: Report) -> None:
    data = _json(report)
    assert set(data) == {
        "schema_version",
        "verdict",
        "suite",
        "rules",
        "cases",
        "judge_info",
        "warnings",
        "tool",
        "generated_at",
        "shard",
        "provenance",
        "comparison",
        "interrupted",
        "error_reason",
        "headline",
        "judge_trust",
        "failure_groups",
    }
    assert data["error_reason"] is None  # 1 of 3 errored: within the error budget
    assert data["shard"] is None  # set only by `run --shard`
    assert data["provenance"] == {} and data["comparison"] is None  # filled by `ragjudge run`
    assert data["interrupted"] is None  # set only when a signal stopped the run
    assert data["schema_version"] == 1
    assert data["verdict"] == "fail"
    assert data["warnings"] == ["a warning"]
    assert data["tool"] == {"name": "ragjudge", "version": "0.1.0"}


def test_suite_block_has_the_contract_keys_and_values(report: Report) -> None:
    suite = _json(report)["suite"]
    assert set(suite) == (
        SUITE_KEYS
        | SUITE_USAGE_KEYS
        | SUITE_REFERENCE_KEYS
        | SUITE_STREAM_KEYS
        | SUITE_REGISTRY_KEYS
        | {"tool_condition_accuracy"}
    )
    assert {k: suite[k] for k in SUITE_STREAM_KEYS} == {"p50_ttft_ms": None, "p95_ttft_ms": None}
    assert suite["tool_condition_accuracy"] is None  # no case has tool conditions
    assert {k: v for k, v in suite.items() if k in SUITE_KEYS} == {
        "cases": 3,
        "passed": 1,
        "failed": 1,
        "errored": 1,
        "pass_rate": pytest.approx(1 / 3),
        "faithfulness": 0.5,
        "rejection_accuracy": 1.0,
        "p50_latency_ms": 250.0,
        "p95_latency_ms": 250.0,
        "judge_error_rate": 0.0,
        "endpoint_error_rate": pytest.approx(1 / 3),
        "cost_usd": 0.002,
    }
    # The offline judge makes no calls and costs nothing.
    assert {k: suite[k] for k in SUITE_USAGE_KEYS} == {
        "judge_calls": 0,
        "judge_cache_hits": 0,
        "judge_tokens": 0,
        "judge_cost_usd": 0.0,
        "service_cost_usd": 0.002,  # what the replies reported, apart from the judge's
        "flaky_cases": 0,
    }


def test_judge_info_is_kept(report: Report) -> None:
    assert _json(report)["judge_info"] == {"judge": "offline-lexical", "provider": "offline", "lexical": True}


def test_rules_entries(report: Report) -> None:
    rules = _json(report)["rules"]
    assert all(set(r) == RULE_KEYS for r in rules)
    assert rules == [
        {
            "scope": "case",
            "metric": "context_recall",
            "op": ">=",
            "threshold": 1.0,
            "value": 1.0,
            "passed": False,
            "reason": "1 case(s) failed context_recall >= 1: bad-2",
        },
        {
            "scope": "case",
            "metric": "faithfulness",
            "op": ">=",
            "threshold": 0.5,
            "value": 1.0,
            "passed": False,
            "reason": "1 case(s) failed faithfulness >= 0.5: bad-2",
        },
        {
            "scope": "suite",
            "metric": "pass_rate",
            "op": ">=",
            "threshold": 1.0,
            "value": pytest.approx(1 / 3),
            "passed": False,
            "reason": "pass_rate 0.333 < 1",
        },
        {
            "scope": "suite",
            "metric": "p95_latency_ms",
            "op": "<=",
            "threshold": 3000.0,
            "value": 250.0,
            "passed": True,
            "reason": "p95_latency_ms 250 <= 3000",
        },
    ]


def test_case_entries(report: Report) -> None:
    ok, bad, err = _json(report)["cases"]
    for case in (ok, bad, err):
        assert set(case) == CASE_KEYS | {
            "question",
            "difficulty",
            "should_answer",
            "expected",
            "golden_context_ids",
            "must_mention",
            "must_not_mention",
            "change",
            "flaky",
            "runs",
            "k_of_n",
            "baseline",
            "turns",
            "case_hash",
            "file",
            "line",
            "judge_runs",
            "judge_split",
            "pairwise",
            "advisory_conditions",
            "review",
            "tools",
            "tools_held",
        }
        assert set(case["trace"]) == TRACE_KEYS | {
            "attempts",
            "retry_wait_ms",
            "server_latency_ms",
            "passages",
            "refused_by",
            "positional_ids",
            "warnings",
            "ttft_ms",
            "conversation_id",
            "passages_unknown",
            "protocol",
            "finish_reason",
            "reasoning",
            "tool_calls",
            "spans",
        }
    assert (ok["id"], ok["category"], ok["status"], ok["failed_conditions"]) == ("ok-1", "refund", "pass", [])
    assert ok["metrics"] == {
        "context_recall": 1.0,
        "context_precision": 1.0,
        "latency_ms": 250.0,
        "cost_usd": 0.001,
        "faithfulness": 1.0,
    }
    assert ok["trace"] == {
        "answer": "Refunds take five days.",
        "refused": False,
        "confidence": "high",
        "retrieved_ids": ["d1"],
        "latency_ms": 250.0,
        "cost_usd": 0.001,
        "error": None,
        "attempts": 1,
        "retry_wait_ms": 0.0,
        "server_latency_ms": None,
        "passages": ok["trace"]["passages"],
        "refused_by": None,
        "positional_ids": False,
        "warnings": [],
        "ttft_ms": None,
        "conversation_id": None,
        "passages_unknown": False,
        "protocol": None,
        "finish_reason": None,
        "reasoning": None,
        "tool_calls": None,
        "spans": None,
    }
    assert ok["trace"]["passages"] == [{"id": "d1", "title": "d1", "text": "Refunds take five days."}]
    assert (ok["difficulty"], ok["should_answer"]) == (None, True)
    assert ok["judge"]["judge"] == "offline-lexical"
    assert ok["judge"]["faithfulness"] == 1.0
    assert ok["judge"]["claims"] == [
        {
            "claim": "Refunds take five days.",
            "supported": True,
            "evidence_id": "d1",
            "reason": "100% of its words appear in passage d1",
        }
    ]
    assert bad["status"] == "fail"
    assert bad["failed_conditions"] == [
        "context_recall 0.000 < 1 (missing d1, d2; retrieved d9)",
        'faithfulness 0.000 < 0.5 (1 of 1 claims unsupported: "Shipping is always free.")',
    ]


def test_an_errored_case_has_an_empty_trace_with_the_error(report: Report) -> None:
    err = _json(report)["cases"][2]
    assert (err["status"], err["failed_conditions"]) == ("error", ["endpoint error: HTTP 500 after 3 attempts"])
    assert err["metrics"] == dict.fromkeys(
        ["context_recall", "context_precision", "latency_ms", "cost_usd", "faithfulness"]
    )
    assert err["judge"] == {
        "judge": "offline-lexical",
        "judged": False,
        "faithfulness": None,
        "claims": [],
        "scores": {},
        "reasoning": {},
        "unassessable": [],
        "unscored": [],
        "notes": ["not judged: no usable reply"],
        "tokens": 0,
        "cost_usd": 0.0,
        "calls": 0,
        "cache_hits": 0,
        "escalated": [],
        "spread": {},
    }
    assert err["trace"] == {
        "answer": None,
        "refused": None,
        "confidence": None,
        "retrieved_ids": [],
        "latency_ms": None,
        "cost_usd": None,
        "error": "endpoint error: HTTP 500 after 3 attempts",
        "attempts": 3,
        "retry_wait_ms": 0.0,
        "server_latency_ms": None,
        "passages": [],
        "refused_by": None,
        "positional_ids": False,
        "warnings": [],
        "ttft_ms": None,
        "conversation_id": None,
        "passages_unknown": False,
        "protocol": None,
        "finish_reason": None,
        "reasoning": None,
        "tool_calls": None,
        "spans": None,
    }


def test_passages_are_kept_trimmed(tmp_path: Path) -> None:
    long = "x" * (PASSAGE_CHARS + 50)
    result = _judged("p-1", "An answer.", ["d1", "d2"], {"d1": long}, golden=["d1"])
    [case] = _json(make_report([result], CASE_RULES, SUITE_RULES))["cases"]
    assert case["trace"]["passages"] == [
        {"id": "d1", "title": "d1", "text": "x" * PASSAGE_CHARS},
        {"id": "d2", "title": "d2", "text": ""},  # an id without text still shows
    ]


def test_write_and_load_round_trip(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "out" / "report.json"
    write_report(report, path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert json.loads(text)["verdict"] == "fail"
    assert [p.name for p in path.parent.iterdir()] == ["report.json"]  # no temporary file left
    assert load_report(path) == report


def test_write_keeps_non_ascii_readable(tmp_path: Path) -> None:
    case = make_case("zh", "耳机能退吗？")
    result = score_case(case, ok_result(make_trace("可以退款。")), None, [])
    path = tmp_path / "r.json"
    write_report(make_report([result]), path)
    assert "耳机能退吗？" in path.read_text(encoding="utf-8")


def test_load_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(CaseFileError) as info:
        load_report(path)
    assert info.value.message == f"{path}: report file not found"
    assert info.value.exit_code == ExitCode.BAD_INPUT


def test_a_report_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    # Issue 40: the report reader is the one bounded reader of repository files (`--baseline pipe.json`).
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    with pytest.raises(CaseFileError) as info:
        load_report(path)
    assert info.value.message == f"{path}: refused: a FIFO (named pipe), not a file"


def test_load_not_json(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("<html>", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"r\.json: not a JSON report \(") as info:
        load_report(path)
    assert info.value.exit_code == ExitCode.BAD_INPUT


def test_load_not_a_report_names_the_field(report: Report, tmp_path: Path) -> None:
    data = _json(report)
    del data["verdict"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CaseFileError) as info:
        load_report(path)
    assert info.value.message == f"{path}: not a ragjudge report: verdict: Field required"


def test_load_rejects_another_schema_version(report: Report, tmp_path: Path) -> None:
    data = _json(report)
    data["schema_version"] = 2
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"^.*r\.json: not a ragjudge report: schema_version: "):
        load_report(path)


def test_load_refuses_a_canary_report(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"kind": "canary"}', encoding="utf-8")
    with pytest.raises(CaseFileError) as info:
        load_report(path)
    assert info.value.message == f"{path}: this is a canary report; use `ragjudge canary` to render it"


def test_redact_replaces_secrets_in_every_text_value() -> None:
    token = "s3cr3t-token-XYZ"
    case = make_case("c1", f"what is {token}?")
    result = score_case(case, ok_result(make_trace(f"your header was Bearer {token}")), None, [])
    redacted = redact(make_report([result]), [token, f"Bearer {token}"])
    dumped = redacted.model_dump_json()
    assert token not in dumped
    assert redacted.cases[0].trace.answer == "your header was ***"
    assert redacted.cases[0].question == "what is ***?"


def test_redact_without_secrets_is_the_same_report(report: Report) -> None:
    assert redact(report, []) is report


def test_redact_returns_a_report_that_holds_no_secret_unchanged(report: Report) -> None:
    assert redact(report, ["sk-not-in-this-report-0000"]) is report


def test_redact_finds_a_secret_that_only_appears_json_escaped() -> None:
    token = 'tok"en\\with-quotes'
    result = score_case(make_case("c1"), ok_result(make_trace(f"echo {token}")), None, [])
    redacted = redact(make_report([result]), [token])
    assert redacted.cases[0].trace.answer == "echo ***"


@pytest.mark.parametrize("cases", [0, 1, 3])
def test_the_report_is_written_a_case_at_a_time_exactly_as_one_dump(cases: int, tmp_path: Path) -> None:
    results = [_judged(f"c{i}", '运费 "quoted"\nline', ["d1"], {"d1": "运费"}) for i in range(cases)]
    report = make_report(results, CASE_RULES, SUITE_RULES, warnings=["w"])
    report = report.model_copy(
        update={"judge_info": JudgeInfoBlock.model_validate({"judge": "offline", "nested": [1, {"a": None}]})}
    )
    write_report(report, tmp_path / "r.json")
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == report.model_dump_json(indent=2) + "\n"
    assert not (tmp_path / "r.json.tmp").exists()


def test_records_share_the_set_of_given_field_names_until_one_is_assigned(report: Report) -> None:
    # A set of a record's given field names is about 2 KB: 10,000 cases would hold 20 MB of identical sets.
    first, second = report.cases[0], report.cases[1]
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.trace.__pydantic_fields_set__ is second.trace.__pydantic_fields_set__
    bare = PassageBlock(id="p1")
    assert bare.model_fields_set == {"id"}
    bare.title = "Returns"  # pydantic records the assignment in the instance's set: never in a shared one
    assert bare.model_fields_set == {"id", "title"}
    assert PassageBlock(id="p2").model_fields_set == {"id"}
    assert PassageBlock(id="p3").model_dump(exclude_unset=True) == {"id": "p3"}
    first.category = "billing"
    assert first.__pydantic_fields_set__ is not second.__pydantic_fields_set__
    assert (first.category, second.category) == ("billing", "refund")
