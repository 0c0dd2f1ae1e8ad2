"""How the comment and the HTML report write a figure and name a baseline: `0.905`, `812 ms`, `main@abc1234`.

The comparison writes its reasons with the same words, so it reads them from here.
"""

from __future__ import annotations

import math

from ragjudge.metrics import registry
from ragjudge.metrics.spec import unit_number
from ragjudge.report.comparison_block import BaselineBlock

NO_BASELINE = "no baseline: "
"""How the warning that no baseline was compared begins (the comment turns it into a NOTE alert)."""


def fmt(metric: str, value: float | None) -> str:
    """A figure with its unit, as the comparison and the comment show it (by the metric's spec)."""
    return unit_number(registry.lookup(metric), value)


def score(value: object) -> str:
    """A 1-5 score as `2`, `2.5` or `3.33` (averaged samples need not be whole); anything else as text."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return str(value)
    return f"{value:.2f}".rstrip("0").rstrip(".")


def short_ref(ref: object) -> str | None:
    """`refs/heads/main` -> `main`; `refs/pull/7/merge` -> `pull/7/merge`."""
    if not isinstance(ref, str) or not ref:
        return None
    for prefix in ("refs/heads/", "refs/tags/", "refs/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def label(block: BaselineBlock) -> str:
    """`main@abc1234`, `abc1234`, `main`, or `the baseline`."""
    short = block.commit[:7] if block.commit else None
    ref = short_ref(block.ref)
    if ref and short:
        return f"{ref}@{short}"
    return short or ref or "the baseline"


def age_words(age_days: float | None) -> str:
    """`3 days old`, `1 day old`, `less than a day old`, `of unknown age`."""
    if age_days is None:
        return "of unknown age"
    days = int(age_days)
    if days < 1:
        return "less than a day old"
    return f"{days} day old" if days == 1 else f"{days} days old"


def p_text(p: float | None) -> str:
    """A p-value as every output writes it: `0.042`, `< 0.001` (never `0.00000000000000000000000000162`), `—`
    when there is none."""
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def shared_cases(report_cases: int, paired: int) -> str:
    """`on the 39 cases both runs have`, when the comparison's figures are not over this run's every case (cases
    added or removed): a delta's `now` is then not this run's figure, and says so. Empty otherwise."""
    if paired <= 0 or paired == report_cases:
        return ""
    return f"on the {paired} case{'' if paired == 1 else 's'} both runs have"
