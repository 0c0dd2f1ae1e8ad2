"""The HTML report as text: self-contained, every untrusted value escaped, the charts' figures right.
(tests/report/test_html_browser.py opens it in a real browser.)"""

from __future__ import annotations

import html as htmllib
import re

import pytest
from tests.report.samples import HOSTILE, sample_report, tolerant_pass_report

from ragjudge.report.comparison_block import BaselineBlock, ComparisonBlock, DeltaBlock
from ragjudge.report.html import build_view, delta_rows, histogram, rates, render_html


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


def test_a_threshold_far_above_the_data_is_marked_at_the_edge() -> None:
    report = sample_report()
    report.rules[2].threshold = 60000
    h = histogram(report)
    assert h is not None
    assert h.marks[2].label == "threshold 60000 ms (off scale →)" and h.marks[2].x == 560


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
    assert view.changes == ["fixed", "flaky", "new", "regression", "still_passing"]
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
    assert re.findall(r'<td class="case-id"><code>([^<]*)</code></td>', page) == [
        "refund-01",
        "refund-02",
        "refund-07",
        "ship-01",
        "ship-02",
        "ship-12",
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
