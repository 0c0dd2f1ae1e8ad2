"""The HTML report in a real browser: Debian's Chromium, driven headless through Playwright.

No console errors, no request beyond the file itself, the charts have their marks, and the
case table's filters hide and show the right rows. Skipped only where /usr/bin/chromium is
absent (`.ci/run` installs it, so CI always runs these).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.report.samples import case, sample_report, tolerant_pass_report
from tests.report.test_html import every_change_report

from ragjudge.cli import main
from ragjudge.report.html import render_html

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = importlib.import_module("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


class Opened:
    """A page with everything it said and asked for recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def visible_ids(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "#cases tr.case", "rows => rows.filter(r => !r.hidden).map(r => r.dataset.id)"
        )  # type: ignore[no-any-return]

    def attr(self, selector: str, name: str) -> list[str]:
        return self.page.eval_on_selector_all(selector, f"els => els.map(e => e.getAttribute('{name}'))")  # type: ignore[no-any-return]


@pytest.fixture
def opened(browser: Any, tmp_path: Path) -> Iterator[Opened]:
    path = tmp_path / "report.html"
    path.write_text(render_html(sample_report(comparison=True, hostile=True)), encoding="utf-8")
    page = Opened(browser, path)
    yield page
    page.page.close()


def test_renders_without_errors_or_requests(opened: Opened, tmp_path: Path) -> None:
    assert opened.console == []
    assert opened.dialogs == []  # the hostile answer's onerror/script never ran
    assert opened.requests == [opened.url]
    assert opened.page.locator("script").count() == 1 and opened.page.locator("img").count() == 0
    assert opened.page.locator("#verdict").inner_text() == "FAIL"
    shot = tmp_path / "report.png"
    opened.page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000


def test_charts_have_their_marks(opened: Opened) -> None:
    page = opened.page
    heights = [float(h) for h in opened.attr("#latency-chart rect.bar", "height")]
    assert len(heights) >= 5 and sum(1 for h in heights if h > 0) >= 3 and max(heights) == 150
    for kind in ("p50", "p95", "threshold"):
        assert page.locator(f"#latency-chart line.mark-{kind}").count() == 1, kind
    assert page.locator("#latency-chart text.mark-label").all_text_contents() == [
        "p50 340 ms",
        "p95 2500 ms",
        "threshold 3000 ms",
    ]
    widths = [round(float(w), 1) for w in opened.attr("#category-chart rect.bar-pass", "width")]
    assert widths == [373.3, 373.3]  # 2 of 3 in each category
    assert len(opened.attr("#difficulty-chart rect.bar-pass", "width")) == 4
    assert opened.attr("svg.score-chart", "data-dimension") == ["faithfulness", "judge.grounding", "judge.relevance"]
    assert page.locator("svg.score-chart rect.bar").count() == 15
    assert page.locator("#deltas tr.delta").count() == 3
    assert page.locator("#deltas circle.dot").count() == 3 and page.locator("#deltas circle.dot-sig").count() == 1
    assert page.locator("#deltas line.ci").count() == 2  # pass_rate has no interval


def test_filters_hide_and_show_the_right_rows(opened: Opened) -> None:
    page, everyone = opened.page, opened.visible_ids()
    assert len(everyone) == 6
    page.select_option("#filter-status", "fail")
    assert [i[:9] for i in opened.visible_ids()] == ["refund-07"]
    assert page.locator("#shown-count").inner_text() == "1 of 6 cases shown"
    page.select_option("#filter-status", "")
    page.select_option("#filter-change", "flaky")
    assert opened.visible_ids() == ["ship-02"]
    page.select_option("#filter-change", "")
    page.select_option("#filter-category", "shipping")
    assert opened.visible_ids() == ["ship-12", "ship-01", "ship-02"]  # failing first
    page.fill("#search", "SHIP-1")  # case-insensitive, over id, question, answer and reasons
    assert opened.visible_ids() == ["ship-12"]
    page.fill("#search", "http 500")
    assert opened.visible_ids() == ["ship-12"]
    page.select_option("#filter-category", "")
    page.fill("#search", "pwned")
    assert [i[:9] for i in opened.visible_ids()] == ["refund-07"]
    page.fill("#search", "")
    assert opened.visible_ids() == everyone
    assert page.locator("#cases tr.case:visible").count() == 6


def test_case_details_open_with_everything(opened: Opened) -> None:
    row = opened.page.locator("#cases tr.case", has_text="ship-02")
    row.locator("summary").click()
    details = row.locator(".detail")
    text = details.inner_text()
    for expected in (
        "question of ship-02?",
        "answer of ship-02",
        "Refunds take 7 days.",
        "Shipping costs 5 EUR.",
        "reason for ship-02",
        "latency_ms 2600 > 2000",
    ):
        assert expected in text, expected
    assert details.locator("table.runs tbody tr").count() == 3
    assert details.locator("table.claims tbody tr").count() == 2


