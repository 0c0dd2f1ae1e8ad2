"""The HTML report as text: self-contained, every untrusted value escaped, the charts' figures right.
(tests/report/test_html_browser.py opens it in a real browser.)"""

from __future__ import annotations

import html as htmllib
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from tests.fakes.rag import make_case, make_trace, ok_result
from tests.fakes.reports import make_report
from tests.report.samples import HOSTILE, sample_report, tolerant_pass_report

from ragjudge.compare.outcome import CHANGES
from ragjudge.gate.scoring import score_case
from ragjudge.report.changes import CHANGE_NAMES
from ragjudge.report.comparison_block import BaselineBlock, ComparisonBlock, DeltaBlock
from ragjudge.report.html import build_view, render_html
from ragjudge.report.html_charts import (
    LABEL_WIDTH,
    RateChart,
    RateRow,
    delta_rows,
    fit,
    histogram,
    num,
    rates,
    text_width,
)
from ragjudge.report.judge_block import CriterionBlock
from ragjudge.rules import parse_rules


def test_self_contained_no_network() -> None:
    page = render_html(sample_report(comparison=True))
    assert "default-src 'none'" in page  # the CSP forbids every fetch, whatever slips in
    assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count("<script>") == 1 and page.count("<style>") == 1


def test_untrusted_text_is_escaped_everywhere() -> None:
    page = render_html(sample_report(comparison=True, hostile=True))
    assert "<script>alert" not in page and "<img" not in page and "</td><script>" not in page
    escaped = htmllib.escape(HOSTILE, quote=True).replace("&quot;", "&#34;").replace("&#x27;", "&#39;")
    assert page.count(escaped) >= 3  # the question, answer and reason, as text
    assert 'data-id="refund-07x&lt;/td&gt;&lt;script&gt;alert(&#34;pwned&#34;)' in page  # and in attributes
    assert "{{ 7*7 }}" in page  # data, not a template


def test_histogram_marks_p50_p95_and_the_threshold() -> None:
    h = histogram(sample_report())
    assert h is not None and h.count == 5  # the errored case has no latency
    assert [m.kind for m in h.marks] == ["p50", "p95", "threshold"]
    assert [m.label for m in h.marks] == ["p50 340 ms", "p95 2500 ms", "threshold 3000 ms"]
    assert sum(int(b.value) for b in h.bars) == 5
    scale = h.marks[2].x / 3000
    assert h.marks[0].x == 340 * scale and h.marks[1].x == 2500 * scale


def test_a_threshold_far_above_the_data_is_said_not_drawn() -> None:
    # A line at the axis' end would sit on the last tick's value (250 ms), not at 60000: it is not drawn.
    report = sample_report()
    report.rules[2].threshold = 60000
    h = histogram(report)
    assert h is not None
    assert [m.kind for m in h.marks] == ["p50", "p95"]
    assert h.off_scale == "threshold 60000 ms: beyond this axis (it ends at 2750 ms)"
    assert h.ticks[-1] == (560.0, "2750")
    # Its label is inside the chart, at the right edge, pointing past it; the sentence is its title.
    assert h.beyond is not None and (h.beyond.label, h.beyond.x, h.beyond.anchor) == (
        "threshold 60000 ms →",
        696,
        "end",
    )
    assert (
        '<text id="off-scale" class="mark-label mark-beyond" text-anchor="end" x="696" y="-8">threshold 60000 ms →'
        "<title>threshold 60000 ms: beyond this axis (it ends at 2750 ms)</title></text>"
    ) in render_html(report)


@pytest.mark.parametrize("threshold", [300.0, 1500.0, 2000.0])
def test_a_threshold_on_the_axis_is_drawn_where_its_value_is(threshold: float) -> None:
    report = sample_report()
    report.rules[2].threshold = threshold
    h = histogram(report)
    assert h is not None and h.off_scale == ""
    [mark] = [m for m in h.marks if m.kind == "threshold"]
    # The axis is linear from the first tick (0 at x 0) through the last: the mark's x reads back as its value.
    (x_last, last) = h.ticks[-1]
    assert mark.x == pytest.approx(threshold * x_last / float(last))


def test_pass_rates_by_category_and_difficulty() -> None:
    report = sample_report()
    assert [(r.label, r.passed, r.total) for r in rates(report, "category")] == [("refunds", 2, 3), ("shipping", 2, 3)]
    assert [(r.label, r.passed, r.total) for r in rates(report, "difficulty")] == [
        ("(none)", 1, 1),
        ("easy", 2, 2),
        ("hard", 0, 1),
        ("medium", 1, 2),
    ]


