"""From one case's reply and judgement to its status, metrics and failed conditions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ragjudge.cases.case import Case
from ragjudge.endpoint.result import EndpointResult
from ragjudge.endpoint.trace import Trace
from ragjudge.gate.checks import mechanical_failures
from ragjudge.gate.judge_runs import JudgeRuns
from ragjudge.gate.retrieval import context_precision, context_recall, unknown_passages
from ragjudge.judge.interface import Judgement
from ragjudge.judge.precision import judged_precision, precision_missing
from ragjudge.judge.reference import answer_correctness, contradiction_reason, contradictions, missing_reason
from ragjudge.metrics import registry
from ragjudge.metrics.names import (
    ANSWER_CORRECTNESS,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    COST_USD,
    FAITHFULNESS,
    LATENCY_MS,
    REFERENCE_CONTRADICTIONS,
    TTFT_MS,
)
from ragjudge.report.case_block import RunBlock
from ragjudge.rules import Missing, Rule

Status = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class RunRecord:
    """One run of a case that was repeated (`repeat.max` > 1): enough to show it and count its cost."""

    status: Status
    failed_conditions: tuple[str, ...]
    latency_ms: float | None
    endpoint_cost_usd: float | None
    judge_calls: int = 0
    judge_tokens: int = 0
    judge_cost_usd: float = 0.0
    judge_cache_hits: int = 0

    def as_saved(self) -> RunBlock:
        """The run as a report's case block keeps it (`runs`); `of_saved` reads it back."""
        return RunBlock(
            status=self.status,
            failed_conditions=list(self.failed_conditions),
            latency_ms=round(self.latency_ms, 1) if self.latency_ms is not None else None,
            cost_usd=self.endpoint_cost_usd,
            judge_calls=self.judge_calls,
            judge_tokens=self.judge_tokens,
            judge_cost_usd=self.judge_cost_usd,
            judge_cache_hits=self.judge_cache_hits,
        )

    @classmethod
    def of_saved(cls, run: RunBlock) -> RunRecord:
        """A run read back from a report (`as_saved`): its latency to 0.1 ms, as the report keeps it."""
        return cls(
            status=run.status,
            failed_conditions=tuple(run.failed_conditions),
            latency_ms=run.latency_ms,
            endpoint_cost_usd=run.cost_usd,
            judge_calls=run.judge_calls,
            judge_tokens=run.judge_tokens,
            judge_cost_usd=run.judge_cost_usd,
            judge_cache_hits=run.judge_cache_hits,
        )


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one case."""

    case: Case
    status: Status
    failed_conditions: tuple[str, ...]
    """Every condition the case failed on; for `error`, the reason it could not be evaluated."""
    metrics: Mapping[str, float | None]
    endpoint: EndpointResult
    judgement: Judgement | None
    skipped_rules: tuple[str, ...] = ()
    """Rules not applicable to this case, with why."""
    runs: tuple[RunRecord, ...] = ()
    """Every run, in order, when the case was run more than once; empty otherwise."""
    flaky: bool = False
    """Passed, but only after repeats."""
    turns: tuple[CaseResult, ...] = ()
    """A conversation's turns that were asked, in order (a turn with no reply ends the conversation: the
    turns after it were not evaluated); empty for one question. `endpoint` is then the last asked turn's."""
    judge_runs: JudgeRuns | None = None
    """How the judgements of its reply went, when it was judged more than once (`judge.rejudge`)."""
    advisory: tuple[str, ...] = ()
    """Conditions only an uncalibrated judge decided, reported and not blocking (`judge.uncalibrated: report`)."""

    def record(self) -> RunRecord:
        """This result as one run among several (a conversation's run: its turns' latency and costs summed)."""
        if self.turns:
            parts = [t.record() for t in self.turns]
            latencies = [r.latency_ms for r in parts if r.latency_ms is not None]
            costs = [r.endpoint_cost_usd for r in parts if r.endpoint_cost_usd is not None]
            return RunRecord(
                status=self.status,
                failed_conditions=self.failed_conditions,
                latency_ms=sum(latencies) if latencies else None,
                endpoint_cost_usd=sum(costs) if costs else None,
                judge_calls=sum(r.judge_calls for r in parts),
                judge_tokens=sum(r.judge_tokens for r in parts),
                judge_cost_usd=sum(r.judge_cost_usd for r in parts),
                judge_cache_hits=sum(r.judge_cache_hits for r in parts),
            )
        trace, judgement = self.endpoint.trace, self.judgement
        return RunRecord(
            status=self.status,
            failed_conditions=self.failed_conditions,
            latency_ms=trace.latency_ms if trace else None,
            endpoint_cost_usd=trace.cost_usd if trace else None,
            judge_calls=judgement.calls if judgement else 0,
            judge_tokens=judgement.tokens if judgement else 0,
            judge_cost_usd=judgement.cost_usd if judgement else 0.0,
            judge_cache_hits=judgement.cache_hits if judgement else 0,
        )


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def metric_value(metric: str, case: Case, result: EndpointResult, judgement: Judgement | None) -> float | Missing:
    trace = result.trace
    assert trace is not None
    unknown = unknown_passages(metric, case, trace)
    if unknown is not None:
        # Never a zero computed from passages that were not shown, and never a pass: the case is `error`. Unless
        # `traces:` was to show them and no span did: a missing trace is unmeasured, never a fail nor the run's
        # error (issue 41); the rule is not applied and the run's warning counts such cases.
        return Missing(unknown, unscored=trace.spans is None)
    if metric == CONTEXT_RECALL:
        return context_recall(case, trace)
    if metric == CONTEXT_PRECISION:
        value = context_precision(case, trace)
        if value is None:
            value = judged_precision(judgement)  # LLM context precision, for cases without golden ids
        if value is None:
            missing = precision_missing(judgement)
            return Missing(*missing) if missing else Missing("no golden_context_ids for this case")
        return value
    if metric == LATENCY_MS:
        return trace.latency_ms
    if metric == TTFT_MS:
        if trace.ttft_ms is None:
            return Missing("ttft_ms not applicable: the reply was not streamed")
        return trace.ttft_ms
    if metric == COST_USD:
        if trace.cost_usd is None:
            return Missing("the endpoint reported no cost_usd/costUsd", unscored=True)
        return trace.cost_usd
    if judgement is None:
        return Missing(f"{metric}: no judge ran", unscored=True)
    if metric == FAITHFULNESS:
        if judgement.faithfulness is not None:
            return judgement.faithfulness
        reason = judgement.unscored_reason(FAITHFULNESS)
        if reason is not None:
            return Missing(f"faithfulness unscored: {reason}", unscored=True)
        return Missing("faithfulness not applicable: the answer makes no claims")
    if metric in (ANSWER_CORRECTNESS, REFERENCE_CONTRADICTIONS):
        return _reference_value(metric, case, judgement)
    if metric.startswith("criteria."):
        name = metric.removeprefix("criteria.")
        if name in judgement.criteria:
            return judgement.criteria[name]
        reason = judgement.unscored_reason(metric) or judgement.unscored_reason("rubric")
        if reason is not None:
            return Missing(f"{metric} unscored: {reason}", unscored=True)
        return Missing(f"{metric} does not apply to this case")
    dim = metric.removeprefix("judge.")
    if dim in judgement.scores:
        return judgement.scores[dim]
    reason = judgement.unscored_reason(metric) or judgement.unscored_reason("rubric")
    if reason is not None:
        return Missing(f"{metric} unscored: {reason}", unscored=True)
    if dim in judgement.unassessable:
        return Missing(f"{metric} not assessable by {judgement.judge} for this case")
    return Missing(f"{metric} not asked for this kind of case")


