"""The gate's error budget (`gate.max_error_rate`): past it, what is left says nothing about the service.

A run where 13 of 15 cases error (a mapping mistake, an endpoint down for most of the run) used to be judged on
the 2 left: `fail`, exit 1, with a rejection accuracy of two cases. When the share of errored cases is over the
budget (default 0.5), or every case errored, the verdict is `error` (exit 3) and the reason names the error
that dominated: the most common first reason of the errored cases, with its count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

DEFAULT_MAX_ERROR_RATE = 0.5
NO_REASON = "no reason recorded"


def over_budget(cases: Sequence[tuple[str, Sequence[str]]], max_error_rate: float) -> str | None:
    """Why the verdict is `error`, for cases given as (status, failed_conditions); None within the budget.

    A case's first failed condition is the reason it errored (the report puts it first).
    """
    errored = [conditions for status, conditions in cases if status == "error"]
    total, count = len(cases), len(errored)
    if not count or (count < total and count / total <= max_error_rate):
        return None
    reasons = Counter(conditions[0] if conditions else NO_REASON for conditions in errored)
    top, times = reasons.most_common(1)[0]  # a tie goes to the reason met first, in case-set order
    head = (
        f"all {total} cases errored"
        if count == total
        else f"{count} of {total} cases errored ({count / total:.0%}), over gate.max_error_rate {max_error_rate:g}"
    )
    return f"{head}: the verdict is error; the error that dominated ({times} of {count}): {top}"
