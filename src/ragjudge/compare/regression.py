"""The regression rules (`gate.regression`) and how each is decided.

`newly_failing` counts the `regression` cases. A delta or ratio rule fails only when its
threshold is broken, the change is for the worse, and it is significant at
`gate.significance` (the p-value for deltas, the interval excluding 1 for ratios): noise alone
never fails it. A figure that is not comparable (e.g. the judge changed) is shown, not gated.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.compare.deltas import p_words
from ragjudge.config.model import Config
from ragjudge.metrics import registry
from ragjudge.metrics.names import NEWLY_FAILING, PAIRWISE_LOSS_RATE, PAIRWISE_WORSE
from ragjudge.report.comparison_block import DeltaBlock, PairwiseBlock
from ragjudge.report.suite_block import RuleBlock
from ragjudge.rules import Rule, format_value, parse_rules

DEFAULT_RULES = {NEWLY_FAILING: "<= 0"}
"""With a baseline and no `gate.regression`: block any case that passed on the baseline and fails now."""


def regression_rules(config: Config) -> list[Rule]:
    """Parsed `gate.regression` (or the default); unknown metrics are exit 2 naming them."""
    given = config.gate.regression
    return parse_rules(DEFAULT_RULES if given is None else given, "regression", config.key("gate.regression"))


def figure_of(rule_metric: str) -> str | None:
    """The figure a regression rule reads (`pass_rate_delta` -> `pass_rate`, `judge.grounding_delta` ->
    `judge.grounding`); None for newly_failing."""
    return registry.compared(rule_metric)


def _block(rule: Rule, value: float | None, passed: bool | None, reason: str) -> RuleBlock:
    return RuleBlock(
        scope="regression",
        metric=rule.metric,
        op=rule.op,
        threshold=rule.threshold,
        value=value,
        passed=passed,
        reason=reason,
    )


def _listed(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _pairwise(rule: Rule, pairs: PairwiseBlock | None, worse: Sequence[str]) -> RuleBlock:
    """`pairwise_loss_rate` / `pairwise_worse`: the changed answers judged worse than main's in both orders."""
    if pairs is None or not pairs.compared:
        why = "no changed answer was judged pairwise (it needs judge.provider: openai and judge.pairwise)"
        return _block(rule, None, None, f"{rule.metric} not gated: {why}")
    value = float(pairs.worse) if rule.metric == PAIRWISE_WORSE else float(pairs.loss_rate or 0.0)
    of = f" ({pairs.worse} of {pairs.compared} changed answers worse"
    of += f": {_listed(worse)})" if worse else ")"
    if rule.holds(value):
        return _block(
            rule, value, True, f"{rule.metric} {format_value(rule.metric, value)} {rule.op} {rule.threshold:g}{of}"
        )
    return _block(rule, value, False, f"{rule.failure(value)}{of}")


def decide(
    rule: Rule,
    regressions: Sequence[str],
    deltas: Sequence[DeltaBlock],
    alpha: float,
    pairs: PairwiseBlock | None = None,
    worse: Sequence[str] = (),
) -> RuleBlock:
    """A regression rule's outcome; `pairs` and `worse` (the ids judged worse) for the pairwise rules."""
    if rule.metric in (PAIRWISE_LOSS_RATE, PAIRWISE_WORSE):
        return _pairwise(rule, pairs, worse)
    if rule.metric == NEWLY_FAILING:
        n = float(len(regressions))
        if rule.holds(n):
            return _block(rule, n, True, f"{NEWLY_FAILING} {len(regressions)} {rule.op} {rule.threshold:g}")
        cases = f": {_listed(regressions)}" if regressions else ""
        return _block(rule, n, False, f"{rule.failure(n)}{cases}")
    figure = figure_of(rule.metric)
    delta = next((d for d in deltas if d.metric == figure), None)
    if delta is None or delta.delta is None or not delta.comparable:
        why = delta.reason if delta is not None else f"{figure} was not measured in both reports"
        return _block(rule, None, None, f"{rule.metric} not gated: {why}")
    value = delta.delta
    if rule.holds(value):
        shown = format_value(rule.metric, value)
        return _block(rule, value, True, f"{rule.metric} {shown} {rule.op} {rule.threshold:g}")
    upper = rule.op in ("<=", "<")
    null = 1.0 if delta.kind == "ratio" else 0.0
    went_worse = value > null if upper else value < null
    if delta.kind == "ratio":
        significant = (delta.ci_low or 0.0) > null if upper else (delta.ci_high or 0.0) < null
        evidence = (
            f"{alpha_words(alpha)} interval {delta.ci_low:.2f} to {delta.ci_high:.2f}"
            f"{' excludes' if significant else ' includes'} 1"
        )
    else:
        p = delta.p_value if delta.p_value is not None else 1.0
        significant = p < alpha
        evidence = f"{p_words(p)}, {'below' if significant else 'not below'} {alpha:g}"
    if went_worse and significant:
        return _block(rule, value, False, f"{rule.failure(value)}, significant ({evidence})")
    if not went_worse:
        # A rule that demands an improvement and did not get one: no worse than the baseline is never a block.
        return _block(rule, value, True, f"{rule.failure(value)} but no worse than the baseline: not blocking")
    return _block(rule, value, True, f"{rule.failure(value)} but not significant ({evidence}): not blocking")


def alpha_words(alpha: float) -> str:
    return f"{(1 - alpha) * 100:g}%"


def verdict_with(absolute_rules: Sequence[RuleBlock], regression: Sequence[RuleBlock], verdict: str) -> str:
    """The verdict once the regression rules are applied; `error` stays `error`."""
    if verdict == "error":
        return verdict
    failed = any(r.passed is False for r in absolute_rules if r.scope == "suite")
    failed = failed or any(r.passed is False for r in regression)
    return "fail" if failed else "pass"
