"""The comment as a reviewer sees it at 300 failing cases: rendered as GitHub-flavoured Markdown (markdown-it-py)
in Debian's Chromium, with a stylesheet of GitHub's comment metrics (14 px text, line height 1.5, the table and
block margins), at 1280 and 800 px. The first step (each cause, the case that shows it, main's answer beside the
PR's and its repro line) is on the first two screens; the annotations name every cause; the HTML report of the
same run fits the window and names main by its commit."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from tests.report.example_pr import PrRun, run_pr

from ragjudge.github.annotations import gate_annotations

CHROMIUM = Path("/usr/bin/chromium")
SCREEN = 800
"""A laptop's window height, px."""
GITHUB_CSS = """
body { margin: 0; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.comment { max-width: 780px; margin: 0 auto; padding: 16px; }
table { border-collapse: collapse; display: block; overflow: auto; max-width: 100%; }
td, th { border: 1px solid #d1d9e0; padding: 6px 13px; }
p, table, blockquote, ul, details { margin: 0 0 16px; }
h2, h3 { margin: 24px 0 16px; line-height: 1.25; }
code { font-size: 85%; padding: .2em .4em; }
blockquote { padding: 0 1em; border-left: .25em solid #d1d9e0; }
"""

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = importlib.import_module("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"], headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def three_hundred(tmp_path_factory: pytest.TempPathFactory) -> PrRun:
    return run_pr(tmp_path_factory.mktemp("pr300"), 30)


def _page(browser: Any, path: Path, width: int) -> Any:
    page = browser.new_page(viewport={"width": width, "height": SCREEN})
    page.goto(path.resolve().as_uri())
    return page


@pytest.mark.parametrize("width", [1280, 800])
def test_every_cause_and_its_repro_line_come_before_any_row(
    browser: Any, three_hundred: PrRun, tmp_path: Path, width: int
) -> None:
    assert sum(c.status == "fail" for c in three_hundred.report.cases) == 150
    body = MarkdownIt("gfm-like").disable("linkify").render(three_hundred.comment)
    path = tmp_path / "comment.html"
    path.write_text(
        f"<!doctype html><meta charset=utf-8><style>{GITHUB_CSS}</style><div class=comment>{body}</div>",
        encoding="utf-8",
    )
    page = _page(browser, path, width)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        heading = page.locator("h3").first
        assert heading.inner_text() == "5 causes the failing cases share, each with one case that shows it"
        repro = page.eval_on_selector_all(
            "p", "ps => ps.filter(p => p.innerText.startsWith('Reproduce:')).map(p => p.getBoundingClientRect().bottom)"
        )
        mains = page.eval_on_selector_all(
            "table", "ts => ts.filter(t => t.innerText.includes('main@')).map(t => t.getBoundingClientRect().bottom)"
        )
        rows = page.locator("h3", has_text="Failing cases this change is about").bounding_box()
        # This change's three causes (each with main's answer beside the PR's) and the first already failing on
        # main: on the first two screens, before any per-case row.
        assert len(repro) >= 5 and max(repro[:4]) <= 2 * SCREEN, repro
        assert len(mains) >= 3 and max(mains[:3]) <= 2 * SCREEN, mains
        assert rows is not None and max(repro[:5]) < rows["y"]
        assert repro[0] <= SCREEN  # the first step is on screen one
        # A case id never wraps at its hyphen (`cs-` / `003-v01`): the `Case` heading keeps the column's room.
        wrapped = page.eval_on_selector_all(
            "table",
            "ts => ts.filter(t => t.rows[0].cells[0].innerText.startsWith('Case'))"
            ".flatMap(t => [...t.querySelectorAll('td:first-child code')])"
            ".filter(c => c.getClientRects().length > 1).map(c => c.innerText)",
        )
        assert wrapped == []
    finally:
        page.close()


def test_the_annotations_name_every_cause(three_hundred: PrRun) -> None:
    notes = gate_annotations(three_hundred.report)
    causes = [n for n in notes if n.title.endswith("and 29 more like it")]
    assert [n.title.split()[2] for n in causes] == [
        "cs-003-v01",
        "cs-009-v01",
        "cs-016-v01",
        "cs-014-v01",
        "cs-031-v01",
    ]
    assert causes[3].title == "ragjudge: case cs-014-v01 failed, as on main@feedbee, and 29 more like it"
    assert len(notes) == 2 + 5 + 1  # the two failed rules, the causes, the duplicate-question warning
    assert notes[0].message == "pass_rate 0.500 < 0.98, failing on main@feedbee too (0.800 there)"


@pytest.mark.parametrize("width", [1280, 800])
def test_the_html_report_of_300_failing_cases_fits_and_names_main(
    browser: Any, three_hundred: PrRun, tmp_path: Path, width: int
) -> None:
    path = tmp_path / "report.html"
    path.write_text(three_hundred.html, encoding="utf-8")
    page = _page(browser, path, width)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("#headline").bounding_box()["y"] < SCREEN / 2  # type: ignore[index]
        assert "Baseline main@feedbee, less than a day old." in page.content()
        assert "main.json" not in page.content()
    finally:
        page.close()
