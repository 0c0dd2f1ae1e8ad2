"""The canary report (`kind: "canary"`, `schema_version` 1) and its Markdown comment.

Field names here are the public contract: `verdict`, `reasons`, `metrics` (each with `value`,
`ci`, `op`, `threshold`, `decision`, `reason`, `treatment`, `control`, `n`) and `arms`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragjudge import __version__, stats
from ragjudge.canary.feedback import ArmFeedback
from ragjudge.canary.sample import ArmRun
from ragjudge.canary.statistical import percent
from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO, LIMIT_MS_METRICS, RATIO_METRICS, TIMING_METRICS
from ragjudge.canary.values import Decision, MetricResult
from ragjudge.metrics import registry
from ragjudge.report.markdown import COMMENT_LIMIT, environment, load_template
from ragjudge.transport.urls import public_url


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class MetricBlock(_Model):
    """One rule's outcome."""

    value: float | None
    """The compared quantity: a ratio, the treatment's p95 in ms, or its mean faithfulness."""
    ci: list[float | None] | None
    """`[lo, hi]` at the report's confidence; an unbounded end is null; null in point mode."""
    op: str
    threshold: float
    decision: Literal["pass", "fail", "inconclusive"]
    reason: str
    treatment: float | None
    """The treatment's figure: dislike rate, p95 latency (ms) or mean faithfulness."""
    control: float | None
    n: dict[str, int]
    """`{"treatment": n, "control": n}`: responses, successful requests or scored answers."""


class CaseObservation(_Model):
    """One sample question asked of one arm."""

    id: str
    latency_ms: float | None
    faithfulness: float | None
    error: str | None
    ttft_ms: float | None = None
    """Time to the first token (ms) of a streamed reply; null for a JSON body or a failed call."""


class ArmBlock(_Model):
    """What was measured on one arm."""

    url: str | None
    """Scheme, host and path only (never credentials or a query)."""
    requests: int
    ok: int
    errors: int
    error_examples: list[str]
    p50_latency_ms: float | None
    p95_latency_ms: float | None
    p95_ttft_ms: float | None = None
    """Nearest-rank p95 of the streamed replies' time to the first token (ms); null when none streamed."""
    faithfulness: float | None
    """Mean over the scored answers."""
    scored: int
    unscored: int
    dislikes: int | None
    responses: int | None
    dislike_rate: float | None
    cases: list[CaseObservation] = Field(default_factory=list)


class ArmsBlock(_Model):
    treatment: ArmBlock
    control: ArmBlock


class CanaryReport(_Model):
    """The whole canary report as written by `--report`."""

    schema_version: Literal[1] = 1
    kind: Literal["canary"] = "canary"
    verdict: Literal["promote", "rollback", "inconclusive"]
    reasons: list[str]
    metrics: dict[str, MetricBlock]
    arms: ArmsBlock
    decision: Literal["statistical", "point"]
    confidence: float
    feedback_source: str | None = None
    judge_info: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "ragjudge", "version": __version__})
    generated_at: str = ""


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _metric_block(m: MetricResult) -> MetricBlock:
    return MetricBlock(
        value=_finite(m.value),
        ci=[_finite(m.ci[0]), _finite(m.ci[1])] if m.ci is not None else None,
        op=m.op,
        threshold=m.threshold,
        decision=m.decision,
        reason=m.reason,
        treatment=_finite(m.treatment),
        control=_finite(m.control),
        n={"treatment": m.n_treatment, "control": m.n_control},
    )


