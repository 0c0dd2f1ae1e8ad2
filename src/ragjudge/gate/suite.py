"""The suite rules and the verdict: `run` and `merge` both come here (`evaluate_cases`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragjudge.gate.error_budget import DEFAULT_MAX_ERROR_RATE, judge_bugs, over_budget
from ragjudge.gate.scoring import CaseResult
from ragjudge.gate.suite_case import SuiteCase
from ragjudge.gate.suite_figures import case_metrics, shown
from ragjudge.metrics.registry import lookup
from ragjudge.metrics.spec import plain
from ragjudge.rules import Missing, Rule

Verdict = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class RuleOutcome:
    """One rule's result for the report: `passed` is None when it did not apply."""

    rule: Rule
    value: float | None
    passed: bool | None
    reason: str


@dataclass(frozen=True)
class SuiteResult:
    metrics: dict[str, float | int | None]
    rules: tuple[RuleOutcome, ...]
    verdict: Verdict
    error_reason: str | None = None
    """Why the verdict is `error` (the judge failed inside ragjudge, `gate.max_error_rate` exceeded, every case
    errored); None otherwise."""


def _case_rule_outcome(rule: Rule, results: Sequence[SuiteCase]) -> RuleOutcome:
    # A broken rule reads `metric VALUE OP threshold` (Rule.failure); `metric unscored: ...` is an error, not a failure.
    failed = re.compile(rf"^(?:turn \d+: )?{re.escape(rule.metric)} [-\d]")
    failing = [r.id for r in results if any(failed.match(c) for c in r.failed_conditions)]
    if failing:
        shown = ", ".join(failing[:5]) + (f" and {len(failing) - 5} more" if len(failing) > 5 else "")
        reason = f"{len(failing)} case(s) failed {rule.metric} {rule.op} {plain(rule.threshold)}: {shown}"
    else:
        reason = f"every evaluated case met {rule.metric} {rule.op} {plain(rule.threshold)}"
    return RuleOutcome(rule, float(len(failing)), not failing, reason)


def _suite_rule_outcome(rule: Rule, metrics: dict[str, float | int | None]) -> RuleOutcome:
    value = metrics.get(rule.metric)
    if value is None:
        spec = lookup(rule.metric, "suite")
        missing = Missing(
            (spec.missing if spec else "") or f"{rule.metric} has no value: no case it applies to got a reply"
        )
        # A rule that cannot be checked never passes silently: it fails, with the reason.
        return RuleOutcome(rule, None, False, missing.reason)
    ok = rule.holds(float(value))
    reason = f"{rule.metric} {plain(value, 4)} {rule.op} {plain(rule.threshold)}" if ok else rule.failure(float(value))
    display = shown({rule.metric: value})[rule.metric]
    return RuleOutcome(rule, float(display if display is not None else value), ok, reason)


def evaluate_suite(
    results: Sequence[CaseResult],
    case_rules: Sequence[Rule],
    suite_rules: Sequence[Rule],
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    pending: int = 0,
) -> SuiteResult:
    return evaluate_cases([SuiteCase.of_result(r) for r in results], case_rules, suite_rules, max_error_rate, pending)


def evaluate_cases(
    cases: Sequence[SuiteCase],
    case_rules: Sequence[Rule],
    suite_rules: Sequence[Rule],
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    pending: int = 0,
) -> SuiteResult:
    """The suite metrics, every rule's outcome and the verdict: the one place the rules are applied, for `run`
    (its live results) and `merge` (the shards' saved cases) alike. `cases` are those that gate; `pending`
    counts the cases left out because they wait for review."""
    exact = case_metrics(cases)
    outcomes = [_case_rule_outcome(r, cases) for r in case_rules]
    # Rules compare the exact value: a p95 of 3000.04 ms fails "<= 3000" although the report shows 3000.0.
    outcomes += [_suite_rule_outcome(r, exact) for r in suite_rules]
    metrics = shown(exact)
    every_run = [(c.id, (*c.failed_conditions, *(x for run in c.runs for x in run.failed_conditions))) for c in cases]
    error_reason = judge_bugs(every_run) or over_budget(
        [(c.status, c.failed_conditions) for c in cases], max_error_rate
    )
    if not cases and pending:
        # They ran and are reported; a gate with nothing to count is not a pass, and not a fault either.
        error_reason = (
            f"all {pending} case(s) are pending review, so none gates: approve them with `ragjudge cases review "
            "FILE` (review: approved)"
        )
    verdict: Verdict
    if not cases or error_reason is not None:
        verdict = "error"
    elif any(o.passed is False for o in outcomes if o.rule.scope == "suite"):
        verdict = "fail"
    else:
        verdict = "pass"
    return SuiteResult(metrics, tuple(outcomes), verdict, error_reason)
