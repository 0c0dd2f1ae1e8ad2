"""Each metric now against the baseline, over the cases both reports have, with its uncertainty.

* Pass rate: the difference of pass rates over the paired cases; the exact McNemar test on the
  discordant pairs gives the p-value, a paired bootstrap the interval.
* Faithfulness and each judge dimension: the mean of the per-case differences, with a paired
  bootstrap interval and the Wilcoxon signed-rank p-value.
* p95 latency (first runs), endpoint cost and judge cost: the ratio now / baseline with a paired
  bootstrap interval; significant when the interval excludes 1.

Judge-based figures are not comparable when the judge changed: shown with the reason, never gated.

Every figure's bootstrap uses the same seed, so figures over the same cases draw the same resamples:
`all_deltas` runs them in one pass (`stats.bootstrap_intervals`), which draws each resample once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from ragjudge import stats
from ragjudge.metrics import registry
from ragjudge.metrics.names import (
    ANSWER_CORRECTNESS,
    COST_USD,
    FAITHFULNESS,
    JUDGE_COST_USD,
    P95_LATENCY_MS,
    P95_TTFT_MS,
    PASS_RATE,
    TOOL_CONDITION_ACCURACY,
)
from ragjudge.metrics.spec import multiple
from ragjudge.report.case_block import CaseBlock, TurnBlock
from ragjudge.report.comparison_block import DeltaBlock
from ragjudge.report.figures import fmt

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20_240_601
"""Fixed, so that the same two reports always give the same intervals."""


Pair = tuple[CaseBlock, CaseBlock]
_B = TypeVar("_B", CaseBlock, CaseBlock | TurnBlock)
"""(now, baseline) for one case id in both reports."""


@dataclass(frozen=True)
class _Pending:
    """A figure waiting for its bootstrap interval: what to resample, and how the interval completes it."""

    resampled: stats.Resampled
    complete: Callable[[stats.Interval], DeltaBlock]


_Figure = DeltaBlock | _Pending


@dataclass(frozen=True)
class Settings:
    alpha: float
    """gate.significance."""
    judge_comparable: bool
    judge_reason: str | None

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def interval_words(self) -> str:
        return f"{self.confidence * 100:g}% interval"


def p_words(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p {p:.3f}"


def _signed(value: float, digits: int) -> str:
    return "unbounded" if math.isinf(value) else f"{value:+.{digits}f}"


def _values(pairs: Sequence[tuple[_B, _B]], get: Callable[[_B], float | None]) -> tuple[list[float], list[float]]:
    now: list[float] = []
    base: list[float] = []
    for a, b in pairs:
        x, y = get(a), get(b)
        if x is not None and y is not None:
            now.append(float(x))
            base.append(float(y))
    return now, base


def _missing(
    metric: str, kind: Literal["delta", "ratio"], why: str, now: float | None = None, base: float | None = None
) -> DeltaBlock:
    return DeltaBlock(
        metric=metric,
        base=base,
        now=now,
        delta=None,
        ci_low=None,
        ci_high=None,
        p_value=None,
        significant=None,
        test="",
        comparable=False,
        reason=why,
        kind=kind,
    )


def pass_rate(pairs: Sequence[Pair], s: Settings) -> _Figure:
    if not pairs:
        return _missing(PASS_RATE, "delta", "no case is in both reports")
    return _paired_rate(PASS_RATE, [(a.status == "pass", b.status == "pass") for a, b in pairs], s)


def tool_accuracy(pairs: Sequence[Pair], s: Settings) -> _Figure:
    """Tool-condition accuracy over the cases whose `tools:` conditions were known (held or failed) in both runs."""
    known = [(a.tools_held == "held", b.tools_held == "held") for a, b in pairs if _known(a) and _known(b)]
    if not known:
        return _missing(TOOL_CONDITION_ACCURACY, "delta", "no case has its tool conditions known in both reports")
    return _paired_rate(TOOL_CONDITION_ACCURACY, known, s)


def _known(case: CaseBlock) -> bool:
    return case.tools_held in ("held", "failed")


def _paired_rate(metric: str, held: Sequence[tuple[bool, bool]], s: Settings) -> _Figure:
    """A share of cases holding now against the baseline's, paired: the exact McNemar test on the discordant."""
    now = [1.0 if x else 0.0 for x, _ in held]
    base = [1.0 if y else 0.0 for _, y in held]
    broke = sum(1 for x, y in zip(now, base, strict=True) if y > x)
    fixed = sum(1 for x, y in zip(now, base, strict=True) if x > y)
    p = stats.mcnemar_exact(broke, fixed)
    diffs = [x - y for x, y in zip(now, base, strict=True)]
    test = f"exact McNemar test on {broke + fixed} discordant of {len(held)} paired cases; paired bootstrap interval"
    return _mean_figure(metric, now, base, diffs, p, test, s)


