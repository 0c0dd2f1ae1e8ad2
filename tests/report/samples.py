"""Reports built from plain data for the JUnit and HTML tests: every status, hostile text, and
optionally the baseline-comparison fields (`comparison`, per-case `change`, `runs`, `k_of_n`)."""

from __future__ import annotations

from typing import Any

from ragjudge.report.model import Report

HOSTILE = 'x</td><script>alert("pwned")</script><img src=x onerror=alert(1)> ]]> & "q" \x01\x07 {{ 7*7 }}'


def case(
    case_id: str,
    status: str,
    category: str | None,
    difficulty: str | None,
    latency: float | None,
    conditions: tuple[str, ...] = (),
    **extra: Any,
) -> dict[str, Any]:
    replied = latency is not None
    return {
        "id": case_id,
        "category": category,
        "difficulty": difficulty,
        "status": status,
        "failed_conditions": list(conditions),
        "metrics": {"faithfulness": 1.0},
        "question": f"question of {case_id}?",
        "judge": {
            "judge": "gpt-test",
            "faithfulness": 0.5 if status == "fail" else 1.0,
            "claims": [
                {"claim": "Refunds take 7 days.", "supported": True, "evidence_id": "doc-1", "reason": "stated"},
                {"claim": "Shipping is free.", "supported": status != "fail", "evidence_id": None, "reason": "absent"},
            ],
            "scores": {"grounding": 4 if status == "pass" else 2, "relevance": 5},
            "reasoning": {"grounding": f"reason for {case_id}", "relevance": "on topic"},
            "unscored": [],
            "calls": 2,
            "tokens": 100,
            "cost_usd": 0.001,
            "cache_hits": 0,
        }
        if replied
        else {},
        "trace": {
            "answer": f"answer of {case_id}" if replied else None,
            "refused": False if replied else None,
            "confidence": "high" if replied else None,
            "retrieved_ids": ["doc-1", "doc-2"] if replied else [],
            "latency_ms": latency,
            "cost_usd": None,
            "error": None if replied else "endpoint error: HTTP 500 after 3 attempts",
            "passages": [
                {"id": "doc-1", "title": "Refunds", "text": "Refunds take 7 days."},
                {"id": "doc-2", "title": "Shipping", "text": "Shipping costs 5 EUR."},
            ]
            if replied
            else [],
        },
        **extra,
    }


