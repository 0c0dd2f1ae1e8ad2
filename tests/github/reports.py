"""Gate reports built from plain data, for the unit tests of annotations and the summary."""

from __future__ import annotations

from typing import Any

from ragjudge.report.model import Report


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


def report(cases: list[dict[str, Any]], verdict: str | None = None, warnings: tuple[str, ...] = ()) -> Report:
    n = len(cases)
    passed = sum(c["status"] == "pass" for c in cases)
    failed = sum(c["status"] == "fail" for c in cases)
    rate = passed / n if n else None
    verdict = verdict or ("pass" if passed == n else "fail")
    rule_ok = verdict == "pass"
    return Report.model_validate(
        {
            "verdict": verdict,
            "suite": {
                "cases": n,
                "passed": passed,
                "failed": failed,
                "errored": n - passed - failed,
                "pass_rate": rate,
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
