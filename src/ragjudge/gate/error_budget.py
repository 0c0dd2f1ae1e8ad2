"""The gate's error budget (`gate.max_error_rate`): past it, what is left says nothing about the service.

A run where 13 of 15 cases error (a mapping mistake, an endpoint down for most of the run) used to be judged on
the 2 left: `fail`, exit 1, with a rejection accuracy of two cases. When the share of errored cases is over the
budget (default 0.5), or every case errored, the verdict is `error` (exit 3) and the reason names the error
that dominated: the most common first reason of the errored cases, with its count.

A judge that failed inside ragjudge (`judge.interface.JUDGE_BUG`, an unexpected exception: a bug) spends no
budget: one such case makes the verdict `error`, whatever the rules and the budget, so a run whose judge broke
never passes (it used to leave two judgements unscored, which no default rule reads, and exit 0).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ragjudge.judge.interface import JUDGE_BUG
from ragjudge.metrics.spec import plain

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
        else f"{count} of {total} cases errored ({count / total:.0%}), over gate.max_error_rate {plain(max_error_rate)}"
    )
    return f"{head}: the verdict is error; the error that dominated ({times} of {count}): {top}"


_BUG = re.compile(rf"^(?:turn \d+: )?{re.escape(JUDGE_BUG)}: ")


def judge_bugs(cases: Sequence[tuple[str, Sequence[str]]]) -> str | None:
    """Why the verdict is `error` when the judge failed inside ragjudge on some case, for cases given as
    (id, the conditions of every run, a conversation's prefixed `turn N: `); None when it never did."""
    hit = [(ident, bug) for ident, conditions in cases for bug in conditions if _BUG.match(bug)]
    if not hit:
        return None
    count = len(dict.fromkeys(ident for ident, _ in hit))
    ident, first = hit[0]
    return (
        f"the judge failed inside ragjudge on {count} of {len(cases)} cases: the verdict is error; the first, case "
        f"{ident!r}: {first} (a bug in ragjudge, not in the service: rerun with RAGJUDGE_DEBUG=1 for a traceback, "
        "and report it)"
    )