def _reference_value(metric: str, case: Case, judgement: Judgement) -> float | Missing:
    points = judgement.reference_points
    if points is not None:
        value = answer_correctness(points) if metric == ANSWER_CORRECTNESS else contradictions(points)
        return float(value) if value is not None else Missing(f"{metric}: the reference has no points")
    if not case.has_reference:
        return Missing(f"{metric} not applicable: the case has no reference answer (expected)")
    reason = judgement.unscored_reason("reference")
    if reason is not None:
        return Missing(f"{metric} unscored: {reason}", unscored=True)
    return Missing(f"{metric} not applicable: the reference was not judged for this reply")


def reference_conditions(case: Case, judgement: Judgement | None) -> tuple[list[str], list[str]]:
    """The default reference rule: (failed conditions, errors). A contradicted point fails the case; a
    reference that was asked but could not be judged leaves it `error`, never a pass."""
    if judgement is None or not case.has_reference:
        return [], []
    points = judgement.reference_points
    if points is None:
        reason = judgement.unscored_reason("reference")
        return ([], [f"reference unscored: {reason}"]) if reason is not None else ([], [])
    claims = [(c.claim, c.supported, c.evidence_id) for c in judgement.claims]
    return [contradiction_reason(p, claims) for p in points if p.verdict == "contradicted"], []


