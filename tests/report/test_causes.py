"""Causes (`report/causes.py`) and the failure groups they start from: what the comment and the annotations
show first, counted over gating cases only, this change's failures apart from main's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.fakes.reports import C, report

from ragjudge.compare import compare_with_baseline
from ragjudge.config.loader import parse_config
from ragjudge.report.causes import causes
from ragjudge.report.failure_groups import failure_groups
from ragjudge.report.model import Report

REFUND = 'missing required detail: "3-5 business days"'
FEE = 'missing required detail: "$6.99"'
FREE = 'contains forbidden claim: "always free"'


def _compared(now: list[C], base: list[C]) -> Report:
    config = parse_config({}, "t", Path("."))
    return compare_with_baseline(report(now), report(base), config, now=datetime(2026, 11, 30, tzinfo=UTC))


def test_each_shape_is_a_cause_its_regressions_apart_from_mains_failures() -> None:
    base = [*(C(f"r{i}") for i in range(4)), *(C(f"f{i}") for i in range(3)), *(C(f"o{i}", "fail") for i in range(3))]
    now = [
        *(C(f"r{i}", "fail", conditions=[REFUND]) for i in range(4)),
        *(C(f"f{i}", "fail", conditions=[FEE]) for i in range(3)),
        *(C(f"o{i}", "fail", conditions=[FREE]) for i in range(3)),
    ]
    found = causes(_compared(now, base))
    assert [(k.condition, len(k.cases), k.pre_existing, k.example.id) for k in found] == [
        (REFUND, 4, 0, "r0"),
        (FEE, 3, 0, "f0"),
        (FREE, 3, 3, "o0"),  # failing on main already: after this change's, however large
    ]
    assert found[0].counts("main@0123456") == "4 cases, all regressions"
    assert found[2].counts("main@0123456") == "3 cases, all already failing on main@0123456"
    assert found[0].counts(None) == "4 cases"


def test_a_group_mixing_regressions_and_mains_failures_counts_them_apart() -> None:
    base = [C("a"), C("b"), C("c", "fail")]
    now = [C(i, "fail", conditions=[f'missing required detail: "{i}"']) for i in ("a", "b", "c")]
    [cause] = causes(_compared(now, base))
    assert cause.condition == "missing required detail"  # each case says it its own way: the group's text
    assert cause.counts("main@0123456") == "3 cases: 2 regressions, 1 already failing on main@0123456"
    assert (cause.example.id, cause.example_condition) == ("a", 'missing required detail: "a"')
    [group] = failure_groups(_compared(now, base).cases)
    assert (group.cases, group.pre_existing, group.new()) == (["a", "b", "c"], ["c"], ["a", "b"])


def test_a_case_failing_two_shared_conditions_is_not_both_causes_example() -> None:
    now = [
        C("x", "fail", conditions=["context_recall 0.000 < 1 (missing d1)", 'contradicts the reference: "p"']),
        C("y", "fail", conditions=['contradicts the reference: "q"']),
        C("z", "fail", conditions=["context_recall 0.500 < 1 (missing d2)"]),
    ]
    found = causes(report(now))
    # x is the first case of both groups: the second cause is shown by its other case.
    assert [(k.condition, k.example.id, k.example_condition) for k in found] == [
        ("context_recall < 1", "x", "context_recall 0.000 < 1 (missing d1)"),
        ("contradicts the reference", "y", 'contradicts the reference: "q"'),
    ]


def test_a_case_pending_review_is_in_no_group_and_no_cause() -> None:
    r = report([C("a", "fail", conditions=[FEE]), C("b", "fail", conditions=[FEE]), C("p", "fail", conditions=[FEE])])
    pending = r.cases[2].model_copy(update={"review": "pending"})
    r = r.model_copy(update={"cases": [*r.cases[:2], pending]})
    assert [(g.condition, g.cases) for g in failure_groups(r.cases)] == [(FEE, ["a", "b"])]
    assert [len(k.cases) for k in causes(r)] == [2]


def test_a_conversation_failing_one_condition_on_two_turns_counts_once() -> None:
    turns = [f"turn 1: {FEE}", f"turn 2: {FEE}"]
    r = report([C("conv", "fail", conditions=turns), C("other", "fail", conditions=[FEE])])
    assert [(g.condition, g.cases) for g in failure_groups(r.cases)] == [(FEE, ["conv", "other"])]
    [cause] = causes(r)
    assert (cause.condition, [c.id for c in cause.cases]) == (FEE, ["conv", "other"])  # one shape, once each
