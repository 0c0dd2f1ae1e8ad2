"""Each case's `change` against the baseline.

`change` follows the final status (after repeats): a case that still fails after its repeats is
a `regression` when the baseline passed it, even if some of its runs passed (`k_of_n` shows them).
"""

from __future__ import annotations

from ragjudge.report.case_block import CaseBaselineBlock, CaseBlock

CHANGES = (
    "regression",
    "fixed",
    "still_failing",
    "still_passing",
    "flaky",
    "baseline_flaky",
    "judge_split",
    "pending_review",
    "new",
    "removed",
    "not_comparable",
)
"""Every `change` value, in the order the comment and `counts` list them."""


def change_of(now: CaseBlock, base: CaseBlock | None) -> str:
    if now.review == "pending":
        return "pending_review"  # reported, gates nothing: neither a regression nor a fix
    if base is None:
        return "new"
    if now.status == "error" or base.status == "error":
        return "not_comparable"  # one side could not be evaluated: nothing to compare
    if now.status == "pass":
        if now.flaky:
            return "flaky"
        return "still_passing" if base.status == "pass" else "fixed"
    if base.status == "pass":
        # The baseline needed repeats for this case: one failure now is not a regression.
        if base.flaky:
            return "baseline_flaky"
        # The judgements of this very reply disagreed: the judge's noise alone never makes a regression.
        return "judge_split" if now.judge_split else "regression"
    return "still_failing"


def baseline_view(base: CaseBlock, now: CaseBlock, change: str) -> CaseBaselineBlock:
    """What the baseline said for a case (`CaseBlock.baseline`): `flaky`, `k_of_n` and `case_changed` only when
    they say something; a regression's answer and flipped reference points, to read beside this run's."""
    view = CaseBaselineBlock(status=base.status, failed_conditions=list(base.failed_conditions))
    update: dict[str, object] = {}
    if base.flaky:
        update["flaky"] = True
    if base.k_of_n:
        update["k_of_n"] = base.k_of_n
    if base.case_hash and now.case_hash and base.case_hash != now.case_hash:
        update["case_changed"] = True
    if change == "regression":
        update["answer"] = base.trace.answer
        flipped = flipped_points(base, now)
        if flipped:
            update["flipped_points"] = flipped
        before, after = base.trace.tool_calls, now.trace.tool_calls
        if before is not None and after is not None and [t.name for t in before] != [t.name for t in after]:
            update["tool_calls"] = [t.name for t in before]
    return view.model_copy(update=update) if update else view


def flipped_points(base: CaseBlock, now: CaseBlock) -> list[str]:
    """The reference points judged both times whose verdict changed: `"<point>": covered -> contradicted`."""
    before = {p.point: p.verdict for p in base.judge.reference_points or []}
    return [
        f'"{p.point}": {before[p.point]} -> {p.verdict}'
        for p in now.judge.reference_points or []
        if p.point in before and before[p.point] != p.verdict
    ]