BASE_METRICS = (CONTEXT_RECALL, CONTEXT_PRECISION, LATENCY_MS, COST_USD, FAITHFULNESS)
"""Every case's metrics carry these keys (null when there is no value), whatever happened to it."""


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(i or "(no id)" for i in ids[:10])
    return (shown + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")) or "nothing"


def _retrieval_detail(metric: str, case: Case, trace: Trace) -> str:
    """What recall missed, or which retrieved ids precision counted against."""
    retrieved = list(dict.fromkeys(trace.retrieved_ids))
    if metric == CONTEXT_RECALL:
        missing = [g for g in case.golden_context_ids if g not in retrieved]
        return f" (missing {_ids(missing)}; retrieved {_ids(retrieved)})"
    if metric == CONTEXT_PRECISION and case.golden_context_ids:
        extra = [r for r in retrieved if r not in case.golden_context_ids]
        missing = [g for g in case.golden_context_ids if g not in retrieved]
        parts = [f"not golden: {_ids(extra)}"] if extra else []
        parts += [f"missing {_ids(missing)}"] if missing else []
        return f" ({'; '.join(parts)})" if parts else ""
    return ""


def _failure_reason(rule: Rule, value: float, judgement: Judgement | None, case: Case, trace: Trace) -> str:
    text = rule.failure(value) + _retrieval_detail(rule.metric, case, trace)
    if judgement is None:
        return text
    if rule.metric == FAITHFULNESS:
        unsupported = [c for c in judgement.claims if not c.supported]
        if unsupported:
            quoted = ", ".join(f'"{_excerpt(c.claim)}"' for c in unsupported[:2])
            more = f" and {len(unsupported) - 2} more" if len(unsupported) > 2 else ""
            text += f" ({len(unsupported)} of {len(judgement.claims)} claims unsupported: {quoted}{more})"
    elif rule.metric.startswith("judge."):
        why = judgement.reasoning.get(rule.metric.removeprefix("judge."))
        if why:
            text += f": {_excerpt(why, 200)}"
    elif rule.metric.startswith("criteria."):
        why = judgement.criteria_reasoning.get(rule.metric.removeprefix("criteria."))
        if why:
            text += f": {_excerpt(why, 200)}"
    elif rule.metric == ANSWER_CORRECTNESS and judgement.reference_points:
        missed = [p for p in judgement.reference_points if p.verdict in ("missing", "partial")]
        if missed:
            shown = "; ".join(
                missing_reason(p) if p.verdict == "missing" else f'partly: "{p.point}"' for p in missed[:3]
            )
            text += f" ({shown}{f' and {len(missed) - 3} more' if len(missed) > 3 else ''})"
    return text


def score_case(case: Case, result: EndpointResult, judgement: Judgement | None, rules: Sequence[Rule]) -> CaseResult:
    """Apply the deterministic checks and the case rules."""
    if result.trace is None:
        empty: dict[str, float | None] = dict.fromkeys(BASE_METRICS)
        empty.update((r.metric, None) for r in rules)
        return CaseResult(case, "error", (result.error or "endpoint error: no reply",), empty, result, None)
    if judgement is not None and judgement.declined and not result.trace.refused:
        # The judge read the answer as a decline (`endpoint.refusal.judge`): it is scored as one.
        result = replace(result, trace=replace(result.trace, refused=True, refused_by="judge"))
    trace = result.trace
    assert trace is not None
    conditions = mechanical_failures(case, trace)
    # A judge that failed inside ragjudge leaves the case unjudged whatever the rules ask: its first error.
    errors: list[str] = [judgement.internal_error] if judgement is not None and judgement.internal_error else []
    skipped: list[str] = []
    metrics: dict[str, float | None] = {
        CONTEXT_RECALL: context_recall(case, trace),
        CONTEXT_PRECISION: context_precision(case, trace) if case.golden_context_ids else judged_precision(judgement),
        LATENCY_MS: round(trace.latency_ms, 1),
        COST_USD: trace.cost_usd,
        FAITHFULNESS: judgement.faithfulness if judgement else None,
    }
    for metric in (CONTEXT_RECALL, CONTEXT_PRECISION, FAITHFULNESS):
        if unknown_passages(metric, case, trace) is not None:
            metrics[metric] = None
    if trace.ttft_ms is not None:
        metrics[TTFT_MS] = round(trace.ttft_ms, 1)
    if judgement is not None:
        for dim, score in judgement.scores.items():
            metrics[f"judge.{dim}"] = score
        points = judgement.reference_points
        if points is not None:
            metrics[ANSWER_CORRECTNESS] = answer_correctness(points)
            metrics[REFERENCE_CONTRADICTIONS] = contradictions(points)
        for name, score in judgement.criteria.items():
            metrics[f"criteria.{name}"] = score
    contradicted, unjudged = reference_conditions(case, judgement)
    conditions += contradicted
    errors += unjudged
    for rule in rules:
        value = metric_value(rule.metric, case, result, judgement)
        if isinstance(value, Missing):
            (errors if value.unscored else skipped).append(value.reason)
            continue
        if not rule.holds(value):
            conditions.append(_failure_reason(rule, value, judgement, case, trace))
    if errors:
        return CaseResult(
            case, "error", tuple(one_cause(errors) + conditions), metrics, result, judgement, tuple(skipped)
        )
    status: Status = "fail" if conditions else "pass"
    return CaseResult(case, status, tuple(conditions), metrics, result, judgement, tuple(skipped))


_UNSCORED = re.compile(r"^(?P<metric>\S+) unscored: (?P<cause>.+)$", re.DOTALL)


def one_cause(errors: Sequence[str]) -> list[str]:
    """Metrics left unscored by one cause (a combined reply that was invalid leaves faithfulness, the rubric and
    the reference unscored alike) as one reason naming them all, where the first of them stood."""
    by_cause: dict[str, list[str]] = {}
    for error in errors:
        found = _UNSCORED.match(error)
        if found is not None:
            by_cause.setdefault(found["cause"], []).append(found["metric"])
    out: list[str] = []
    said: set[str] = set()
    for error in errors:
        found = _UNSCORED.match(error)
        if found is None:
            out.append(error)
        elif found["cause"] not in said:
            said.add(found["cause"])
            metrics = by_cause[found["cause"]]
            names = metrics[0] if len(metrics) == 1 else ", ".join(metrics[:-1]) + f" and {metrics[-1]}"
            out.append(f"{names} unscored: {found['cause']}")
    return out


def rules_need_judge(rules: Sequence[Rule]) -> bool:
    return any(registry.needs_judge(r.metric) for r in rules)


def not_evaluated_reason(errored_turn: int) -> str:
    """Why the turns after one with no reply were not asked."""
    return f"not evaluated: turn {errored_turn} got no reply, and this turn follows it"


def score_conversation(case: Case, turns: Sequence[CaseResult]) -> CaseResult:
    """A conversation from its asked turns: `error` if any turn errors, else `fail` if any fails; its conditions
    are the turns', each prefixed `turn N: `; its metrics the mean over the turns that have one."""
    assert turns, "a conversation is scored from at least its first turn"
    statuses = {t.status for t in turns}
    status: Status = "error" if "error" in statuses else "fail" if "fail" in statuses else "pass"
    # The errored turns' reasons come first, as a single case's reasons it could not be evaluated do.
    ordered = sorted(turns, key=lambda t: t.status != "error")
    conditions = tuple(f"turn {t.case.turn}: {c}" for t in ordered for c in t.failed_conditions)
    if len(turns) < len(case.turns):
        conditions += (f"turns {len(turns) + 1} to {len(case.turns)}: {not_evaluated_reason(len(turns))}",)
    keys = dict.fromkeys(k for t in turns for k in t.metrics)
    metrics: dict[str, float | None] = {}
    for key in keys:
        values = [v for t in turns if (v := t.metrics.get(key)) is not None]
        if not values:
            metrics[key] = None
        else:  # as the metric's spec says: a count of contradicted points adds up over the turns, a score averages
            spec = registry.lookup(key, "case")
            metrics[key] = sum(values) if spec is not None and spec.over_turns == "sum" else sum(values) / len(values)
    skipped = tuple(dict.fromkeys(s for t in turns for s in t.skipped_rules))
    return CaseResult(
        case, status, conditions, metrics, turns[-1].endpoint, None, skipped_rules=skipped, turns=tuple(turns)
    )