def _moved(now: Sequence[float], base: Sequence[float], higher_is_better: bool) -> tuple[int, int]:
    """(cases better, cases worse) over the paired values."""
    up = sum(1 for x, y in zip(now, base, strict=True) if x > y)
    down = sum(1 for x, y in zip(now, base, strict=True) if x < y)
    return (up, down) if higher_is_better else (down, up)


def mean_delta(metric: str, pairs: Sequence[Pair], s: Settings) -> _Figure:
    now, base = _values(pairs, lambda c: c.metrics.get(metric))
    if not s.judge_comparable:
        shown_now = math.fsum(now) / len(now) if now else None
        shown_base = math.fsum(base) / len(base) if base else None
        return _missing(metric, "delta", f"not comparable: {s.judge_reason}", shown_now, shown_base)
    if not now:
        return _missing(metric, "delta", f"not comparable: no case has {metric} in both reports")
    diffs = [x - y for x, y in zip(now, base, strict=True)]
    p = stats.wilcoxon_signed_rank(diffs)
    test = f"Wilcoxon signed-rank test on {len(diffs)} paired cases; paired bootstrap interval"
    return _mean_figure(metric, now, base, diffs, p, test, s)


def _mean_figure(
    metric: str, now: list[float], base: list[float], diffs: list[float], p: float, test: str, s: Settings
) -> _Pending:
    """The mean of the paired differences, its interval to come."""
    delta = math.fsum(diffs) / len(diffs)
    shown_base, shown_now = math.fsum(base) / len(base), math.fsum(now) / len(now)
    moved = _moved(now, base, higher_is_better=True)
    return _Pending(
        stats.mean_of(diffs),
        lambda ci: _block(metric, shown_base, shown_now, delta, ci, p, test, len(diffs), s).model_copy(
            update={"better": moved[0], "worse": moved[1]}
        ),
    )


def _first_cost(case: CaseBlock) -> float | None:
    if case.runs:
        return case.runs[0].cost_usd
    return case.trace.cost_usd


def _judge_cost(case: CaseBlock) -> float | None:
    """Everything the judge's calls for the case cost (its judgements and its pairwise rounds); None unknown."""
    pair = case.pairwise.cost_usd if case.pairwise is not None else 0.0
    if case.judge.cost_usd is None or pair is None:
        return None
    return case.judge.cost_usd + pair


def _ttft(case: CaseBlock | TurnBlock) -> float | None:
    return case.trace.ttft_ms


def _latency(case: CaseBlock | TurnBlock) -> float | None:
    return case.first_latency_ms() if isinstance(case, CaseBlock) else case.trace.latency_ms


def _replies(pairs: Sequence[Pair]) -> list[tuple[CaseBlock | TurnBlock, CaseBlock | TurnBlock]]:
    """The pairs as the timing figures count them: a conversation in both reports is its turns, turn by turn
    (a conversation's latency percentiles are over turns, as the suite's are)."""
    out: list[tuple[CaseBlock | TurnBlock, CaseBlock | TurnBlock]] = []
    for a, b in pairs:
        if a.turns and b.turns:
            out.extend(zip(a.turns, b.turns, strict=False))
        else:
            out.append((a, b))
    return out


def ratio(metric: str, pairs: Sequence[Pair], s: Settings) -> _Figure:
    unit = "cases"
    if metric in (P95_LATENCY_MS, P95_TTFT_MS):
        replies = _replies(pairs)
        now, base = _values(replies, _latency if metric == P95_LATENCY_MS else _ttft)
        statistic = stats.p95_ratio
        what = "p95 latency" if metric == P95_LATENCY_MS else "p95 time to first token"
        if len(replies) != len(pairs):
            unit = "replies (conversations by turn)"
    elif metric == JUDGE_COST_USD:
        now, base = _values(pairs, _judge_cost)
        statistic, what = stats.total_ratio, "judge cost"
    else:
        now, base = _values(pairs, _first_cost)
        statistic, what = stats.total_ratio, "endpoint cost"
    if not now:
        return _missing(metric, "ratio", f"not comparable: no case has its {what} in both reports")
    if min(now) < 0 or min(base) < 0:
        return _missing(metric, "ratio", f"not comparable: a negative {what}")
    point = statistic(now, base)
    if metric in (P95_LATENCY_MS, P95_TTFT_MS):
        shown = stats.percentile_nearest_rank(base, 95), stats.percentile_nearest_rank(now, 95)
    else:
        shown = math.fsum(base), math.fsum(now)
    moved = _moved(now, base, higher_is_better=False)  # latency and cost: lower is better
    return _Pending(
        stats.paired(now, base, statistic),
        lambda ci: _ratio_block(metric, what, point, ci, shown, len(now), s, unit).model_copy(
            update={"better": moved[0], "worse": moved[1]}
        ),
    )


