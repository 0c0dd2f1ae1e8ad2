"""The JSON report: `schema_version` 1. Field names here are the public contract."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragjudge import __version__, masking
from ragjudge.errors import CaseFileError
from ragjudge.scoring import CaseResult
from ragjudge.suite import SuiteResult


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class SuiteBlock(_Model):
    cases: int
    passed: int
    failed: int
    errored: int
    pass_rate: float | None
    faithfulness: float | None
    rejection_accuracy: float | None
    p50_latency_ms: float | None
    p95_latency_ms: float | None
    judge_error_rate: float | None
    endpoint_error_rate: float | None
    cost_usd: float | None


class RuleBlock(_Model):
    scope: Literal["case", "suite"]
    metric: str
    op: str
    threshold: float
    value: float | None
    passed: bool | None
    reason: str


class TraceBlock(_Model):
    answer: str | None
    refused: bool | None
    confidence: str | None
    retrieved_ids: list[str]
    latency_ms: float | None
    cost_usd: float | None
    error: str | None
    attempts: int = 0
    retry_wait_ms: float = 0.0
    server_latency_ms: float | None = None
    warnings: list[str] = Field(default_factory=list)


class CaseBlock(_Model):
    id: str
    category: str | None
    status: Literal["pass", "fail", "error"]
    failed_conditions: list[str]
    metrics: dict[str, float | None]
    judge: dict[str, Any]
    trace: TraceBlock
    question: str = ""


class Report(_Model):
    """The whole report as written by `--report`."""

    schema_version: Literal[1] = 1
    verdict: Literal["pass", "fail", "error"]
    suite: SuiteBlock
    rules: list[RuleBlock]
    cases: list[CaseBlock]
    judge_info: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "ragjudge", "version": __version__})
    generated_at: str = ""


def _case_block(result: CaseResult) -> CaseBlock:
    trace = result.endpoint.trace
    return CaseBlock(
        id=result.case.id,
        category=result.case.category,
        status=result.status,
        failed_conditions=list(result.failed_conditions),
        metrics=dict(result.metrics),
        judge=result.judgement.as_dict() if result.judgement else {},
        question=result.case.question,
        trace=TraceBlock(
            answer=trace.answer if trace else None,
            refused=trace.refused if trace else None,
            confidence=trace.confidence if trace else None,
            retrieved_ids=list(trace.retrieved_ids) if trace else [],
            latency_ms=round(trace.latency_ms, 1) if trace else None,
            cost_usd=trace.cost_usd if trace else None,
            error=result.endpoint.error,
            attempts=result.endpoint.attempts,
            retry_wait_ms=result.endpoint.retry_wait_ms,
            server_latency_ms=trace.server_latency_ms if trace else None,
            warnings=list(trace.warnings) if trace else [],
        ),
    )


def build_report(
    results: Sequence[CaseResult],
    suite: SuiteResult,
    judge_info: dict[str, Any],
    warnings: Sequence[str],
) -> Report:
    m = suite.metrics
    block = SuiteBlock.model_validate(m)
    return Report(
        verdict=suite.verdict,
        suite=block,
        rules=[
            RuleBlock(
                scope=o.rule.scope,
                metric=o.rule.metric,
                op=o.rule.op,
                threshold=o.rule.threshold,
                value=o.value,
                passed=o.passed,
                reason=o.reason,
            )
            for o in suite.rules
        ],
        cases=[_case_block(r) for r in results],
        judge_info=judge_info,
        warnings=list(warnings),
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


ReportT = TypeVar("ReportT", bound=BaseModel)


def redact(report: ReportT, secrets: Sequence[str] = ()) -> ReportT:
    """The report with every secret replaced by `***` in every text value (e.g. a token echoed in an answer).

    `secrets` are registered (`ragjudge.masking`) beside those already known.
    """
    masking.register(*secrets)
    if not masking.secrets():
        return report
    return type(report).model_validate(masking.mask_data(report.model_dump()))


def write_report(report: BaseModel, path: Path) -> None:
    """Written whole or not at all: a reader never sees half a report; never a secret, even JSON-escaped."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(masking.mask(report.model_dump_json(indent=2)) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_report(path: Path) -> Report:
    """Read a report back (for `ragjudge comment`); errors name the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseFileError(f"{path}: report file not found", tip="pass the file written by --report") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseFileError(f"{path}: not a JSON report ({exc})") from None
    if isinstance(data, dict) and data.get("kind") == "canary":
        raise CaseFileError(f"{path}: this is a canary report; use `ragjudge canary` to render it")
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CaseFileError(f"{path}: not a ragjudge report: {loc}: {first['msg']}") from None
