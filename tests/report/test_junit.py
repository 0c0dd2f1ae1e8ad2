"""The JUnit report: valid against a JUnit schema (tests/report/junit.xsd, written for these tests) and read
by a JUnit library (junitparser), with one testcase per case and the conditions as the failure message."""

from __future__ import annotations

from pathlib import Path

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite
from tests.report.samples import HOSTILE, sample_report

from ragjudge.report.junit import render_junit

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def parsed(tmp_path: Path, xml: str) -> dict[str, TestSuite]:
    path = tmp_path / "junit.xml"
    path.write_text(xml, encoding="utf-8")
    SCHEMA.validate(str(path))
    return {suite.name: suite for suite in JUnitXml.fromfile(str(path))}


def test_one_testcase_per_case_with_the_conditions(tmp_path: Path) -> None:
    suites = parsed(tmp_path, render_junit(sample_report()))
    cases = suites["ragjudge cases"]
    assert (cases.tests, cases.failures, cases.errors, cases.skipped) == (6, 1, 1, 0)
    rows = {(tc.classname, tc.name): tc for tc in cases}
    assert list(rows) == [
        ("refunds", "refund-01"),
        ("refunds", "refund-02"),
        ("refunds", "refund-07"),
        ("shipping", "ship-01"),
        ("shipping", "ship-02"),
        ("shipping", "ship-12"),
    ]
    assert rows["refunds", "refund-01"].is_passed and rows["refunds", "refund-01"].time == pytest.approx(0.12)
    [failure] = rows["refunds", "refund-07"].result
    assert isinstance(failure, Failure)
    assert failure.message == 'contains forbidden claim: "free"; faithfulness 0.50 < 0.80'
    assert failure.text == 'contains forbidden claim: "free"\nfaithfulness 0.50 < 0.80'
    [error] = rows["shipping", "ship-12"].result
    assert isinstance(error, Error)
    assert error.message == "endpoint error: HTTP 500 after 3 attempts"
    assert rows["shipping", "ship-12"].time == 0
    assert "question: question of refund-07?" in (rows["refunds", "refund-07"].system_out or "")
    props = {p.name: p.value for p in cases.properties()}
    assert props["verdict"] == "fail"
    assert float(props["suite.pass_rate"]) == pytest.approx(4 / 6)
    assert props["suite.p95_latency_ms"] == "2500.0"
    assert props["suite.judge_calls"] == "10"


def test_suite_rules_are_testcases_so_a_failed_gate_shows(tmp_path: Path) -> None:
    rules = parsed(tmp_path, render_junit(sample_report()))["ragjudge rules"]
    assert (rules.tests, rules.failures) == (2, 1)
    by_name = {tc.name: tc for tc in rules}
    [failure] = by_name["pass_rate >= 0.9"].result
    assert failure.message == "pass_rate 0.67 < 0.90"
    assert by_name["p95_latency_ms <= 3000"].is_passed


def test_without_categories_the_classname_says_so(tmp_path: Path) -> None:
    report = sample_report()
    report.cases[0].category = None
    [first, *_] = parsed(tmp_path, render_junit(report))["ragjudge cases"]
    assert (first.classname, first.name) == ("uncategorised", "refund-01")


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    xml = render_junit(sample_report(hostile=True))
    assert "<script>" not in xml and "\x01" not in xml and "\x07" not in xml
    [tc] = [tc for tc in parsed(tmp_path, xml)["ragjudge cases"] if tc.name.startswith("refund-07")]
    clean = HOSTILE.replace("\x01", "").replace("\x07", "")
    assert tc.name == "refund-07" + clean
    [failure] = tc.result
    assert failure.message == " ".join(clean.split()) + "; faithfulness 0.50 < 0.80"
    assert f"answer: {clean}" in (tc.system_out or "")


def test_comparison_fields_are_shown_when_present(tmp_path: Path) -> None:
    suites = parsed(tmp_path, render_junit(sample_report(comparison=True)))
    rows = {tc.name: tc for tc in suites["ragjudge cases"]}
    out = rows["refund-07"].system_out or ""
    # The baseline named as every output names it: main@ and its commit, never "the baseline".
    assert "change against main@abc1234: regression\nmain@abc1234: pass\n" in out
    assert "runs: 2 of 3 passed" in (rows["ship-02"].system_out or "")
    props = {p.name: p.value for p in suites["ragjudge cases"].properties()}
    assert props["delta.faithfulness"] == "-0.05"
    rules = {tc.name: tc for tc in suites["ragjudge rules"]}
    [failure] = rules["regression newly_failing <= 0"].result
    assert failure.message == "1 regression: refund-07"
    assert suites["ragjudge rules"].failures == 2


def test_testsuites_totals(tmp_path: Path) -> None:
    xml = render_junit(sample_report())
    path = tmp_path / "j.xml"
    path.write_text(xml, encoding="utf-8")
    root = JUnitXml.fromfile(str(path))
    assert (root.tests, root.failures, root.errors) == (8, 2, 1)
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ragjudge"')


def test_the_schema_rejects_what_consumers_would(tmp_path: Path) -> None:
    # The schema is only worth something if it can fail: a testcase without classname, two results.
    xml = render_junit(sample_report())
    for broken in (
        xml.replace('classname="refunds" ', "", 1),
        xml.replace("</failure>", '</failure><error message="x" />', 1),
    ):
        with pytest.raises(xmlschema.XMLSchemaValidationError):
            SCHEMA.validate(broken)


def test_a_case_pending_review_is_skipped_and_says_how_it_went(tmp_path: Path) -> None:
    report = sample_report()
    cases = [
        c.model_copy(update={"review": "pending"}) if c.id in ("refund-07", "ship-01") else c for c in report.cases
    ]
    suites = parsed(tmp_path, render_junit(report.model_copy(update={"cases": cases})))
    junit = suites["ragjudge cases"]
    # refund-07 failed and ship-01 passed: neither gates, so neither is red; the error still counts.
    assert (junit.tests, junit.failures, junit.errors, junit.skipped) == (6, 0, 1, 2)
    rows = {tc.name: tc for tc in junit}
    [skipped] = rows["refund-07"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == (
        'pending review, not gating (fail: contains forbidden claim: "free"; faithfulness 0.50 < 0.80)'
    )
    [passed] = rows["ship-01"].result
    assert isinstance(passed, Skipped) and passed.message == "pending review, not gating (pass)"