def sample_report(comparison: bool = False, hostile: bool = False) -> Report:
    """Six cases: 4 pass, 1 fail, 1 error; two categories and three difficulties."""
    bad = HOSTILE if hostile else 'contains forbidden claim: "free"'
    cases = [
        case("refund-01", "pass", "refunds", "easy", 120.0),
        case("refund-02", "pass", "refunds", "medium", 340.0),
        case("refund-07", "fail", "refunds", "hard", 910.0, (bad, "faithfulness 0.50 < 0.80")),
        case("ship-01", "pass", "shipping", "easy", 80.0),
        case("ship-02", "pass", "shipping", None, 2500.0),
        case("ship-12", "error", "shipping", "medium", None, ("endpoint error: HTTP 500 after 3 attempts",)),
    ]
    if hostile:
        cases[2]["question"] = HOSTILE
        cases[2]["trace"]["answer"] = HOSTILE
        cases[2]["judge"]["reasoning"]["grounding"] = HOSTILE
        cases[2]["id"] = "refund-07" + HOSTILE
    data: dict[str, Any] = {
        "verdict": "fail",
        "suite": {
            "cases": 6,
            "passed": 4,
            "failed": 1,
            "errored": 1,
            "pass_rate": 4 / 6,
            "faithfulness": 0.9,
            "rejection_accuracy": 1.0,
            "p50_latency_ms": 340.0,
            "p95_latency_ms": 2500.0,
            "judge_error_rate": 0.0,
            "endpoint_error_rate": 1 / 6,
            "cost_usd": 0.005,
            "judge_calls": 10,
        },
        "rules": [
            {
                "scope": "case",
                "metric": "faithfulness",
                "op": ">=",
                "threshold": 0.8,
                "value": 1.0,
                "passed": False,
                "reason": "1 case(s) failed faithfulness >= 0.8: refund-07",
            },
            {
                "scope": "suite",
                "metric": "pass_rate",
                "op": ">=",
                "threshold": 0.9,
                "value": 4 / 6,
                "passed": False,
                "reason": "pass_rate 0.67 < 0.90",
            },
            {
                "scope": "suite",
                "metric": "p95_latency_ms",
                "op": "<=",
                "threshold": 3000,
                "value": 2500.0,
                "passed": True,
                "reason": "p95_latency_ms 2500 <= 3000",
            },
        ],
        "cases": cases,
        "judge_info": {"judge": "gpt-test", "provider": "openai", "lexical": False},
        "warnings": ["a warning for people"],
        "generated_at": "2026-11-30T18:00:00+00:00",
    }
    if comparison:
        changes = ["still_passing", "fixed", "regression", "still_passing", "flaky", "new"]
        for block, change in zip(cases, changes, strict=True):
            block["change"] = change
        cases[2]["baseline"] = {"status": "pass", "failed_conditions": []}
        cases[4]["flaky"] = True
        cases[4]["k_of_n"] = "2 of 3 passed"
        cases[4]["runs"] = [
            {"status": "fail", "failed_conditions": ["latency_ms 2600 > 2000"], "latency_ms": 2500.0},
            {"status": "pass", "failed_conditions": [], "latency_ms": 1800.0},
            {"status": "pass", "failed_conditions": [], "latency_ms": 1700.0},
        ]
        data["comparison"] = {
            "baseline": {
                "commit": "abc1234def",
                "ref": "main",
                "created_at": "2026-11-27T18:00:00+00:00",
                "age_days": 3.0,
                "path": "baseline.json",
            },
            "judge_comparable": True,
            "new_cases": ["ship-12"],
            "removed_cases": ["old-03"],
            "deltas": [
                {
                    "metric": "pass_rate",
                    "base": 0.83,
                    "now": 0.67,
                    "delta": -0.16,
                    "ci_low": None,
                    "ci_high": None,
                    "p_value": 0.5,
                    "significant": False,
                    "test": "mcnemar",
                    "comparable": True,
                    "reason": "",
                },
                {
                    "metric": "faithfulness",
                    "base": 0.95,
                    "now": 0.9,
                    "delta": -0.05,
                    "ci_low": -0.09,
                    "ci_high": -0.01,
                    "p_value": 0.03,
                    "significant": True,
                    "test": "wilcoxon",
                    "comparable": True,
                    "reason": "",
                },
                {
                    "metric": "judge.grounding",
                    "base": 4.0,
                    "now": 3.6,
                    "delta": -0.4,
                    "ci_low": -0.9,
                    "ci_high": 0.1,
                    "p_value": None,
                    "significant": None,
                    "test": "bootstrap",
                    "comparable": False,
                    "reason": "the judge changed (gpt-a -> gpt-test)",
                },
            ],
            "rules": [
                {
                    "scope": "regression",
                    "metric": "newly_failing",
                    "op": "<=",
                    "threshold": 0,
                    "value": 1,
                    "passed": False,
                    "reason": "1 regression: refund-07",
                },
            ],
            "notices": [],
        }
    return Report.model_validate(data)


def tolerant_pass_report(comparison: bool = False) -> Report:
    """`sample_report`'s cases under a `pass`: pass_rate >= 0.6 tolerates the case that failed the case rule
    `faithfulness >= 0.8` (a case rule failed, the suite passed)."""
    report = sample_report(comparison)
    report.verdict = "pass"
    pass_rate = report.rules[1]
    pass_rate.threshold, pass_rate.passed, pass_rate.reason = 0.6, True, "pass_rate 0.67 >= 0.60"
    return report
