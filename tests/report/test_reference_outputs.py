"""What people read of the reference answer and the team's criteria: the comment lists each failing case's
reference points (verdict, point, the answer's words) and criteria (score, reason) and the suite's figures,
and its comparison writes their deltas like the other figures; the HTML report has them per case and charts
their distributions; JUnit's failure carries them. A report without references renders as it always did."""

from __future__ import annotations

import dataclasses
import html as htmllib
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import xmlschema
from junitparser import Failure, JUnitXml, TestSuite
from tests.fakes.rag import error_result, make_case, make_trace, ok_result
from tests.fakes.reports import OFFLINE, case, gate_report, make_report
from tests.report.test_comment import markdown_text, tables

from ragjudge.compare import compare_with_baseline
from ragjudge.config.loader import parse_config
from ragjudge.gate.scoring import CaseResult, score_case
from ragjudge.judge.interface import Judgement
from ragjudge.judge.reference import ReferencePoint
from ragjudge.report.changes import delta_rows
from ragjudge.report.html import build_view, render_html
from ragjudge.report.judge_block import CriterionBlock
from ragjudge.report.junit import render_junit
from ragjudge.report.markdown import render_comment
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import ProvenanceBlock
from ragjudge.rules import Rule

HOSTILE_QUOTE = "退货 <script>alert(1)</script> | @octocat `x` #12"
ANSWER = "签收 15 天内支持 15 天无理由退货，运费由买家承担。"


def refund_07(quote: str = "签收 15 天内支持 15 天无理由退货", rules: tuple[Rule, ...] = ()) -> CaseResult:
    """Fails on a contradicted point; misses one, covers one; one criterion scored low, one high."""
    case_ = dataclasses.replace(
        make_case("refund-07", "退货期限是多久？"), expected=("7 天无理由退货", "需提供订单号", "运费由买家承担")
    )
    judgement = Judgement(
        judge="gpt-test",
        reference_points=(
            ReferencePoint("7 天无理由退货", "contradicted", quote, "the answer says 15 days"),
            ReferencePoint("需提供订单号", "missing", "", "the order number is never mentioned"),
            ReferencePoint("运费由买家承担", "covered", "运费由买家承担", "stated as is"),
        ),
        criteria={"asks_for_order": 2, "polite": 5},
        criteria_reasoning={"asks_for_order": "never asks for the order number", "polite": "courteous"},
    )
    return score_case(case_, ok_result(make_trace(ANSWER)), judgement, list(rules))


def refund_08() -> CaseResult:
    """Passes: one point partly covered, one covered."""
    case_ = dataclasses.replace(make_case("refund-08", "运费谁出？"), expected="质量问题运费由商家承担，需上传照片。")
    judgement = Judgement(
        judge="gpt-test",
        reference_points=(
            ReferencePoint("质量问题运费由商家承担", "covered", "质量问题运费由商家承担", "stated"),
            ReferencePoint("需上传照片", "partial", "需提供凭证", "evidence, not photos"),
        ),
        criteria={"asks_for_order": 5},
        criteria_reasoning={"asks_for_order": "asks first"},
    )
    trace = make_trace("质量问题运费由商家承担，需提供凭证。")
    return score_case(case_, ok_result(trace), judgement, [])


def reference_report(quote: str = "签收 15 天内支持 15 天无理由退货") -> Report:
    results = [
        refund_07(quote),
        refund_08(),
        score_case(make_case("ship-01"), ok_result(make_trace()), None, []),
        score_case(make_case("ship-12"), error_result("endpoint error: HTTP 500 after 3 attempts"), None, []),
    ]
    return make_report(results, judge_info={"judge": "gpt-test", "provider": "openai", "lexical": False})


def details_of(comment: str, case_id: str) -> str:
    return comment.split(f"<details><summary><code>{case_id}</code>")[1].split("</details>")[0]


# --- the comment ---------------------------------------------------------------------------------


