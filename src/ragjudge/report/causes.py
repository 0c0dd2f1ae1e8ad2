"""Causes: the conditions failing cases share, each with one case that shows it, worked out once for the comment
and the annotations.

At 300 failing cases the reader's first step is a cause, not a row: its condition, how many of this change's
failures it explains (and how many were failing on main already), and one representative case (a regression
first) with main's answer beside this run's and the line that reproduces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragjudge.report.case_block import CaseBlock
from ragjudge.report.failure_groups import failure_groups, group_key, split_condition, turn_of
from ragjudge.report.model import Report


@dataclass(frozen=True)
class Cause:
    """Conditions more than one gating case failed on."""

    condition: str
    """Its conditions as its cases say them (`missing required detail: "3-5 business days"; contradicts ...`), or
    the text a group of cases shares (`faithfulness < 0.8`) when each says it its own way."""
    cases: tuple[CaseBlock, ...]
    """The gating cases failing on it, in report order."""
    pre_existing: int
    """Of those, how many failed on the baseline too."""
    example: CaseBlock
    """The case that shows it: its first regression, else its first case this change is about, else its first."""
    example_condition: str
    """The example's own condition of this cause, as written (`contradicts the reference: "..." (answer: ...)`);
    `condition` itself when every case says it alike."""

    def ids(self) -> list[str]:
        return [c.id for c in self.cases]

    def counts(self, base: str | None) -> str:
        """`150 cases: 90 regressions, 60 already failing on main@abc1234`; `30 cases, all regressions`; `12 cases`
        without a baseline."""
        n = len(self.cases)
        total = f"{n} case{'s' if n != 1 else ''}"
        if base is None:
            return total
        regressions = sum(c.change == "regression" for c in self.cases)
        others = n - regressions - self.pre_existing
        parts = [
            f"{regressions} regression{'s' if regressions != 1 else ''}" if regressions else "",
            f"{others} new or not compared" if others else "",
            f"{self.pre_existing} already failing on {base}" if self.pre_existing else "",
        ]
        said = [p for p in parts if p]
        if len(said) == 1 and said[0].startswith(f"{n} "):
            return f"{total}, all {said[0].removeprefix(f'{n} ')}"  # `30 cases, all regressions`
        return f"{total}: " + ", ".join(said)


def causes(report: Report) -> list[Cause]:
    """What failing gating cases share, the causes standing for most of this change's failures first.

    A cause is first a shape: cases that failed on the very same conditions (90 regressions in 3 shapes are 3
    causes of 30, each case in one); the cases whose shape no other case has are then grouped by a condition
    they share (`failure_groups`). Causes of one case are no causes: such a case is read in its row."""
    gating = [c for c in report.cases if c.status != "pass" and c.review != "pending"]
    shapes: dict[tuple[str, ...], list[CaseBlock]] = {}
    for case in gating:
        # A conversation failing one condition on two turns fails on it once.
        shape = tuple(dict.fromkeys(turn_of(text)[1] for text in case.failed_conditions))
        if shape:
            shapes.setdefault(shape, []).append(case)
    found = [_cause("; ".join(shape), members, None) for shape, members in shapes.items() if len(members) > 1]
    covered = {c.id for cause in found for c in cause.cases}
    rest = [c for c in gating if c.id not in covered]
    by_id = {c.id: c for c in rest}
    for group in failure_groups(rest):
        members = [by_id[i] for i in group.cases]
        if len(members) > 1:
            found.append(_cause(group.condition, members, group.condition))
    order = {id(cause): k for k, cause in enumerate(found)}
    ranked = sorted(found, key=lambda k: (-(len(k.cases) - k.pre_existing), -len(k.cases), order[id(k)]))
    return _distinct_examples(ranked)


def _distinct_examples(ranked: Sequence[Cause]) -> list[Cause]:
    """Each cause shown by a case no cause before it shows, when it has one: a case failing on two causes is
    not the reader's only example of both."""
    used: set[str] = set()
    out = []
    for cause in ranked:
        if cause.example.id in used:
            spare = [c for c in cause.cases if c.id not in used]
            fresh = [c for c in spare if c.change == "regression"] or spare
            if fresh:
                own = cause.condition if cause.example_condition == cause.condition else None
                cause = replace(
                    cause,
                    example=fresh[0],
                    example_condition=own or condition_in(fresh[0], cause.condition),
                )
        used.add(cause.example.id)
        out.append(cause)
    return out


def _cause(condition: str, members: Sequence[CaseBlock], group: str | None) -> Cause:
    """`group`: the shared condition of a group whose cases each say it their own way; None for a shape."""
    old = sum(c.change == "still_failing" for c in members)
    example = next(
        (c for c in members if c.change == "regression"),
        next((c for c in members if c.change != "still_failing"), members[0]),
    )
    own = condition if group is None else condition_in(example, group)
    return Cause(condition, tuple(members), old, example, own)


def condition_in(case: CaseBlock, condition: str) -> str:
    """The case's failed condition that belongs to the group `condition`, as written; the group's text when none
    does (a hand-edited report)."""
    key = group_key(condition)
    for text in case.failed_conditions:
        as_written = turn_of(text)[1]
        if as_written == condition or group_key(split_condition(text).shared) == key:
            return text
    return condition


def first_of_each(found: Sequence[Cause]) -> set[str]:
    """Every case a cause stands for: shown by its example, not one by one."""
    return {c.id for cause in found for c in cause.cases}