def test_ids_stay_on_one_line_and_a_case_rule_reads_as_a_count(browser: Any, tmp_path: Path) -> None:
    # 800 px wide (a reviewer's half screen): the case column shrinks to its narrowest, where `refund-07` used
    # to break after its hyphen.
    path = tmp_path / "pass.html"
    path.write_text(render_html(tolerant_pass_report(comparison=True)), encoding="utf-8")
    page = browser.new_page(viewport={"width": 800, "height": 900})
    try:
        page.goto(path.resolve().as_uri())
        boxes = page.eval_on_selector_all(
            "#cases tr.case td:first-child code",
            "els => els.map(e => [e.textContent, e.getClientRects().length, e.getBoundingClientRect().height])",
        )
        one_line = page.evaluate(
            "() => { const c = document.createElement('code'); c.textContent = 'x';"
            " document.querySelector('#cases tr.case td').appendChild(c);"
            " const h = c.getBoundingClientRect().height; c.remove(); return h; }"
        )
        assert [(i, lines, h) for i, lines, h in boxes] == [(i, 1, one_line) for i, _, _ in boxes]
        assert len(boxes) == 6
        assert page.locator("#verdict").inner_text() == "PASS"
        case_rule = page.locator("#rules tr.rule").first.locator("td").last
        assert case_rule.inner_text() == "1 of 6 cases failed"
        colours = page.evaluate(
            "() => [document.querySelector('#rules tr.rule td:last-child span'), document.querySelector('#verdict')]"
            ".map(e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor])"
        )
        verdict_colours = {"rgb(26, 127, 55)", "rgb(207, 34, 46)", "rgb(154, 103, 0)"}  # pass, fail, error
        assert not verdict_colours & set(colours[0])
        assert colours[1][1] == "rgb(26, 127, 55)"  # only the verdict is drawn as one
    finally:
        page.close()


def test_a_real_run_report_renders(browser: Any, example_rag_url: str, tmp_path: Path) -> None:
    config = ROOT / "examples" / "ragjudge.yml"
    html = tmp_path / "run.html"
    code = main(["run", "--config", str(config), "--endpoint", example_rag_url, "--html", str(html)])
    assert code == 0
    page = Opened(browser, html)
    try:
        assert page.console == [] and page.requests == [page.url]
        assert len(page.visible_ids()) == 43
        page.page.select_option("#filter-status", "fail")
        assert page.visible_ids() == ["cs-014", "cs-020", "cs-026", "cs-031", "cs-043"]
        page.page.screenshot(path=str(tmp_path / "run.png"), full_page=False)
    finally:
        page.page.close()


def _many_dimensions_report() -> Any:
    """Twelve judge dimensions and six criteria on every case: the charts that once ran past the page."""
    report = sample_report()
    cases = []
    for c in report.cases:
        judge = c.judge.model_copy(update={"scores": {f"dimension_{k:02d}": 1 + k % 5 for k in range(12)}})
        metrics = {**c.metrics, **{f"criteria.rule_{k}": 1.0 + k % 5 for k in range(6)}, "answer_correctness": 0.5}
        cases.append(c.model_copy(update={"judge": judge, "metrics": metrics}))
    return report.model_copy(update={"cases": cases})