def test_score_distributions_and_deltas() -> None:
    view = build_view(sample_report(comparison=True))
    assert [(d.name, d.count) for d in view.distributions] == [
        ("faithfulness", 5),
        ("judge.grounding", 5),
        ("judge.relevance", 5),
    ]
    grounding = view.distributions[1]
    assert [b.value for b in grounding.bars] == ["0", "1", "0", "4", "0"]  # one 2 (refund-07), four 4s
    rows = {d.metric: d for d in view.deltas}
    assert rows["faithfulness"].interval == "[-0.09, -0.01]" and rows["faithfulness"].significant is True
    assert rows["pass_rate"].interval == "n/a" and rows["pass_rate"].low_x is None
    assert rows["judge.grounding"].comparable is False
    # The filter's values are the codes; what the reader picks from is words.
    assert view.changes == [
        ("fixed", "fixed"),
        ("flaky", "flaky"),
        ("new", "new"),
        ("regression", "regression"),
        ("still_passing", "still passing"),
    ]
    assert [r["kind"] for r in view.rules][-1] == "regression"


def test_without_a_baseline_it_says_so() -> None:
    page = render_html(sample_report())
    assert 'id="no-baseline"' in page and 'id="deltas"' not in page


def test_a_ratio_centres_on_one() -> None:
    ratio = DeltaBlock(
        metric="p95_latency",
        kind="ratio",
        base=400.0,
        now=440.0,
        delta=1.1,
        ci_low=0.9,
        ci_high=1.3,
        p_value=None,
        significant=False,
        test="",
        comparable=True,
        reason="",
    )
    [row] = delta_rows(ComparisonBlock(baseline=BaselineBlock(), judge_comparable=True, deltas=[ratio]))
    assert (row.delta, row.interval) == ("×1.1", "[0.9, 1.3]")
    assert row.zero_x == 120 and row.low_x == pytest.approx(120 - 112 / 3) and row.high_x == 232
    assert row.dot_x == pytest.approx(120 + 112 / 3)


def test_a_failed_case_rule_under_a_pass_is_a_count_not_a_verdict() -> None:
    page = render_html(tolerant_pass_report())
    rules = page[page.index('<table id="rules">') : page.index("</table>", page.index('<table id="rules">'))]
    rows = re.findall(r'<tr class="rule">(.*?)</tr>', rules, re.S)
    assert [re.sub(r"\s+", " ", row).strip() for row in rows] == [
        "<td>case</td><td>1 case(s) failed faithfulness &gt;= 0.8: refund-07</td> "
        '<td><span class="tally tally-some">1 of 6 cases failed</span></td>',
        '<td>suite</td><td>pass_rate 0.67 &gt;= 0.60</td> <td><span class="ok">ok</span></td>',
        '<td>suite</td><td>p95_latency_ms 2500 &lt;= 3000</td> <td><span class="ok">ok</span></td>',
    ]


def test_a_case_rule_every_case_met_is_counted_too() -> None:
    report = sample_report()
    report.rules[0].passed, report.rules[0].value = True, 0.0
    assert build_view(report).rules[0]["tally"] == "0 of 6 cases failed"
    assert '<span class="tally">0 of 6 cases failed</span>' in render_html(report)


def test_case_ids_sit_in_cells_that_do_not_wrap() -> None:
    page = render_html(sample_report())
    # Failing and errored cases first, in report order; then the passing ones.
    assert re.findall(r'<td class="case-id"><code>([^<]*)</code></td>', page) == [
        "refund-07",
        "ship-12",
        "refund-01",
        "refund-02",
        "ship-01",
        "ship-02",
    ]
    assert ".case-id { white-space: nowrap; }" in page


def test_passages_a_service_does_not_expose_read_as_unknown_not_none() -> None:
    report = sample_report()
    chat, plain = report.cases[0], report.cases[1]
    unknown = chat.model_copy(
        update={"trace": chat.trace.model_copy(update={"retrieved_ids": [], "passages": [], "passages_unknown": True})}
    )
    empty = plain.model_copy(update={"trace": plain.trace.model_copy(update={"retrieved_ids": [], "passages": []})})
    page = render_html(report.model_copy(update={"cases": [unknown, empty]}))
    assert (
        page.count(
            '<div class="muted passages-unknown">unknown: the service exposes no passages '
            "(endpoint.response.retrieved is not mapped)</div>"
        )
        == 1
    )
    assert page.count('<div class="muted">none</div>') >= 1