def _arm_block(run: ArmRun | None, feedback: ArmFeedback | None) -> ArmBlock:
    latencies = run.latencies if run else ()
    ttfts = run.ttfts if run else ()
    scores = run.faithfulness if run else ()
    errors = run.errors if run else ()
    return ArmBlock(
        url=public_url(run.url) if run else None,
        requests=len(run.observations) if run else 0,
        ok=len(latencies),
        errors=len(errors),
        error_examples=list(dict.fromkeys(errors))[:5],
        p50_latency_ms=round(stats.percentile_nearest_rank(latencies, 50), 1) if latencies else None,
        p95_latency_ms=round(stats.percentile_nearest_rank(latencies, 95), 1) if latencies else None,
        p95_ttft_ms=round(stats.percentile_nearest_rank(ttfts, 95), 1) if ttfts else None,
        faithfulness=math.fsum(scores) / len(scores) if scores else None,
        scored=len(scores),
        unscored=len(run.unscored) if run else 0,
        dislikes=feedback.dislikes if feedback else None,
        responses=feedback.responses if feedback else None,
        dislike_rate=feedback.rate if feedback else None,
        cases=[
            CaseObservation(
                id=o.case_id,
                latency_ms=round(o.latency_ms, 1) if o.latency_ms is not None else None,
                faithfulness=o.faithfulness,
                error=o.error,
                ttft_ms=o.ttft_ms,
            )
            for o in (run.observations if run else ())
        ],
    )


def build_report(
    decision: Decision,
    runs: Mapping[str, ArmRun] | None,
    feedback: Mapping[str, ArmFeedback | None],
    feedback_source: str | None,
    judge_info: dict[str, Any],
    warnings: Sequence[str],
    extra_reasons: Sequence[str] = (),
) -> CanaryReport:
    return CanaryReport(
        verdict=decision.verdict,
        reasons=[*extra_reasons, *decision.reasons],
        metrics={m.metric: _metric_block(m) for m in decision.metrics},
        arms=ArmsBlock(
            treatment=_arm_block(runs["treatment"] if runs else None, feedback.get("treatment")),
            control=_arm_block(runs["control"] if runs else None, feedback.get("control")),
        ),
        decision=decision.mode,
        confidence=decision.confidence,
        feedback_source=feedback_source,
        judge_info=judge_info,
        warnings=list(warnings),
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


# --------------------------------------------------------------------------- the comment


def figure(metric: str, value: float | None) -> str:
    """An arm's own figure as a person reads it: `6.0%`, `840 ms`, `0.962`."""
    if value is None:
        return "n/a"
    if metric == DISLIKE_RATE_RATIO:
        return percent(value)
    if metric in TIMING_METRICS:
        return f"{value:.0f} ms"
    return f"{value:.3f}"


def interval(metric: str, block: MetricBlock) -> str:
    """`ratio 2.00 [1.47, 2.72]`, `3450 ms [3210, unbounded]`, or the point estimate alone."""

    def num(x: float | None, spec: str) -> str:
        return "unbounded" if x is None else format(x, spec)

    unit_of = registry.spec(metric).unit
    limit = unit_of == "ms"
    spec = ".0f" if limit else (".3f" if unit_of == "fraction" else ".2f")
    label = "p95 " if limit else ("mean " if unit_of == "fraction" else "ratio ")
    unit = " ms" if limit else ""
    if block.value is None:
        return "n/a"
    head = f"{label}{format(block.value, spec)}{unit}"
    if block.ci is None:
        return f"{head} (point estimate)"
    lo, hi = block.ci
    return f"{head} [{num(lo, spec)}, {num(hi, spec)}]"


def threshold(metric: str, block: MetricBlock) -> str:
    if metric in RATIO_METRICS:
        return f"{block.op} {block.threshold:g}x control"
    if metric in LIMIT_MS_METRICS:
        return f"{block.op} {block.threshold:g} ms"
    return f"{block.op} {block.threshold:g}"


def render_comment(report: CanaryReport, report_path: str | None = None) -> str:
    """The canary comment from the built-in template (`report/templates/canary.md.j2`)."""
    template = environment().from_string(load_template(None, "canary.md.j2"))
    text = template.render(
        report=report,
        figure=figure,
        interval=interval,
        threshold=threshold,
        report_path=report_path,
    )
    if len(text) > COMMENT_LIMIT:  # only a pathological number of warnings gets here
        note = "\n\n…comment truncated: see the JSON report.\n"
        text = text[: COMMENT_LIMIT - len(note)] + note
    return text