@pytest.mark.parametrize("width", [1280, 800])
def test_every_chart_fits_the_page(browser: Any, tmp_path: Path, width: int) -> None:
    path = tmp_path / "report.html"
    path.write_text(render_html(_many_dimensions_report()), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(path.resolve().as_uri())
    right = page.eval_on_selector("main", "m => m.getBoundingClientRect().right")
    edges = page.eval_on_selector_all("main svg", "svgs => svgs.map(s => s.getBoundingClientRect().right)")
    assert len(edges) >= 12 + 6  # a chart per dimension and per criterion, at least
    assert max(edges) <= right + 0.5, (max(edges), right)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.close()


def test_the_page_opens_with_the_headline(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(render_html(sample_report()), encoding="utf-8")
    opened = Opened(browser, path)
    headline = opened.page.locator("#headline")
    assert headline.inner_text() == "Blocked by pass_rate 0.667 < 0.9. 2 more cases must pass."
    # Right under the verdict: the first text a reader meets after it, before the counts and the judge's name.
    assert opened.page.eval_on_selector("h1", "h => h.nextElementSibling.id") == "headline"
    title, meta = opened.page.locator("h1").bounding_box(), opened.page.locator("#meta").bounding_box()
    assert title["y"] + title["height"] <= headline.bounding_box()["y"] < meta["y"]
    opened.page.close()


def _long_names_report() -> Any:
    """A 68-character hash id, a long category, and cases a reviewer reads by their change."""
    report = sample_report(comparison=True)
    cases = []
    for k, c in enumerate(report.cases):
        if k == 0:
            category = "Returns, refunds and exchanges for international orders (EU)"
            c = c.model_copy(update={"id": "case-" + "f3a9" * 16, "category": category})
        cases.append(c)
    return report.model_copy(update={"cases": cases})


@pytest.mark.parametrize("width", [1280, 800])
def test_long_ids_and_categories_stay_inside_the_page(browser: Any, tmp_path: Path, width: int) -> None:
    path = tmp_path / "report.html"
    path.write_text(render_html(_long_names_report()), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(path.resolve().as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # Below 1000 px the case table is a list: no header row, each case a block as wide as the page.
        header_shown = page.eval_on_selector("#cases thead", "h => getComputedStyle(h).display !== 'none'")
        assert header_shown is (width >= 1000)
        # The long category is cut with an ellipsis beside its bar, and whole in its title.
        label = page.locator("#category-chart text").first
        assert label.evaluate("t => t.firstChild.textContent") == "Returns, refunds an…"
        assert label.locator("title").text_content() == "Returns, refunds and exchanges for international orders (EU)"
        # In the list, each figure says what it is (the table's header is gone).
        latencies = page.eval_on_selector_all(
            "#cases tr.case td.latency",
            "tds => tds.map(td => { const part = p => getComputedStyle(td, p).content.replace(/^\"|\"$/g, '');"
            " const [b, a] = [part('::before'), part('::after')];"
            " return (b === 'none' ? '' : b) + td.innerText.trim() + (a === 'none' ? '' : a); })",
        )
        if width < 1000:
            assert "latency 910 ms" in latencies and "latency n/a" in latencies
        # The filters still hide rows in the list.
        page.select_option("#filter-status", "fail")
        shown = page.eval_on_selector_all(
            "#cases tr.case", "rows => rows.filter(r => getComputedStyle(r).display !== 'none').length"
        )
        assert shown == sum(c.status == "fail" for c in _long_names_report().cases)
    finally:
        page.close()


def test_every_change_badge_reads_white_on_a_colour(browser: Any, tmp_path: Path) -> None:
    # judge_split and pending_review once had no colour of their own: white words on the white page.
    path = tmp_path / "changes.html"
    path.write_text(render_html(every_change_report()), encoding="utf-8")
    opened = Opened(browser, path)
    try:
        badges = opened.page.eval_on_selector_all(
            "#cases span.badge[title^='change: ']",
            "bs => bs.map(b => [b.title, b.innerText, getComputedStyle(b).color, getComputedStyle(b).backgroundColor])",
        )
        assert len(badges) == 11
        for title, words, colour, background in badges:
            assert colour == "rgb(255, 255, 255)", title
            assert background not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"), (title, words, background)
        assert ("change: judge_split", "judge undecided") in [(t, w) for t, w, _, _ in badges]
        assert ("change: pending_review", "pending review") in [(t, w) for t, w, _, _ in badges]
        # The grey behind every badge is the default only: a status keeps the verdict's colours.
        statuses = opened.page.eval_on_selector_all(
            "#cases span.badge[class*=' s-']", "bs => bs.map(b => [b.innerText, getComputedStyle(b).backgroundColor])"
        )
        assert set(map(tuple, statuses)) == {
            ("pass", "rgb(26, 127, 55)"),
            ("fail", "rgb(207, 34, 46)"),
            ("error", "rgb(154, 103, 0)"),
        }
    finally:
        opened.page.close()


def _long_deltas_report() -> Any:
    """The long names' report with a criterion's long name, figures of many digits and a long reason."""
    report = _long_names_report()
    assert report.comparison is not None
    first = report.comparison.deltas[1]
    long = first.model_copy(
        update={
            "metric": "criteria.cites_the_returns_policy_section_by_number",
            "base": 0.00001,
            "now": 2500.0,
            "delta": 2499.99999,
            "ci_low": -0.000012,
            "ci_high": 12500.0,
            "p_value": 0.000001,
            "reason": "the judge changed (openai/gpt-4o-mini-2024-07-18 -> anthropic/claude-3-5-sonnet-20241022)",
            "comparable": False,
        }
    )
    deltas = [*report.comparison.deltas, long]
    return report.model_copy(update={"comparison": report.comparison.model_copy(update={"deltas": deltas})})


@pytest.mark.parametrize("width", [1280, 800])
def test_the_deltas_read_at_any_width(browser: Any, tmp_path: Path, width: int) -> None:
    path = tmp_path / "deltas.html"
    path.write_text(render_html(_long_deltas_report()), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(path.resolve().as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # Every figure on one line: `0.03` once broke into a digit a line to fit 800 px.
        lines = page.eval_on_selector_all(
            "#deltas td.num",
            "tds => tds.map(td => { const r = document.createRange(); r.selectNodeContents(td);"
            " return [td.innerText, r.getClientRects().length]; })",
        )
        assert len(lines) == 4 * 5 and all(n == 1 for _, n in lines), lines
        charts = page.eval_on_selector_all(
            "#deltas svg.delta-chart", "s => s.map(e => e.getBoundingClientRect().width)"
        )
        assert charts == [240, 240, 240, 240]  # drawn at its size, never squeezed
        header_shown = page.eval_on_selector("#deltas thead", "h => getComputedStyle(h).display !== 'none'")
        assert header_shown is (width >= 1000)
        if width < 1000:
            # The header is gone: each figure says what it is.
            p_label = page.eval_on_selector("#deltas td.p", "td => getComputedStyle(td, '::before').content")
            assert p_label == '"p "'
            metric = page.locator("#deltas td.metric").nth(3).bounding_box()
            assert metric["width"] > width / 2  # the metric has a line of its own
    finally:
        page.close()


def _wide_labels_report() -> Any:
    """Categories as wide as they come (CJK, capital Ws, a long sentence) and a p95 threshold far off the axis."""
    report = _long_names_report()
    wide = ["配送と返品に関するよくある質問とその回答のまとめ", "W" * 30]
    cases = [c.model_copy(update={"category": wide[k]}) if k < 2 else c for k, c in enumerate(report.cases[1:])]
    rules = [r.model_copy(update={"threshold": 60000.0}) if r.metric == "p95_latency_ms" else r for r in report.rules]
    return report.model_copy(update={"cases": [report.cases[0], *cases], "rules": rules})


@pytest.mark.parametrize("width", [1280, 800])
def test_nothing_in_a_chart_is_clipped(browser: Any, tmp_path: Path, width: int) -> None:
    path = tmp_path / "charts.html"
    path.write_text(render_html(_wide_labels_report()), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(path.resolve().as_uri())
        # Every mark and every word of every chart inside its viewBox: what is outside is cut off.
        outside = page.eval_on_selector_all(
            "main svg",
            """svgs => svgs.flatMap(svg => { const v = svg.viewBox.baseVal;
                 return Array.from(svg.querySelectorAll('text, rect, line, circle')).map(e => [e, e.getBBox()])
                   .filter(([e, b]) => b.x < v.x - 0.5 || b.y < v.y - 0.5 || b.x + b.width > v.x + v.width + 0.5
                                       || b.y + b.height > v.y + v.height + 0.5)
                   .map(([e, b]) => [svg.id || svg.getAttribute('class'), e.tagName, e.textContent]); })""",
        )
        assert outside == []
        # The threshold beyond the axis is written inside the chart, not drawn at a value it is not.
        beyond = page.locator("#latency-chart #off-scale")
        assert beyond.evaluate("t => t.firstChild.textContent") == "threshold 60000 ms →"
        assert page.locator("#latency-chart line.mark-threshold").count() == 0
        # A category's label ends before its bar begins (x 140), however wide its script.
        ends = page.eval_on_selector_all(
            "#category-chart text:not(.count)", "ts => ts.map(t => [t.textContent, t.getBBox().x + t.getBBox().width])"
        )
        assert len(ends) == 4 and all(end < 140 for _, end in ends), ends
    finally:
        page.close()


def _many_failing_report(n: int) -> Any:
    """The long deltas' report with `n` more failing cases, their categories wide and long, their changes various."""
    report = _long_deltas_report()
    wide = ["refunds", "Returns, refunds and exchanges for international orders (EU)", "配送と返品に関するよくある質問"]
    changes = ["regression", "judge_split", "pending_review", "still_failing", "new"]
    more = [
        report.cases[0].model_validate(
            case(f"cs-{k:04d}", "fail", wide[k % 3], "hard", 900.0 + 37 * k, ("faithfulness 0.500 < 0.8",))
            | {"change": changes[k % 5]}
        )
        for k in range(n)
    ]
    return report.model_copy(update={"cases": [*report.cases, *more]})


def test_three_hundred_failing_cases_read_at_800_px(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "many.html"
    path.write_text(render_html(_many_failing_report(300)), encoding="utf-8")
    page = browser.new_page(viewport={"width": 800, "height": 900})
    try:
        page.goto(path.resolve().as_uri())
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        rights = page.eval_on_selector_all(
            "#cases tr.case, #deltas tr.delta", "rows => rows.map(r => r.getBoundingClientRect().right)"
        )
        assert len(rights) == 306 + 4 and max(rights) <= 800
        assert page.eval_on_selector("#cases thead", "h => getComputedStyle(h).display") == "none"
        assert page.locator("#shown-count").inner_text() == "306 of 306 cases shown"
    finally:
        page.close()
