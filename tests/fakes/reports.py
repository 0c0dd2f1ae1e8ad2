"""Reports for the tests that need one without running the gate: the one place tests build a Report.

* `report([C("a"), C("b", "fail")], ...)`: a report a baseline comparison reads. A case is an id, a
  status and the figures the comparison reads; the report has provenance (commit, ref, rules hash,
  judge fingerprint), no rules unless given, and the verdict "pass" unless given.
* `gate_report([case("a", "pass"), case("b")], ...)`: a report as the gate writes one, for the readers
  of a finished run (annotations, the job summary, the comment). A case has a question and a trace
  and fails unless told; the report has the pass-rate and p95 rules, the offline judge's info, the
  warnings, and its verdict from the statuses.
* `make_report(results)`: from CaseResults, through the gate's own suite and report steps.

Both plain-data builders count the suite block alike (`_counts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.gate.provenance import judge_fingerprint
from ragjudge.gate.reporting import build_report
from ragjudge.gate.scoring import CaseResult
from ragjudge.gate.suite import evaluate_suite
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.report.suite_block import RuleBlock, SuiteBlock
from ragjudge.report.trace_block import TraceBlock
from ragjudge.rules import Rule

OFFLINE = judge_fingerprint(JudgeConfig())
MODEL = judge_fingerprint(JudgeConfig(provider="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1"))
OFFLINE_INFO = {"judge": "offline-lexical", "provider": "offline", "lexical": True}


def _counts(statuses: Sequence[str]) -> dict[str, Any]:
    """The suite block's counts: cases, passed, failed, errored and the pass rate (None for no cases)."""
    n = len(statuses)
    passed = statuses.count("pass")
    return {
        "cases": n,
        "passed": passed,
        "failed": statuses.count("fail"),
        "errored": statuses.count("error"),
        "pass_rate": passed / n if n else None,
    }


# --- reports a baseline comparison reads ---------------------------------------------------------------


@dataclass
class C:
    """One case of a test report."""

    id: str
    status: str = "pass"
    faithfulness: float | None = None
    grounding: float | None = None
    latency: float = 100.0
    cost: float | None = None
    flaky: bool = False
    ttft: float | None = None
    """A streamed reply's time to the first token; None for a JSON body."""
    conditions: list[str] = field(default_factory=list)
    judge_cost: float | None = 0.0
    """What the judge's calls for the case cost (None: unknown, an unpriced model); with `judge_calls`."""
    judge_calls: int = 0

    def block(self) -> CaseBlock:
        metrics: dict[str, float | None] = {"latency_ms": self.latency, "faithfulness": self.faithfulness}
        if self.grounding is not None:
            metrics["judge.grounding"] = self.grounding
        conditions = self.conditions or ([] if self.status == "pass" else [f"{self.id} broke"])
        return CaseBlock(
            id=self.id,
            category=None,
            status=self.status,  # type: ignore[arg-type]
            failed_conditions=conditions,
            metrics=metrics,
            judge={"calls": self.judge_calls, "cost_usd": self.judge_cost} if self.judge_calls else {},
            trace=TraceBlock(
                answer="a",
                refused=False,
                confidence=None,
                retrieved_ids=[],
                latency_ms=self.latency,
                cost_usd=self.cost,
                error=None,
                ttft_ms=self.ttft,
            ),
            flaky=self.flaky,
            runs=[{"status": "fail", "failed_conditions": ["x"], "latency_ms": self.latency}, {"status": "pass"}]
            if self.flaky
            else [],
            k_of_n="1 of 2 passed" if self.flaky else None,
        )


def report(
    cases: list[C],
    *,
    commit: str | None = "0123456789abcdef",
    ref: str | None = "refs/heads/main",
    created_at: str | None = "2026-11-27T10:00:00+00:00",
    fingerprint: dict[str, Any] | None = None,
    rules_hash: str = "r" * 64,
    verdict: str = "pass",
    suite_rules: list[RuleBlock] | None = None,
    provenance: bool = True,
) -> Report:
    suite = SuiteBlock(
        **_counts([c.status for c in cases]),
        faithfulness=None,
        rejection_accuracy=None,
        p50_latency_ms=None,
        p95_latency_ms=None,
        judge_error_rate=None,
        endpoint_error_rate=None,
        cost_usd=None,
    )
    prov: dict[str, Any] = {}
    if provenance:
        prov = {
            "created_at": created_at,
            "git_commit": commit,
            "git_ref": ref,
            "rules_hash": rules_hash,
            "judge_fingerprint": OFFLINE if fingerprint is None else fingerprint,
        }
    return Report(
        verdict=verdict,  # type: ignore[arg-type]
        suite=suite,
        rules=suite_rules or [],
        cases=[c.block() for c in cases],
        provenance=prov,
        generated_at=created_at or "",
    )


# --- reports as the gate writes them -------------------------------------------------------------------


def case(
    case_id: str, status: str = "fail", conditions: tuple[str, ...] = (), **metrics: float | None
) -> dict[str, Any]:
    return {
        "id": case_id,
        "category": None,
        "status": status,
        "failed_conditions": list(conditions or ((f"{case_id} broke",) if status != "pass" else ())),
        "metrics": metrics,
        "judge": {},
        "question": f"question of {case_id}",
        "trace": {
            "answer": "an answer",
            "refused": False,
            "confidence": "high",
            "retrieved_ids": ["d1"],
            "latency_ms": 10.0,
            "cost_usd": None,
            "error": None,
        },
    }


def gate_report(cases: list[dict[str, Any]], verdict: str | None = None, warnings: tuple[str, ...] = ()) -> Report:
    counts = _counts([c["status"] for c in cases])
    rate = counts["pass_rate"]
    verdict = verdict or ("pass" if counts["passed"] == counts["cases"] else "fail")
    rule_ok = verdict == "pass"
    return Report.model_validate(
        {
            "verdict": verdict,
            "suite": {
                **counts,
                "faithfulness": None,
                "rejection_accuracy": None,
                "p50_latency_ms": 10.0,
                "p95_latency_ms": 10.0,
                "judge_error_rate": 0.0,
                "endpoint_error_rate": 0.0,
                "cost_usd": None,
            },
            "rules": [
                {
                    "scope": "suite",
                    "metric": "pass_rate",
                    "op": ">=",
                    "threshold": 1.0,
                    "value": rate,
                    "passed": rule_ok,
                    "reason": f"pass_rate {rate} {'>=' if rule_ok else '<'} 1",
                },
                {
                    "scope": "suite",
                    "metric": "p95_latency_ms",
                    "op": "<=",
                    "threshold": 3000.0,
                    "value": 10.0,
                    "passed": True,
                    "reason": "p95_latency_ms 10 <= 3000",
                },
            ],
            "cases": cases,
            "judge_info": {"judge": "offline-lexical", "lexical": True},
            "warnings": list(warnings),
        }
    )


# --- reports from the gate's own steps -----------------------------------------------------------------


def make_report(
    results: Sequence[CaseResult],
    case_rules: Sequence[Rule] = (),
    suite_rules: Sequence[Rule] = (Rule("suite", "pass_rate", ">=", 1.0),),
    judge_info: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
) -> Report:
    suite = evaluate_suite(results, case_rules, suite_rules)
    info = JudgeInfoBlock.model_validate(OFFLINE_INFO if judge_info is None else judge_info)
    return build_report(results, suite, info, warnings)