def test_a_failing_case_lists_its_reference_points_and_criteria_under_its_conditions() -> None:
    comment = render_comment(reference_report())
    # The contradiction is the case's condition, quoted in its row: the details do not say it again.
    assert details_of(comment, "refund-07") == (
        " · fail</summary>\n\n"
        "Reproduce: <code>ragjudge probe --case refund-07</code>\n\n"
        "**Question:** 退货期限是多久？\n\n"
        "**Expected:** 7 天无理由退货; 需提供订单号; 运费由买家承担\n\n"
        "**Answer:** 签收 15 天内支持 15 天无理由退货，运费由买家承担。\n\n"
        "**Retrieved:** (none) · confidence high · 100 ms\n\n"
        "Reference points (answer correctness 0.333):\n"
        '- ○ missing: misses a reference point: "需提供订单号"\n'
        '- ✓ covered: "运费由买家承担" — answer: "运费由买家承担"\n\n'
        "Criteria:\n"
        "- criteria.asks\\_for\\_order 2/5: never asks for the order number\n"
        "- criteria.polite 5/5: courteous\n\n"
    )


def test_the_contradiction_is_a_failed_condition_in_the_table() -> None:
    rows = next(t for t in tables(render_comment(reference_report())) if t[0].startswith("| Case"))[2:]
    assert rows == [
        '| <code>refund-07</code> | fail | contradicts the reference: "7 天无理由退货" '
        '(answer: "签收 15 天内支持 15 天无理由退货") |',
        "| <code>ship-12</code> | error | endpoint error: HTTP 500 after 3 attempts |",
    ]


def test_passing_cases_and_cases_without_a_reference_list_none() -> None:
    comment = render_comment(reference_report())
    assert "refund-08" not in comment  # it passed: its partial point is for the HTML report
    assert "Reference points" not in details_of(comment, "ship-12")
    assert comment.count("Reference points") == 1 and comment.count("Criteria:") == 1


def test_the_footer_has_the_suite_figures_of_the_reference_and_criteria() -> None:
    comment = render_comment(reference_report())
    assert comment.rstrip("\n").splitlines()[-1] == (
        "<sub>ragjudge 0.1.0 · p50 100 ms · p95 100 ms · faithfulness n/a · rejection accuracy 1.000"
        " · judge error rate 0.000 · answer correctness 0.542 · reference contradictions 1"
        " · criteria.asks\\_for\\_order mean 3.50 · criteria.polite mean 5.00</sub>"
    )


def test_suite_rules_on_the_reference_and_criteria_show_their_value_in_its_unit() -> None:
    rules = [
        Rule("suite", "reference_contradictions", "<=", 0),
        Rule("suite", "answer_correctness", ">=", 0.8),
        Rule("suite", "criteria.asks_for_order_mean", ">=", 4),
    ]
    report = make_report([refund_07(), refund_08()], suite_rules=rules)
    assert next(t for t in tables(render_comment(report)) if t[0].startswith("| Suite rule"))[2:] == [
        "| <code>reference\\_contradictions</code> | 1 | &lt;= 0 | ❌ |",
        "| <code>answer\\_correctness</code> | 0.542 | &gt;= 0.8 | ❌ |",
        "| <code>criteria.asks\\_for\\_order\\_mean</code> | 3.50 | &gt;= 4 | ❌ |",
    ]


def test_a_hostile_quote_is_inert_in_the_comment() -> None:
    comment = render_comment(reference_report(HOSTILE_QUOTE))
    row = next(x for x in comment.splitlines() if x.startswith("| <code>refund-07</code>"))
    cell = row.removeprefix("| <code>refund-07</code> | fail | ").removesuffix(" |")
    assert cell == (
        'contradicts the reference: "7 天无理由退货" (answer: "退货 &lt;script&gt;alert(1)&lt;/script&gt; \\| '
        '@\u200boctocat \\`x\\` \\#\u200b12")'
    )
    assert markdown_text(cell) == f'contradicts the reference: "7 天无理由退货" (answer: "{HOSTILE_QUOTE}")'
    assert "<script>" not in comment and re.search(r"@\w", comment) is None


def test_a_long_reference_is_capped_and_counted() -> None:
    points = tuple(ReferencePoint(f"point {i}", "missing", "", "absent") for i in range(15))
    case_ = dataclasses.replace(make_case("long"), expected=tuple(p.point for p in points))
    judgement = Judgement(judge="gpt-test", reference_points=points)
    result = score_case(case_, ok_result(make_trace()), judgement, [Rule("case", "answer_correctness", ">=", 0.5)])
    lines = details_of(render_comment(make_report([result])), "long").splitlines()
    shown = [x for x in lines if x.startswith("- ○ missing: ")]
    assert shown[0] == '- ○ missing: misses a reference point: "point 0"' and len(shown) == 12
    assert "- …and 3 more reference point(s) in the JSON report" in lines