class _Text(HTMLParser):
    """Every text node of a page, outside <script> and <style>."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.texts.append(data)


def test_no_python_words_reach_the_page() -> None:
    # refused True, False and None; a confidence of None; a case without a category or a difficulty.
    report = sample_report(comparison=True)
    cases = [c.model_copy(update={"trace": c.trace.model_copy(update={"confidence": None})}) for c in report.cases]
    cases[0] = cases[0].model_copy(update={"trace": cases[0].trace.model_copy(update={"refused": True})})
    parser = _Text()
    parser.feed(render_html(report.model_copy(update={"cases": cases})))
    words = {w for text in parser.texts for w in re.findall(r"\b(?:True|False|None)\b", text)}
    assert words == set(), [t for t in parser.texts if re.search(r"\b(?:True|False|None)\b", t)]
    assert any(t.strip().startswith("answered") for t in parser.texts)
    assert any(t.strip().startswith("declined") for t in parser.texts)


def test_warnings_are_one_box_a_kind_and_fold_when_there_are_many() -> None:
    same = [f"case 'c{i}' (cases/a.yaml:{i}): category 'oos' looks like out-of-scope" for i in range(258)]
    page = render_html(sample_report().model_copy(update={"warnings": same}))
    assert page.count('<div class="warn">') == 1
    assert "category &#39;oos&#39; looks like out-of-scope (and 257 more like it)" in page
    kinds = [f"{word} went wrong" for word in ("one", "two", "three", "four", "five")]
    page = render_html(sample_report().model_copy(update={"warnings": kinds}))
    assert '<details id="warnings" class="warn"><summary>5 warnings of 5 kinds</summary>' in page
    assert page.count('<div class="warn">') == 0


def test_an_unscored_criterion_reads_not_scored_and_scores_read_out_of_five() -> None:
    report = sample_report()
    first = report.cases[0]
    criteria = {"cites": CriterionBlock(score=None, reason="the judge gave none"), "tone": CriterionBlock(score=4)}
    judge = first.judge.model_copy(update={"criteria": criteria, "reasoning": {"grounding": "fine"}})
    judge = judge.model_copy(update={"scores": {"grounding": 4}})
    page = render_html(report.model_copy(update={"cases": [first.model_copy(update={"judge": judge})]}))
    assert "<strong>criteria.cites</strong> (not scored): the judge gave none" in page
    assert "<strong>criteria.tone</strong> (4/5)" in page
    assert "<strong>grounding</strong> (4/5): fine" in page
    assert "None/5" not in page


@pytest.mark.parametrize(
    ("value", "digits", "shown"),
    [(12500.0, 4, "12500"), (1234.567, 3, "1235"), (0.000015, 3, "0.000015"), (0.5, 3, "0.5"), (0.0, 3, "0")],
)
def test_numbers_never_carry_an_exponent(value: float, digits: int, shown: str) -> None:
    assert num(value, digits) == shown


def test_a_change_badge_is_in_words_with_its_code_beside() -> None:
    report = sample_report(comparison=True)
    cases = [c.model_copy(update={"change": "still_passing"}) if c.status == "pass" else c for c in report.cases]
    page = render_html(report.model_copy(update={"cases": cases}))
    assert '<span class="badge c-still_passing" title="change: still_passing">still passing</span>' in page
    assert '<option value="still_passing">still passing</option>' in page


def test_the_headline_comes_first_under_the_title() -> None:
    page = render_html(sample_report())
    header = page[page.index("<header>") : page.index("</header>")]
    after_title = header[header.index("</h1>") + len("</h1>") :].lstrip()
    assert after_title.startswith(
        '<p id="headline" class="headline">Blocked by pass_rate 0.667 &lt; 0.9. 2 more cases must pass.</p>'
    )
    assert header.index('id="headline"') < header.index('id="meta"')


def every_change_report() -> Any:
    """`sample_report(comparison=True)` with one case for every change a case can have against the baseline."""
    report = sample_report(comparison=True)
    first = report.cases[2]
    statuses = ("fail", "pass", "error")
    cases = [
        first.model_copy(update={"id": f"case-{code}", "change": code, "status": statuses[k % 3]})
        for k, code in enumerate(CHANGES)
    ]
    return report.model_copy(update={"cases": cases})


def test_every_change_badge_is_in_words() -> None:
    page = render_html(every_change_report())
    badges = re.findall(r'<span class="badge c-([a-z_]+)" title="change: ([a-z_]+)">([^<]*)</span>', page)
    assert sorted((cls, title) for cls, title, _ in badges) == sorted((c, c) for c in CHANGES)
    assert {code: words for code, _, words in badges} == {
        "regression": "regression",
        "fixed": "fixed",
        "still_failing": "still failing",
        "still_passing": "still passing",
        "flaky": "flaky",
        "baseline_flaky": "flaky on the baseline",
        "judge_split": "judge undecided",
        "pending_review": "pending review",
        "new": "new",
        "removed": "removed",
        "not_comparable": "not compared",
    }
    assert set(CHANGE_NAMES) == set(CHANGES)


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("refunds", "refunds"),
        ("Returns, refunds and exchanges for international orders (EU)", "Returns, refunds an…"),
        ("配送と返品に関するよくある質問とその回答のまとめ", "配送と返品に関するよく…"),
        ("W" * 30, "W" * 11 + "…"),
    ],
)
def test_a_category_label_is_cut_to_the_room_beside_its_bar(label: str, shown: str) -> None:
    # Cut by how wide it is drawn, not by its length: 22 CJK characters or capital Ws once ran under the bar.
    assert fit(label, LABEL_WIDTH) == shown
    assert text_width(shown) <= LABEL_WIDTH


def test_a_rate_chart_is_as_wide_as_its_widest_count() -> None:
    narrow = RateChart([RateRow("a", 2, 3, 373.3)])
    wide = RateChart([RateRow("a", 2, 3, 373.3), RateRow("b", 12345, 12345, 560.0)])
    assert (narrow.width, narrow.height) == (727, 26)
    assert (wide.width, wide.height) == (784, 48)  # `12345/12345` once ran past a fixed 760


def test_no_number_in_the_page_has_an_exponent() -> None:
    # Through the gate's own steps: its rule reasons once read `1e-05` and `p95_latency_ms 1.235e+04 <= 2.5e+06`.
    case_rules = parse_rules({"latency_ms": "<= 0.00001"}, "case", "gate.case")
    suite_rules = parse_rules({"p95_latency_ms": "<= 2500000"}, "suite", "gate.suite")
    replies = [ok_result(make_trace(latency_ms=12345.0 + k)) for k in range(3)]
    results = [score_case(make_case(f"c{k}"), r, None, case_rules) for k, r in enumerate(replies)]
    page = render_html(make_report(results, case_rules, suite_rules))
    rules = re.findall(r'<tr class="rule"><td>\w+</td><td>([^<]*)</td>', page)
    assert rules == ["3 case(s) failed latency_ms &lt;= 0.00001: c0, c1, c2", "p95_latency_ms 12347 &lt;= 2500000"]
    shown = re.sub(r"<(script|style)>.*?</\1>", "", page, flags=re.S)
    assert re.findall(r".{20}\d[eE][-+]?\d.{10}", shown) == []


def test_a_tiny_p_value_reads_below_0_001_in_the_html_and_the_comment() -> None:
    from ragjudge.report.markdown import render_comment

    report = sample_report(comparison=True)
    assert report.comparison is not None
    delta = report.comparison.deltas[0]
    report.comparison.deltas[0] = delta.model_copy(update={"p_value": 1.62e-27})
    html = render_html(report)
    assert '<td class="num p">&lt; 0.001</td>' in html
    assert "0.0000" not in html and "e-27" not in html
    name = delta.metric.replace("_", "\\_")
    rows = [line for line in render_comment(report).splitlines() if line.startswith(f"| <code>{name}</code> |")]
    row = next(line for line in rows if line.count("|") == 9)  # the deltas table's, not the rules table's
    assert " | < 0.001 | " in row


def test_sixty_new_case_ids_fold_each_on_one_line() -> None:
    report = sample_report(comparison=True)
    assert report.comparison is not None
    new = [f"cs-{i:03d}" for i in range(60)]
    report = report.model_copy(update={"comparison": report.comparison.model_copy(update={"new_cases": new})})
    html = render_html(report)
    assert '<details class="id-list"><summary>New cases: 60</summary>' in html
    assert '<span class="case-id">cs-000</span>, <span class="case-id">cs-001</span>' in html  # never cs- / 001
    few = report.model_copy(update={"comparison": report.comparison.model_copy(update={"new_cases": new[:2]})})
    assert (
        '<p class="muted">New cases: <span class="case-id">cs-000</span>, <span class="case-id">cs-001</span>.</p>'
        in render_html(few)
    )


def test_no_figure_in_the_page_has_more_than_three_places() -> None:
    # SVG coordinates included: `117.857`, never `117.85714285714286` (issue 39: no 20-digit numbers in any output).
    page = render_html(sample_report(comparison=True))
    assert re.findall(r"\d\.\d{4,}", page) == []
