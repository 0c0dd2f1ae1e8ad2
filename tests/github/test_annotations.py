"""Which failures become annotations, ranked worst first, at most 10 of each kind."""

from __future__ import annotations

from ragjudge.github.annotations import gate_annotations, step_warnings
from tests.fakes.reports import case, gate_report


def test_failed_gate_rules_first_then_cases_worst_first() -> None:
    cases = [
        case("one-condition", conditions=("a",), faithfulness=0.9),
        case("three-conditions", conditions=("a", "b", "c")),
        case("errored", "error", ("endpoint error: HTTP 500 after 3 attempts",)),
        case("low-faithfulness", conditions=("a",), faithfulness=0.1),
        case("fine", "pass"),
    ]
    notes = gate_annotations(gate_report(cases))

    assert [n.kind for n in notes] == ["error"] * 4
    assert notes[0].title == "ragjudge: suite rule pass_rate failed"
    # Two cases failed on the same condition: one annotation for that cause first, on its first case.
    assert (notes[1].title, notes[1].message) == (
        "ragjudge: case one-condition failed, and 1 more like it",
        "one-condition failed: a; and 1 more like it: low-faithfulness",
    )
    assert [n.title.split()[2] for n in notes[2:]] == ["three-conditions", "errored"]
    assert notes[2].message == "three-conditions failed: a; b; c"
    assert notes[3].title == "ragjudge: case errored errored"


def test_at_most_ten_errors_with_the_rest_counted() -> None:
    notes = gate_annotations(gate_report([case(f"c{i:02d}") for i in range(25)]))

    assert len(notes) == 10 and all(n.kind == "error" for n in notes)
    assert notes[-1].message == "17 more failing or errored cases: see the job summary"


def test_a_passing_gate_warns_about_the_cases_it_tolerated() -> None:
    cases = [case("ok", "pass"), case("tolerated")]
    notes = gate_annotations(gate_report(cases, verdict="pass"), warnings=("comment not posted",))

    # The tolerated case first: GitHub keeps 10 warnings a step, and this change's cases come before the run's notes.
    assert [(n.kind, n.message) for n in notes] == [
        ("warning", "tolerated failed: tolerated broke"),
        ("warning", "comment not posted"),
    ]


def test_warnings_are_capped_too() -> None:
    words = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu")
    notes = gate_annotations(gate_report([case("bad")], warnings=tuple(f"{w} went wrong" for w in words)))

    assert sum(n.kind == "warning" for n in notes) == 10 and sum(n.kind == "error" for n in notes) == 2
    # The last warning slot says what was left out, rather than dropping it unsaid.
    assert [n.message for n in notes if n.kind == "warning"][-2:] == [
        "iota went wrong",
        "3 more kinds of warning: see the log",
    ]


def test_tolerated_cases_leave_the_warnings_a_slot() -> None:
    cases = [case(f"t{i:02d}") for i in range(12)]
    report = gate_report(cases, verdict="pass", warnings=("a warning", "another warning"))
    notes = gate_annotations(report, warnings=("the PR comment was not posted: 403",))
    assert len(notes) == 10 and all(n.kind == "warning" for n in notes)
    assert notes[8].message == "4 more failing or errored cases: see the job summary"
    assert (notes[9].title, notes[9].message) == ("ragjudge: more warnings", "3 more kinds of warning: see the log")
    one = gate_annotations(gate_report(cases, verdict="pass"), warnings=("the PR comment was not posted: 403",))
    assert one[-1].message == "the PR comment was not posted: 403"


def test_warnings_of_one_kind_are_one_annotation_with_a_count() -> None:
    warnings = tuple(f"case 'c{i}' (/w/cases/a.yaml:{i}): category 'oos' looks like out-of-scope" for i in range(58))
    notes = gate_annotations(gate_report([case("ok", "pass")], verdict="pass", warnings=warnings))

    assert [n.message for n in notes if n.kind == "warning"] == [
        "case 'c0' (/w/cases/a.yaml:0): category 'oos' looks like out-of-scope (and 57 more like it)"
    ]


def test_a_case_annotation_carries_its_file_and_line() -> None:
    block = {**case("bad"), "file": "cases/refunds.yaml", "line": 42}
    [note] = [n for n in gate_annotations(gate_report([block])) if "case bad" in n.title]
    assert (note.file, note.line, note.properties()) == (
        "cases/refunds.yaml",
        42,
        {"file": "cases/refunds.yaml", "line": "42"},
    )
    # A case file outside the checkout keeps its path in the message's case, but lands on no file.
    outside = {**case("bad"), "file": "/opt/shared/cases.yaml", "line": 7}
    [note] = [n for n in gate_annotations(gate_report([outside])) if "case bad" in n.title]
    assert note.properties() == {}
    climbing = {**case("bad"), "file": "../shared/cases.yaml", "line": 7}
    [note] = [n for n in gate_annotations(gate_report([climbing])) if "case bad" in n.title]
    assert note.properties() == {}


def test_an_error_verdict_says_nothing_could_be_evaluated() -> None:
    r = gate_report([case("e1", "error"), case("e2", "error")], verdict="error")
    r = r.model_copy(update={"rules": [x.model_copy(update={"passed": None}) for x in r.rules]})

    notes = gate_annotations(r)

    assert notes[0].message == "no case could be evaluated" and len(notes) == 3


def test_a_gate_failed_by_regressions_names_the_rule_and_the_regressions_first() -> None:
    from datetime import UTC, datetime
    from pathlib import Path

    from ragjudge.compare import compare_with_baseline
    from ragjudge.config.loader import parse_config
    from tests.fakes.reports import C
    from tests.fakes.reports import report as compare_report

    base = compare_report([C("old-fail", "fail"), C("refund-07"), C("ship-12")])
    now = compare_report(
        [
            C("old-fail", "fail", conditions=["a", "b", "c"]),
            C("refund-07", "fail", conditions=['missing required detail: "store credit"']),
            C("ship-12", "fail"),
        ]
    )
    config = parse_config({}, "t", Path("."))
    compared = compare_with_baseline(now, base, config, now=datetime(2026, 11, 30, tzinfo=UTC))
    assert compared.verdict == "fail"  # the absolute rules (none here) passed: the regressions failed it
    notes = gate_annotations(compared)
    assert [(a.kind, a.title, a.message) for a in notes] == [
        ("error", "ragjudge: regression rule newly_failing failed", "newly_failing 2 > 0: refund-07, ship-12"),
        (
            "error",
            "ragjudge: case refund-07 regressed",
            'refund-07 passed on main@0123456, fails now: missing required detail: "store credit"',
        ),
        ("error", "ragjudge: case ship-12 regressed", "ship-12 passed on main@0123456, fails now: ship-12 broke"),
        # Failing on main too: the annotation says so.
        (
            "error",
            "ragjudge: case old-fail failed, as on main@0123456",
            "old-fail failed on main@0123456 too (not this change's doing): a; b; c",
        ),
    ]


def test_without_a_gate_report_the_steps_warnings_are_one_a_kind_and_cut_with_a_count() -> None:
    said = [
        f"{word} went wrong"
        for word in ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    ]
    notes = step_warnings([*said, "alpha went wrong"], room=9)
    assert [n.message for n in notes] == [
        "alpha went wrong (and 1 more like it)",
        *said[1:8],
        "2 more kinds of warning: see the log",
    ]
    assert {n.kind for n in notes} == {"warning"} and all(n.properties() == {} for n in notes)
    assert [n.message for n in step_warnings(said[:2])] == said[:2]