def plain_report() -> Report:
    """A report as written before references were judged: a reference text, claims, a judge reason."""
    bad = case("refund-07", "fail", ('missing required detail: "5 days"', "faithfulness 0.500 < 0.8"), faithfulness=0.5)
    bad["expected"] = "Refunds take 5 days | from receipt."
    bad["judge"] = {
        "judge": "gpt-test",
        "faithfulness": 0.5,
        "claims": [
            {"claim": "Refunds take 7 days.", "supported": False, "evidence_id": None, "reason": "not in d1"},
            {"claim": "Refunds go to the card.", "supported": True, "evidence_id": "d1", "reason": "stated"},
        ],
        "scores": {"grounding": 2},
        "reasoning": {"grounding": "one claim <b>unsupported</b> @all"},
        "unscored": [],
    }
    err = case("ship-12", "error", ("endpoint error: HTTP 500 after 3 attempts",))
    return gate_report([case("refund-01", "pass"), bad, err])


# This very report, as the comment renders it since the headline: a report saved before references were judged
# (and before the headline was recorded) renders in full.
PLAIN_COMMENT = (
    "## ❌ ragjudge: FAIL\n"
    "\n"
    "**Blocked by pass\\_rate 0.333 &lt; 1. 2 more cases must pass.**\n"
    "\n"
    "1 of 3 cases passed · 1 failed · 1 errored · judge: offline-lexical\n"
    "\n"
    "### Failing and errored cases\n"
    "\n"
    "| Case" + "&#8199;" * 7 + " | Status | Failed on |\n"  # room for `refund-07`: no id wraps at its hyphen
    "|---|---|---|\n"
    '| <code>refund-07</code> | fail | missing required detail: "5 days"<br>faithfulness 0.500 &lt; 0.8 |\n'
    "| <code>ship-12</code> | error | endpoint error: HTTP 500 after 3 attempts |\n"
    "\n"
    "<details><summary><code>refund-07</code> · fail</summary>\n"
    "\n"
    "Reproduce: <code>ragjudge probe --case refund-07</code>\n"
    "\n"
    "**Question:** question of refund-07\n"
    "\n"
    "**Expected:** Refunds take 5 days \\| from receipt.\n"
    "\n"
    "**Answer:** an answer\n"
    "\n"
    "**Retrieved:** <code>d1</code> · confidence high · 10 ms\n"
    "\n"
    "Unsupported claims:\n"
    "- Refunds take 7 days. (not in d1)\n"
    "\n"
    "Judge reasons:\n"
    "- grounding 2: one claim &lt;b&gt;unsupported&lt;/b&gt; @\u200ball\n"
    "\n"
    "</details>\n"
    "\n"
    "<details><summary><code>ship-12</code> · error</summary>\n"
    "\n"
    "Reproduce: <code>ragjudge probe --case ship-12</code>\n"
    "\n"
    "**Question:** question of ship-12\n"
    "\n"
    "**Answer:** an answer\n"
    "\n"
    "**Retrieved:** <code>d1</code> · confidence high · 10 ms\n"
    "\n"
    "</details>\n"
    "\n"
    "\n"
    "\n"
    "| Suite rule | Value | Threshold | Result |\n"
    "|---|---|---|---|\n"
    "| <code>pass\\_rate</code> | 0.333 | &gt;= 1 | ❌ |\n"
    "| <code>p95\\_latency\\_ms</code> | 10 | &lt;= 3000 | ✅ |\n"
    "\n"
    "<sub>ragjudge 0.1.0 · p50 10 ms · p95 10 ms · faithfulness n/a · rejection accuracy n/a · judge error rate "
    "0.000</sub>\n"
    "\n"
    "<sub>Judge: the offline lexical judge. Faithfulness counts shared words (CJK: character bigrams) between each "
    "claim and the retrieved passages; it cannot tell a paraphrase from a contradiction.</sub>\n"
)


def test_a_report_without_references_renders_the_comment_it_always_did() -> None:
    assert render_comment(plain_report()) == PLAIN_COMMENT


# --- the comparison ------------------------------------------------------------------------------


