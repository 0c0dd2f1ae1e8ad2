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
    "new",
    "removed",
    "not_comparable",
)
"""Every `change` value, in the order the comment and `counts` list them."""


def change_of(now: CaseBlock, base: CaseBlock | None) -> str:
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
        return "baseline_flaky" if base.flaky else "regression"
    return "still_failing"


def baseline_view(base: CaseBlock) -> CaseBaselineBlock:
    """What the baseline said for a case (`CaseBlock.baseline`): `flaky` and `k_of_n` only when they say
    something."""
    view = CaseBaselineBlock(status=base.status, failed_conditions=list(base.failed_conditions))
    if base.flaky:
        view = view.model_copy(update={"flaky": True})
    if base.k_of_n:
        view = view.model_copy(update={"k_of_n": base.k_of_n})
    return view
