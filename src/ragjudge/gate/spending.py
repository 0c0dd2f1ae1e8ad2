"""The run's judge budget (`judge.budget_usd`, `judge.max_calls`): made from the config, and said in the report.

A run that ran out is an `error` (exit 3), whatever its cases say: the cases it could not judge are errors naming
the budget, and the reason says how far it got, so nobody reads a partly judged run as a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.budget import EXHAUSTED, Budget, Ceiling
from ragjudge.metrics.names import COST_USD, JUDGE_COST_USD
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.model import Report
from ragjudge.report.suite_block import SuiteBlock


def run_budget(
    judge: JudgeConfig, warnings: list[str], keys: tuple[str, str] = ("judge.budget_usd", "judge.max_calls")
) -> Budget | None:
    """The run's budget; None with the offline judge or no ceiling set. `keys`: where the USD and the calls
    ceilings were set, as a refusal names them."""
    if judge.provider != "openai" or (judge.budget_usd is None and judge.max_calls is None):
        return None
    if judge.budget_usd is not None:
        unpriced = unpriced_models(judge)
        if unpriced:
            warnings.append(
                f"{keys[0]} cannot be kept for {', '.join(unpriced)}: no price under judge.prices, so its "
                f"calls count as free against the budget; {price_tip(unpriced[0])} ({keys[1]} holds regardless)"
            )
    return Budget(Ceiling(judge.budget_usd, judge.max_calls, price_table(judge), *keys))


def counting_budget(
    judge: JudgeConfig, warnings: list[str], keys: tuple[str, str] = ("judge.budget_usd", "judge.max_calls")
) -> Budget | None:
    """A canary's or a generation's budget: its ceilings when set, else one with none that only counts what
    was spent (so the cost can be said); None without a model."""
    if judge.provider != "openai":
        return None
    kept = run_budget(judge, warnings, keys)
    if kept is not None:
        return kept
    return Budget(Ceiling(None, None, price_table(judge)))


def price_table(judge: JudgeConfig) -> dict[str, tuple[float, float]]:
    """`judge.prices` as USD per million input and output tokens, by model."""
    return {m: (p.input_per_mtok, p.output_per_mtok) for m, p in judge.prices.items()}


def price_tip(model: str) -> str:
    """What to set so a model's calls have a cost."""
    return f"set judge.prices.{model}: {{input_per_mtok: ..., output_per_mtok: ...}}"


def known_cost(spend: Budget, judge: JudgeConfig, warnings: list[str]) -> float | None:
    """What `spend` counted, at `judge.prices`; None (unknown, never 0) when a model it asked has no price, with
    one warning naming the key to set."""
    unpriced = unpriced_models(judge)
    if unpriced and spend.calls:
        warnings.append(unknown_cost_warning(unpriced))
        return None
    return round(spend.spent_usd, 6)


def unknown_cost_warning(unpriced: Sequence[str]) -> str:
    """The one warning for a judge cost that is unknown: the models without a price, and the key to set."""
    models = ", ".join(unpriced)
    return f"judge cost unknown: no price for {models} under judge.prices; {price_tip(unpriced[0])} to count it"


def unpriced_models(judge: JudgeConfig) -> list[str]:
    """The model judge's models that have no price under `judge.prices`: their calls' cost is unknown."""
    if judge.provider != "openai":
        return []
    return sorted({m for m in _models(judge) if m not in judge.prices})


def with_costs(report: Report, judge: JudgeConfig) -> Report:
    """The report's costs as known: for a judge model without a price, the judge's cost and the total null
    (unknown, never $0), with one warning."""
    extra: dict[str, object] = {}
    # The service's own cost as its spans' token usage prices it (`traces.price`), apart from what replies reported.
    traced = [c.trace.spans.cost_usd for c in report.cases if c.trace.spans is not None and c.trace.spans.cost_usd]
    if any(c.trace.spans is not None for c in report.cases):
        extra["service_trace_cost_usd"] = round(sum(traced), 8) if traced else None
    unpriced = unpriced_models(judge)
    cases = report.cases
    warnings = report.warnings
    if unpriced and (report.suite.model_extra or {}).get("judge_calls"):
        why = f"no price for {', '.join(unpriced)} under judge.prices"
        extra.update({JUDGE_COST_USD: None, "judge_cost_unknown": why, COST_USD: None})
        cases = [_unpriced(c) for c in cases]
        warnings = [*warnings, unknown_cost_warning(unpriced)]
    extra["judge_by_kind"] = by_kind(cases)
    suite = SuiteBlock.model_validate({**report.suite.model_dump(), **extra})
    return report.model_copy(update={"suite": suite, "cases": cases, "warnings": warnings})


