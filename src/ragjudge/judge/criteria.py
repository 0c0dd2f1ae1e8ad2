"""The team's own criteria: which apply to a case, checked once before any call.

`judge.criteria` defines criteria by name, each scoped by `categories` and `tags` (none given: every answered
case); a case adds more by name (`criteria: [asks_for_order]`) or defines its own (`criteria: {NAME: {...}}`).
The judge scores each applicable criterion 1 to 5, in the same call as its rubric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragjudge.cases.case import Case
from ragjudge.cases.scope import category_key
from ragjudge.config.judge_config import CriterionConfig
from ragjudge.errors import CaseFileError


@dataclass(frozen=True)
class Criterion:
    """One criterion as the judge is asked it."""

    name: str
    question: str
    score_1: str
    score_5: str


def _criterion(name: str, c: CriterionConfig) -> Criterion:
    return Criterion(name, c.question, c.score_1, c.score_5)


def _in_scope(case: Case, c: CriterionConfig) -> bool:
    if c.categories and (
        case.category is None or category_key(case.category) not in {category_key(x) for x in c.categories}
    ):
        return False
    return not c.tags or bool(set(c.tags) & set(case.tags))


def criteria_for(case: Case, defined: Mapping[str, CriterionConfig]) -> tuple[Criterion, ...]:
    """The criteria the judge scores for `case`, by name: scoped ones of `judge.criteria`, then the case's own."""
    chosen: dict[str, Criterion] = {}
    for name, c in defined.items():
        if _in_scope(case, c):
            chosen[name] = _criterion(name, c)
    for name in case.criteria:
        if name in defined:
            chosen[name] = _criterion(name, defined[name])
    for name, c in case.inline_criteria:
        chosen[name] = _criterion(name, c)
    return tuple(chosen.values())


def undefined(name: str, defined: Mapping[str, CriterionConfig]) -> str:
    """`no criterion named 'x' (judge.criteria defines: a, b)`: how every check names a missing criterion."""
    return f"no criterion named {name!r} (judge.criteria defines: {', '.join(sorted(defined)) or 'none'})"


def check_case_criteria(cases: Sequence[Case], defined: Mapping[str, CriterionConfig]) -> None:
    """Exit 2 naming the file and the case for a criterion named but defined nowhere, or defined twice."""
    for case in cases:
        for name in case.criteria:
            if name not in defined:
                raise CaseFileError(
                    f"{case.origin}: case {case.id!r}: criteria: {undefined(name, defined)}",
                    tip="define it under judge.criteria in ragjudge.yml, or inline: criteria: {NAME: {question, "
                    "score_1, score_5}}",
                )
        for name, _ in case.inline_criteria:
            if name in defined:
                raise CaseFileError(
                    f"{case.origin}: case {case.id!r}: criteria: {name!r} is already defined in judge.criteria",
                    tip="name it in the case's list to use that one, or give the case's own criterion another name",
                )


def every_name(cases: Sequence[Case], defined: Mapping[str, CriterionConfig]) -> frozenset[str]:
    """Every criterion name a rule may refer to: judge.criteria's and the cases' own."""
    return frozenset(defined) | {name for case in cases for name, _ in case.inline_criteria}