def _ratio_block(
    metric: str,
    what: str,
    point: float,
    ci: stats.Interval,
    shown: tuple[float, float],
    cases: int,
    s: Settings,
    unit: str = "cases",
) -> DeltaBlock:
    significant = ci.lo > 1.0 or ci.hi < 1.0
    words = "significant" if significant else "not significant"
    reason = (
        f"{what} {fmt(metric, shown[0])} -> {fmt(metric, shown[1])}: ratio {multiple(point)} "
        f"({s.interval_words()} {multiple(ci.lo)} to {multiple(ci.hi)}; {words})"
    )
    return DeltaBlock(
        metric=metric,
        base=shown[0],
        now=shown[1],
        delta=point,
        ci_low=ci.lo,
        ci_high=ci.hi,
        p_value=None,
        significant=significant,
        test=f"paired bootstrap of the ratio over {cases} {unit} ({BOOTSTRAP_RESAMPLES} resamples)",
        comparable=True,
        reason=reason,
        kind="ratio",
        cases=cases,
    )


def _block(
    metric: str,
    base: float,
    now: float,
    delta: float,
    ci: stats.Interval,
    p: float,
    test: str,
    cases: int,
    s: Settings,
) -> DeltaBlock:
    significant = p < s.alpha
    digits = 2 if registry.is_scored(metric) else 3
    words = f"significant ({p_words(p)})" if significant else f"not significant ({p_words(p)})"
    reason = (
        f"{metric} {fmt(metric, base)} -> {fmt(metric, now)}: {_signed(delta, digits)} "
        f"({s.interval_words()} {_signed(ci.lo, digits)} to {_signed(ci.hi, digits)}; {words})"
    )
    return DeltaBlock(
        metric=metric,
        base=base,
        now=now,
        delta=delta,
        ci_low=ci.lo,
        ci_high=ci.hi,
        p_value=p,
        significant=significant,
        test=test,
        comparable=True,
        reason=reason,
        kind="delta",
        cases=cases,
    )


def scored_metrics(pairs: Sequence[Pair]) -> set[str]:
    """Per-case metrics with a value in either report."""
    return {m for pair in pairs for case in pair for m, v in case.metrics.items() if v is not None}


def all_deltas(pairs: Sequence[Pair], s: Settings, wanted: Sequence[str] = ()) -> list[DeltaBlock]:
    """Pass rate, faithfulness, answer correctness, judge dimensions and criteria, p95 latency and cost: the ones
    with data or a rule."""
    out: list[_Figure] = [pass_rate(pairs, s)]
    if any(c.tools_held is not None for pair in pairs for c in pair) or TOOL_CONDITION_ACCURACY in wanted:
        out.append(tool_accuracy(pairs, s))
    scored = scored_metrics(pairs)
    dims = sorted(m for m in scored | set(wanted) if registry.is_scored(m))
    for metric in (FAITHFULNESS, ANSWER_CORRECTNESS, *dims):
        if metric in scored or metric in wanted:
            out.append(mean_delta(metric, pairs, s))
    out.append(ratio(P95_LATENCY_MS, pairs, s))
    has_cost = any(_first_cost(a) is not None or _first_cost(b) is not None for a, b in pairs)
    if has_cost or COST_USD in wanted:
        out.append(ratio(COST_USD, pairs, s))
    # Shown where the judge's bill is known on either side (an unpriced judge's would say "not comparable" on
    # every PR), or asked for by a rule.
    if any(_judge_cost(a) or _judge_cost(b) for a, b in pairs) or JUDGE_COST_USD in wanted:
        out.append(ratio(JUDGE_COST_USD, pairs, s))
    if any(a.trace.ttft_ms is not None or b.trace.ttft_ms is not None for a, b in pairs) or P95_TTFT_MS in wanted:
        out.append(ratio(P95_TTFT_MS, pairs, s))
    resampled = [f.resampled for f in out if isinstance(f, _Pending)]
    intervals = iter(stats.bootstrap_intervals(resampled, s.confidence, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED))
    return [f.complete(next(intervals)) if isinstance(f, _Pending) else f for f in out]
