"""Building reports for comparison tests: a case is an id, a status and the figures the comparison reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragjudge.config.model import JudgeConfig
from ragjudge.gate.provenance import judge_fingerprint
from ragjudge.report.model import CaseBlock, Report, RuleBlock, SuiteBlock, TraceBlock

OFFLINE = judge_fingerprint(JudgeConfig())
MODEL = judge_fingerprint(JudgeConfig(provider="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1"))


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
    conditions: list[str] = field(default_factory=list)

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
            judge={},
            trace=TraceBlock(
                answer="a",
                refused=False,
                confidence=None,
                retrieved_ids=[],
                latency_ms=self.latency,
                cost_usd=self.cost,
                error=None,
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
    n = len(cases)
    passed = sum(c.status == "pass" for c in cases)
    suite = SuiteBlock(
        cases=n,
        passed=passed,
        failed=sum(c.status == "fail" for c in cases),
        errored=sum(c.status == "error" for c in cases),
        pass_rate=passed / n if n else None,
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
