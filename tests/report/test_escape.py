"""Escaping untrusted text for the comment: inert in Markdown, in table cells and inside raw HTML."""

from __future__ import annotations

import html
import re

import pytest

from ragjudge.report.escape import code_id, html_text, inline


def markdown_text(escaped: str) -> str:
    """What a reader sees: backslash escapes and HTML entities resolved."""
    # The zero-width space after `@` is what keeps GitHub from mentioning anyone; it reads as nothing.
    return html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", escaped)).replace("\u200b", "")


HOSTILE = [
    "@octocat please look",
    "<img src=x onerror=alert(1)>",
    "a | b | c",
    "`code` and ```fence```",
    "{{ 7*7 }} {% raw %}",
    "<!-- hidden -->",
    "</details></summary>",
    "[link](http://x) ![img](http://x/y.png)",
    "*bold* _em_ ~~strike~~",
    "back\\slash",
    "&amp; &#64;octocat",
    "# heading",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@octocat", "@\u200boctocat"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("a|b", "a\\|b"),
        ("`x`", "\\`x\\`"),
        ("{{ 7*7 }}", "{{ 7\\*7 }}"),
        ("<!-- -->", "&lt;!-- --&gt;"),
        ("</details>", "&lt;/details&gt;"),
        ("[link](http://x)", "\\[link\\](http://x)"),
        ("a & b", "a &amp; b"),
        ("_a_ ~b~", "\\_a\\_ \\~b\\~"),
        ("back\\slash", "back\\\\slash"),
        ("# Title", "\\# Title"),
        ("- item", "\\- item"),
        ("+ item", "\\+ item"),
        ("1. item", "1\\. item"),
        ("12) item", "12\\) item"),
        ("-5 degrees", "-5 degrees"),
        ("3.5 days", "3.5 days"),
        ("plain words", "plain words"),
    ],
)
def test_inline_escapes_exactly(text: str, expected: str) -> None:
    assert inline(text) == expected


@pytest.mark.parametrize("text", HOSTILE)
def test_inline_reads_back_as_the_original_text(text: str) -> None:
    assert markdown_text(inline(text)) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_inline_output_is_inert(text: str) -> None:
    out = inline(text)
    assert "<" not in out and ">" not in out
    assert re.search(r"@\w", out) is None
    assert re.search(r"(?<!\\)[|`\[\]*_~]", out) is None  # every Markdown metacharacter escaped


def test_inline_flattens_lines_so_nothing_can_start_a_block() -> None:
    assert inline("line one\n\n| a | b |\n---\r\n# head\u2028tail") == "line one \\| a \\| b \\| --- \\# head tail"


def test_inline_limits_length_before_escaping() -> None:
    assert inline("x" * 500, limit=10) == "xxxxxxxxx…"
    assert inline("abc", limit=10) == "abc"
    assert inline("y" * 9 + " bcdef", limit=10) == "yyyyyyyyy…"


def test_inline_of_none_is_empty() -> None:
    assert inline(None) == ""


def test_code_id_is_a_code_element_with_inert_content() -> None:
    assert code_id("cs-001") == "<code>cs-001</code>"
    assert code_id("case_1") == "<code>case\\_1</code>"
    assert code_id("a|b`c") == "<code>a\\|b\\`c</code>"
    assert code_id("<img src=x>@x") == "<code>&lt;img src=x&gt;@\u200bx</code>"
    assert code_id("") == "<code>(none)</code>"
    assert code_id("  \n ") == "<code>(none)</code>"


def test_code_id_is_capped() -> None:
    assert markdown_text(code_id("y" * 300)) == "<code>" + "y" * 119 + "…</code>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("case_1", "case_1"),  # no Markdown escapes: they would show inside raw HTML
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("</summary></details>", "&lt;/summary&gt;&lt;/details&gt;"),
        ("@octocat", "@\u200boctocat"),
        ("\"quoted\" 'single' & more", "&quot;quoted&quot; &#39;single&#39; &amp; more"),
        ("two\n\nlines", "two lines"),  # a blank line would end the HTML block
    ],
)
def test_html_text(text: str, expected: str) -> None:
    assert html_text(text) == expected


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_reads_back_as_the_original_text(text: str) -> None:
    out = html_text(text)
    assert "<" not in out and re.search(r"@\w", out) is None
    assert html.unescape(out).replace("\u200b", "") == text


def test_issue_references_are_broken_so_nothing_is_cross_linked() -> None:
    assert inline("see #123 and org/repo#9") == "see \\#\u200b123 and org/repo\\#\u200b9"
    assert html_text("order #42") == "order #\u200b42"
    assert inline("# heading") == "\\# heading"