def judged(case_id: str, covered: int, asks: float) -> CaseResult:
    """Four reference points, `covered` of them covered and the rest missing; asks_for_order scored `asks`."""
    points = tuple(
        ReferencePoint(f"p{i}", "covered" if i < covered else "missing", "Refunds" if i < covered else "", "r")
        for i in range(4)
    )
    case_ = dataclasses.replace(make_case(case_id), expected=tuple(p.point for p in points))
    judgement = Judgement(
        judge="gpt-test", reference_points=points, criteria={"asks_for_order": asks}, criteria_reasoning={}
    )
    return score_case(case_, ok_result(make_trace()), judgement, [])


def with_provenance(report: Report) -> Report:
    provenance = ProvenanceBlock.model_validate({"judge_fingerprint": OFFLINE, "git_commit": "0123456789"})
    return report.model_copy(update={"provenance": provenance})


def test_answer_correctness_and_criteria_deltas_read_like_the_other_figures() -> None:
    base = with_provenance(make_report([judged(f"c{i}", 4, 4) for i in range(6)]))
    now = with_provenance(make_report([judged(f"c{i}", 2, 2.5) for i in range(6)]))
    config = parse_config({}, "t", Path("."))
    compared = compare_with_baseline(now, base, config, now=datetime(2026, 11, 30, tzinfo=UTC))
    rows = {r["metric"]: r for r in delta_rows(compared)}
    correctness, asks = rows["answer_correctness"], rows["criteria.asks_for_order"]
    assert (correctness["base"], correctness["now"], correctness["delta"]) == ("1.000", "0.500", "▼ -0.500")
    assert correctness["interval"] == "-0.500 to -0.500"
    assert (asks["base"], asks["now"], asks["delta"]) == ("4.00", "2.50", "▼ -1.50")
    assert asks["interval"] == "-1.50 to -1.50"
    assert asks["verdict"] == correctness["verdict"] == "significant"
    comment = render_comment(compared)
    assert "| <code>answer\\_correctness</code> | 1.000 | 0.500 | ▼ -0.500 | -0.500 to -0.500 | " in comment
    assert "| <code>criteria.asks\\_for\\_order</code> | 4.00 | 2.50 | ▼ -1.50 | -1.50 to -1.50 | " in comment


# --- the HTML report -----------------------------------------------------------------------------


def svg(page: str, metric: str) -> str:
    found = re.search(rf'<svg class="reference-chart" data-metric="{re.escape(metric)}".*?</svg>', page, re.S)
    assert found is not None, metric
    return found[0]


def test_the_html_report_charts_answer_correctness_and_each_criterion() -> None:
    page = render_html(reference_report())
    assert page.count('class="reference-chart"') == 3
    correctness = svg(page, "answer_correctness")
    assert re.findall(r"<title>([^<]*)</title>", correctness) == [
        "0–0.2: 0",
        "0.2–0.4: 1",  # refund-07: 1 of 3 points
        "0.4–0.6: 0",
        "0.6–0.8: 1",  # refund-08: 1.5 of 2
        "0.8–1: 0",
    ]
    assert correctness.count("<rect") == 5
    assert re.findall(r"<text [^>]*>([^<]*)</text>", correctness) == ["0–0.2", "0.2–0.4", "0.4–0.6", "0.6–0.8", "0.8–1"]
    asks = svg(page, "criteria.asks_for_order")
    assert re.findall(r"<title>([^<]*)</title>", asks) == ["1: 0", "2: 1", "3: 0", "4: 0", "5: 1"]
    assert re.findall(r"<text [^>]*>([^<]*)</text>", asks) == ["1", "2", "3", "4", "5"]
    assert "<figcaption>criteria.polite (1)</figcaption>" in page
    assert (
        '<p class="muted">answer correctness 0.542 · 1 contradicted reference point(s)'
        " · criteria.asks_for_order mean 3.5 · criteria.polite mean 5</p>"
    ) in page


