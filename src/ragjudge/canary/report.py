"""The canary report (`kind: "canary"`, `schema_version` 1) and its Markdown comment.

Field names here are the public contract; each says what it means below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragjudge import __version__, stats
from ragjudge.canary.advice import advice
from ragjudge.canary.feedback import ArmFeedback
from ragjudge.canary.sample import ArmRun
from ragjudge.canary.statistical import percent
from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO, LIMIT_MS_METRICS, RATIO_METRICS, TIMING_METRICS
from ragjudge.canary.values import Decision, MetricResult, Settings
from ragjudge.judge.budget import EXHAUSTED, Budget
from ragjudge.metrics import registry
from ragjudge.metrics.names import JUDGE_COST_USD
from ragjudge.report.markdown import COMMENT_LIMIT, environment, load_template
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.report.warning_kinds import by_kind
from ragjudge.report.workspace import relative_paths
from ragjudge.transport.urls import public_url


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class MetricBlock(_Model):
    """One rule's outcome (`canary.rules`), under its metric's name in `metrics`."""

    value: float | None
    """The compared quantity: a ratio (treatment over control), the treatment's p95 in ms, or its mean
    faithfulness; null when there was no data to compute it."""
    ci: list[float | None] | None
    """`[lo, hi]` at the report's confidence; an unbounded end is null; null in point mode."""
    op: str
    """The rule's operator: `<=` or `<` for the ratios and the ms limits, `>=` or `>` for faithfulness."""
    threshold: float
    """The rule's number: a multiple of control for a ratio, ms for a limit, 0 to 1 for faithfulness."""
    decision: Literal["pass", "fail", "inconclusive"]
    """`fail` when the canary broke the rule (statistical mode: with the confidence asked), `pass` when it held,
    `inconclusive` when the data cannot tell (too little of it, or an interval across the threshold)."""
    reason: str
    """The decision in a sentence, with the figures it rests on."""
    treatment: float | None
    """The treatment's figure: dislike rate, p95 latency or TTFT (ms) or mean faithfulness; null without data."""
    control: float | None
    """The control's figure, as `treatment`."""
    n: dict[str, int]
    """`{"treatment": n, "control": n}`: responses, successful requests, streamed replies or scored answers."""
    advice: str | None = None
    """For an `inconclusive` rule, what would decide it, as something to do (`43 questions < 72 needed for an
    upper bound on the p95 at 95% confidence: add at least 29 questions to canary.sample, ...`); null when
    decided, or when nothing more of the same would."""


class CaseObservation(_Model):
    """One sample question asked of one arm."""

    id: str
    """The case's id in the canary sample (`canary.sample`)."""
    latency_ms: float | None
    """The round trip of the successful call in ms, to 0.1 ms, measured by ragjudge; null when the call failed."""
    faithfulness: float | None
    """The judge's supported claims over claims, 0 to 1; null when not judged, not applicable (a refusal) or
    unscored."""
    error: str | None
    """Why the call failed, as the gate words an endpoint error; null when it succeeded."""
    ttft_ms: float | None = None
    """Time to the first token (ms) of a streamed reply; null for a JSON body or a failed call."""
    judge_error: str | None = None
    """Why the answer has no judgement though it needed one: `budget exhausted: ...` (the canary's judge budget
    ran out first) or `judge failed inside ragjudge: ...`; null otherwise. Either keeps the canary from a promote."""


class ArmBlock(_Model):
    """What was measured on one arm. Without a sample (a report on feedback alone) its counts are 0 and its
    figures null."""

    url: str | None
    """Scheme, host and path only (never credentials or a query); null without a sample."""
    requests: int
    """Sample questions asked of the arm."""
    ok: int
    """Requests that got a usable reply."""
    errors: int
    """Requests that did not."""
    error_examples: list[str]
    """Up to 5 distinct errors, in the order they happened."""
    p50_latency_ms: float | None
    """Nearest-rank median of the successful requests' latencies in ms, to 0.1 ms; null when none succeeded."""
    p95_latency_ms: float | None
    """Nearest-rank 95th percentile, as `p50_latency_ms`."""
    p95_ttft_ms: float | None = None
    """Nearest-rank p95 of the streamed replies' time to the first token (ms); null when none streamed."""
    faithfulness: float | None
    """Mean over the scored answers; null when none was scored."""
    scored: int
    """Answers whose faithfulness the judge scored."""
    unscored: int
    """Answers the judge could not score."""
    dislikes: int | None
    """Thumbs-down count from the feedback source; null without feedback for the arm."""
    responses: int | None
    """Answers that could have been rated (the dislike rate's denominator); null without feedback for the arm."""
    dislike_rate: float | None
    """`dislikes / responses`; null without feedback or without responses."""
    cases: list[CaseObservation] = Field(default_factory=list)
    """Every sample question asked of the arm, in case order; empty without a sample."""


class ArmsBlock(_Model):
    """Both arms, measured alike: their requests interleaved, case by case."""

    treatment: ArmBlock
    """The canary: the new version."""
    control: ArmBlock
    """The stable version it is compared with."""