def _unpriced(case: CaseBlock) -> CaseBlock:
    """A case whose judge calls' cost is unknown: null, never 0, wherever calls were made."""
    update: dict[str, object] = {}
    if case.judge.calls:
        escalation = case.judge.escalation
        if escalation is not None:
            escalation = escalation.model_copy(update={COST_USD: None})
        update["judge"] = case.judge.model_copy(update={COST_USD: None, "escalation": escalation})
    if case.judge_runs is not None and case.judge_runs.calls:
        update["judge_runs"] = case.judge_runs.model_copy(update={COST_USD: None})
    if case.pairwise is not None and case.pairwise.calls:
        update["pairwise"] = case.pairwise.model_copy(update={COST_USD: None})
    return case.model_copy(update=update) if update else case


def _models(judge: JudgeConfig) -> Sequence[str]:
    return [judge.model, *([judge.escalate.model] if judge.escalate is not None else [])]


def budget_kept(report: Report, spend: Budget, total: int) -> Report:
    """The report with the budget in `suite.judge_budget`, and, when it ran out, the verdict `error` and why."""
    suite = SuiteBlock.model_validate({**report.suite.model_dump(), "judge_budget": spend.as_dict()})
    if spend.exhausted is None:
        return report.model_copy(update={"suite": suite})
    cut = sum(any(EXHAUSTED in c for c in case.failed_conditions) for case in report.cases)
    reason = f"{spend.reason()} after {total - cut} of {total} cases; {cut} not judged are errors"
    return _ran_out(report.model_copy(update={"suite": suite}), reason)


def merged_costs(merged: Report, parts: Sequence[tuple[str, Report]]) -> Report:
    """A merge's costs and budgets: unknown when any shard's judge cost was, each shard's budget listed (a budget
    is per shard), and the verdict `error` when any shard ran out."""
    extras = [(name, report.suite.model_extra or {}) for name, report in parts]
    update: dict[str, object] = {}
    unknown = next((x["judge_cost_unknown"] for _, x in extras if x.get("judge_cost_unknown")), None)
    if unknown:
        update.update({JUDGE_COST_USD: None, "judge_cost_unknown": unknown, COST_USD: None})
    update["judge_by_kind"] = by_kind(merged.cases)
    budgets = [{"shard": name, **x["judge_budget"]} for name, x in extras if isinstance(x.get("judge_budget"), dict)]
    if budgets:
        update["judge_budgets"] = budgets
    suite = SuiteBlock.model_validate({**merged.suite.model_dump(), **update})
    out = merged.model_copy(update={"suite": suite})
    ran_out = [
        f"{name}: {report.error_reason}"
        for name, report in parts
        if ((report.suite.model_extra or {}).get("judge_budget") or {}).get("exhausted")
    ]
    return _ran_out(out, "; ".join(ran_out)) if ran_out else out


def _ran_out(report: Report, reason: str) -> Report:
    """A run that ran out of budget is `error`, whatever its cases say; the reason first, beside any other."""
    return report.model_copy(
        update={
            "verdict": "error",
            "error_reason": f"{reason}; {report.error_reason}" if report.error_reason else reason,
            "warnings": [reason, *report.warnings],
        }
    )


def by_kind(cases: Sequence[CaseBlock]) -> dict[str, dict[str, float | int | None]]:
    """`suite.judge_by_kind`: the judge's calls, tokens and cost for first judgements (samples included),
    rejudges, pairwise comparisons and escalations (the stronger model's calls, whichever judgement made them),
    from the cases (so `run` and `merge` count alike). The kinds add up to the suite's judge usage."""
    kinds: dict[str, dict[str, float | int | None]] = {
        k: {"calls": 0, "tokens": 0, COST_USD: 0.0} for k in ("first", "rejudge", "pairwise", "escalation")
    }

    def add(kind: str, calls: int, tokens: int, cost: float | None) -> None:
        row = kinds[kind]
        row["calls"] = int(row["calls"] or 0) + calls
        row["tokens"] = int(row["tokens"] or 0) + tokens
        was = row[COST_USD]
        row[COST_USD] = None if cost is None or was is None else float(was) + cost

    for case in cases:
        runs, judge = case.judge_runs, case.judge
        re_calls, re_tokens = (runs.calls, runs.tokens) if runs is not None else (0, 0)
        re_cost = runs.cost_usd if runs is not None else 0.0
        esc = judge.escalation
        esc_calls, esc_tokens, esc_cost = (esc.calls, esc.tokens, esc.cost_usd) if esc is not None else (0, 0, 0.0)
        known = None not in (judge.cost_usd, re_cost, esc_cost)
        first_cost = float(judge.cost_usd or 0) - float(re_cost or 0) - float(esc_cost or 0) if known else None
        add("first", judge.calls - re_calls - esc_calls, judge.tokens - re_tokens - esc_tokens, first_cost)
        add("rejudge", re_calls, re_tokens, re_cost)
        add("escalation", esc_calls, esc_tokens, esc_cost)
        if case.pairwise is not None:
            add("pairwise", case.pairwise.calls, case.pairwise.tokens, case.pairwise.cost_usd)
    for row in kinds.values():
        total = row[COST_USD]
        if total is not None:
            row[COST_USD] = round(float(total), 6)
    return kinds