def test_the_html_report_lists_each_cases_points_and_criteria() -> None:
    page = render_html(reference_report())
    row = page.split('data-id="refund-07"')[1].split('<tr class="case"')[0]
    assert "<h3>Reference points (answer correctness 0.333)</h3>" in row
    assert '<div class="text muted">reference: 7 天无理由退货; 需提供订单号; 运费由买家承担</div>' in row
    assert (
        '<tr class="point" data-verdict="contradicted"><td><span class="bad">contradicted</span></td>'
        "<td>7 天无理由退货</td><td>签收 15 天内支持 15 天无理由退货</td><td>the answer says 15 days</td></tr>"
    ) in row
    assert (
        '<tr class="point" data-verdict="missing"><td>missing</td><td>需提供订单号</td><td></td>'
        "<td>the order number is never mentioned</td></tr>"
    ) in row
    assert (
        '<div class="criterion"><strong>criteria.asks_for_order</strong> (2/5): never asks for the order number</div>'
    ) in row
    passing = page.split('data-id="refund-08"')[1].split('<tr class="case"')[0]
    assert '<tr class="point" data-verdict="partial"><td>partial</td><td>需上传照片</td><td>需提供凭证</td>' in passing
    plain = page.split('data-id="ship-01"')[1].split('<tr class="case"')[0]
    assert "Reference points" not in plain and "Criteria" not in plain


def test_a_hostile_quote_is_escaped_in_the_html_report() -> None:
    page = render_html(reference_report(HOSTILE_QUOTE))
    assert page.count("<script>") == 1  # the report's own
    assert htmllib.escape(HOSTILE_QUOTE, quote=False) in page
    assert "<script>alert(1)" not in page


def test_an_html_report_without_references_draws_nothing_new() -> None:
    view = build_view(plain_report())
    assert view.reference_charts == [] and view.criteria_means == []
    page = render_html(plain_report())
    assert 'class="reference-chart"' not in page and "Reference points" not in page and "criterion" not in page


# --- JUnit ---------------------------------------------------------------------------------------

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def suites(tmp_path: Path, report: Report) -> dict[str, TestSuite]:
    path = tmp_path / "junit.xml"
    path.write_text(render_junit(report), encoding="utf-8")
    SCHEMA.validate(str(path))
    return {suite.name: suite for suite in JUnitXml.fromfile(str(path))}


def test_the_junit_failure_carries_the_contradiction_the_missing_point_and_the_low_criterion(tmp_path: Path) -> None:
    cases = {tc.name: tc for tc in suites(tmp_path, reference_report())["ragjudge cases"]}
    [failure] = cases["refund-07"].result
    assert isinstance(failure, Failure)
    assert failure.message == 'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货")'
    assert failure.text == (
        'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货")\n'
        'misses a reference point: "需提供订单号"\n'
        "criteria.asks_for_order 2/5: never asks for the order number"
    )
    assert cases["refund-08"].is_passed


def test_a_criterion_a_rule_failed_is_named_once(tmp_path: Path) -> None:
    rule = Rule("case", "criteria.asks_for_order", ">=", 4)
    report = make_report([refund_07(rules=(rule,))], [rule])
    [failure] = next(tc for tc in suites(tmp_path, report)["ragjudge cases"]).result
    assert failure.text.splitlines() == [
        'contradicts the reference: "7 天无理由退货" (answer: "签收 15 天内支持 15 天无理由退货")',
        "criteria.asks_for_order 2 < 4: never asks for the order number",
        'misses a reference point: "需提供订单号"',
    ]


def test_the_suite_figures_are_junit_properties_only_when_there_are_references(tmp_path: Path) -> None:
    props = {p.name: p.value for p in suites(tmp_path, reference_report())["ragjudge cases"].properties()}
    assert float(props["suite.answer_correctness"]) == pytest.approx(13 / 24)
    assert props["suite.reference_contradictions"] == "1"
    assert props["suite.criteria.asks_for_order_mean"] == "3.5"
    plain = {p.name for p in suites(tmp_path, plain_report())["ragjudge cases"].properties()}
    assert not {"suite.answer_correctness", "suite.reference_contradictions"} & plain


def test_a_criterion_the_judge_never_scored_reads_not_scored() -> None:
    report = reference_report()
    cases = []
    for c in report.cases:
        if c.id == "refund-07":
            criteria = {**c.judge.criteria, "polite": CriterionBlock(score=None, reason="no score given")}
            c = c.model_copy(update={"judge": c.judge.model_copy(update={"criteria": criteria})})
        cases.append(c)
    details = details_of(render_comment(report.model_copy(update={"cases": cases})), "refund-07")
    assert "- criteria.polite not scored: no score given\n" in details
    assert "None" not in details