class JudgeBudgetBlock(_Model):
    """A canary's judge budget: its ceilings and what was spent against them."""

    budget_usd: float | None
    """`judge.budget_usd`: at most this many USD of judge calls; null when unset."""
    max_calls: int | None
    """`judge.max_calls`: at most this many judge calls; null when unset."""
    spent_usd: float
    """What the calls made cost at `judge.prices` (an unpriced model's count as 0 here: see `judge_cost_usd`)."""
    calls: int
    """Judge calls made."""
    exhausted: bool
    """True when a call was refused for passing a ceiling: answers were left unjudged, and no promote."""


class CanaryReport(_Model):
    """The whole canary report as written by `--report`."""

    schema_version: Literal[1] = 1
    """Always 1: names never change within it; fields may be added."""
    kind: Literal["canary"] = "canary"
    """Always `canary`: tells this report from the gate's."""
    verdict: Literal["promote", "rollback", "inconclusive"]
    """`rollback` when any rule failed, `promote` when every rule passed, else `inconclusive` (missing or too
    little data is never a promote)."""
    reasons: list[str]
    """Why, in sentences: every arm that never answered, then the failing rules' reasons (rollback), the
    undecided ones' (inconclusive) or, in statistical mode, every rule's (promote)."""
    metrics: dict[str, MetricBlock]
    """Each rule's outcome by metric (`dislike_rate_ratio`, `p95_latency_ratio`, `p95_latency_ms`,
    `p95_ttft_ratio`, `p95_ttft_ms`, `faithfulness`), in that order; only the configured rules."""
    arms: ArmsBlock
    """What was measured on each arm."""
    decision: Literal["statistical", "point"]
    """How the rules were decided (`canary.decision`): with intervals at `confidence`, or on point estimates."""
    confidence: float
    """Two-sided level of every interval (`canary.confidence`)."""
    feedback_source: str | None = None
    """Where the feedback counts came from (`file feedback.json`, `url https://host/path`, `prometheus
    http://host:9090`); null without feedback."""
    judge_info: JudgeInfoBlock = Field(default_factory=JudgeInfoBlock)
    """The judge that scored faithfulness; empty (`{}`) when no rule needed one."""
    judge_calls: int = 0
    """Calls made to the model judge (cache hits are not calls); 0 without one."""
    judge_cost_usd: float | None = None
    """What those calls cost at `judge.prices`, by the usage they reported; null without a model judge, and null
    (unknown, never 0) when its model has no price: a warning then names the key to set."""
    judge_budget: JudgeBudgetBlock | None = None
    """The ceilings the canary's judge was held to (`judge.budget_usd`, `judge.max_calls`: each canary its own)
    and what it spent; null without a ceiling."""
    warnings: list[str] = Field(default_factory=list)
    """Sentences about the run a person should read (a sample smaller than asked, the same URL on both arms, a
    lexical judge, ...); empty when there is nothing to say."""
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "ragjudge", "version": __version__})
    """{name: `ragjudge`, version}: the ragjudge that wrote the report."""
    generated_at: str = ""
    """When the report was built: ISO 8601 in UTC, to the second; empty only in reports written without it."""


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _metric_block(m: MetricResult, settings: Settings | None) -> MetricBlock:
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
        advice=advice(m, settings) if settings is not None else None,
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
                judge_error=o.judge_bug or (o.unscored if o.unscored and EXHAUSTED in o.unscored else None),
            )
            for o in (run.observations if run else ())
        ],
    )


def build_report(
    decision: Decision,
    runs: Mapping[str, ArmRun] | None,
    feedback: Mapping[str, ArmFeedback | None],
    feedback_source: str | None,
    judge_info: JudgeInfoBlock,
    warnings: Sequence[str],
    extra_reasons: Sequence[str] = (),
    settings: Settings | None = None,
) -> CanaryReport:
    return CanaryReport(
        verdict=decision.verdict,
        reasons=[*extra_reasons, *decision.reasons],
        metrics={m.metric: _metric_block(m, settings) for m in decision.metrics},
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


def with_spend(report: CanaryReport, spend: Budget, cost: float | None) -> CanaryReport:
    """The report with what the canary's judge spent, and its budget when one was set."""
    kept = spend.ceiling.usd is not None or spend.ceiling.calls is not None
    return report.model_copy(
        update={
            "judge_calls": spend.calls,
            JUDGE_COST_USD: cost,
            "judge_budget": JudgeBudgetBlock.model_validate(spend.as_dict()) if kept else None,
        }
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
    """The canary comment from the built-in template (`report/templates/canary.md.j2`): the verdict, the two
    versions compared, the rule(s) that decided it, what to do when undecided, warnings by kind; no path of the
    runner."""
    template = environment().from_string(load_template(None, "canary.md.j2"))
    text = template.render(
        report=report,
        figure=figure,
        interval=interval,
        threshold=threshold,
        report_path=relative_paths(report_path) if report_path else None,
        feedback=relative_paths(report.feedback_source) if report.feedback_source else None,
        warning_kinds=by_kind(report.warnings),
    )
    if len(text) > COMMENT_LIMIT:  # only a pathological number of warnings gets here
        note = "\n\n…comment truncated: see the JSON report.\n"
        text = text[: COMMENT_LIMIT - len(note)] + note
    return text
