"""What a reviewer reads first: the `headline` and the `failure_groups` blocks.

Both are worked out once, when the report is built (and again after the comparison with the baseline), so the
comment, the job summary, stdout and the HTML report say the same thing in the same words.
"""

from __future__ import annotations

from pydantic import Field

from ragjudge.report.block import Block


class HeadlineBlock(Block):
    """Why the gate blocked, what this change did and how far the run is from green."""

    sentence: str
    """A few short sentences, the first line of every output: `Blocked by 2 regressions (r03, r07); pass_rate
    0.884 < 0.9, failing on main@abc1234 too (0.907 there). 5 more cases must pass.`"""
    new_failures: list[str] = Field(default_factory=list)
    """Ids of the cases failing now that passed on the baseline (`change: regression`); empty without one."""
    fixed: list[str] = Field(default_factory=list)
    """Ids of the cases passing now that failed on the baseline (`change: fixed`); empty without one."""
    pre_existing: list[str] = Field(default_factory=list)
    """Ids of the cases failing now and on the baseline (`change: still_failing`); empty without one."""
    rules_failing_on_main: list[str] = Field(default_factory=list)
    """The metrics of the suite rules that fail now and failed on the baseline too; empty without one."""
    cases_to_pass: int | None = None
    """How many more cases must pass for every failing pass-rate rule to hold (`pass_rate >= 0.9` over 43 cases
    with 37 passing: 2); null when no pass-rate rule fails."""


class FailureGroupBlock(Block):
    """Cases that failed on the same condition: the condition once, then who failed on it."""

    condition: str
    """The condition without what is particular to a case (the measured value, quotes, the details in
    brackets): `faithfulness < 0.8`, `missing required detail`, `endpoint error: HTTP 500 after 3 attempts`."""
    cases: list[str] = Field(default_factory=list)
    """Ids of the gating cases that failed on it, in report order (a case pending review gates nothing and is
    in no group)."""
    pre_existing: list[str] = Field(default_factory=list)
    """Of `cases`, those failing on the baseline too (`change: still_failing`): not this change's doing. Empty
    without a baseline, and in reports written before it was recorded."""

    def new(self) -> list[str]:
        """`cases` without the pre-existing ones: the failures this change is about (or every one, without a
        baseline)."""
        old = set(self.pre_existing)
        return [i for i in self.cases if i not in old]
