"""Fuzzing the comment (issue 11): any string as answer, question, passage, id or reason renders inert.

Checked on every example: no live mention, issue reference or other autolink, no HTML tag but the
template's own, no table row with a cell too many, and the 60,000-character cap. `FUZZ_EXAMPLES`
examples a run (docs/guarantees.md states the count).
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.fakes.rag import error_result, make_case, make_trace, ok_result
from tests.fakes.reports import make_report
from tests.report.test_comment import ALLOWED_TAGS, cells, tables

from ragjudge.gate.scoring import score_case
from ragjudge.judge.interface import Claim, Judgement, Unscored
from ragjudge.report.markdown import COMMENT_LIMIT, render_comment
from ragjudge.rules import Rule

FUZZ_EXAMPLES = 150
FAITH = Rule("case", "faithfulness", ">=", 0.8)

# Text that goes for the weak spots: Markdown and HTML punctuation, mentions, references, SHAs, URLs,
# line breaks, zero-width and bidi characters, and plain Unicode.
_PIECES = st.sampled_from(
    [
        "@octocat",
        "@org/team",
        "#12",
        "GH-7",
        "o/r#3",
        "o/r@deadbeef1",
        "0123456789abcdef",
        "cafebabe",
        "https://github.com/o/r/pull/1",
        "www.github.com/o/r/issues/2",
        "<b>",
        "</details>",
        "<!--",
        "-->",
        "<img src=x onerror=alert(1)>",
        "|",
        "\\|",
        "`",
        "```",
        "[x](http://y)",
        "{{ 7*7 }}",
        "{% raw %}",
        "\n",
        "\r\n",
        "\t",
        "\u200b",
        "\u202e",
        "&amp;",
        "&#64;",
        "1.",
        "- ",
        "> ",
        "# ",
        "*",
        "_",
        "~",
    ]
)
UNTRUSTED = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=12).map("".join)

_MENTION = re.compile(r"@[A-Za-z0-9]")
_REFERENCE = re.compile(r"(?<!&)#\d|(?i:gh-\d)")  # `&#39;` is an entity, not a reference
_URL = re.compile(r"(?i)(?:https?://|www\.)\S*/(?:issues|pull|pulls|discussions|commit)/\w")
_SHA = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{7,}(?![0-9A-Za-z])")
_TAG = re.compile(r"<(/?[A-Za-z][A-Za-z0-9]*)")


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    case_id=UNTRUSTED,
    question=UNTRUSTED,
    answer=UNTRUSTED,
    passage=UNTRUSTED,
    reason=UNTRUSTED,
    warning=UNTRUSTED,
    error=UNTRUSTED,
)
def test_any_untrusted_text_renders_an_inert_comment(
    case_id: str, question: str, answer: str, passage: str, reason: str, warning: str, error: str
) -> None:
    trace = make_trace(answer or "x", ids=[case_id or "p"], passages={case_id or "p": passage}, confidence="high")
    judgement = Judgement(
        judge="gpt-4o-mini",
        faithfulness=0.0,
        claims=(Claim(answer, False, None, reason),),
        reasoning={"grounding": reason},
        unscored=(Unscored("judge.tone", reason),),
    )
    results = [
        score_case(
            make_case(case_id or "c", question or "q", must_mention=[passage]), ok_result(trace), judgement, [FAITH]
        ),
        score_case(make_case((case_id or "c") + "2", question or "q"), error_result(error), None, [FAITH]),
    ]
    comment = render_comment(make_report(results, [FAITH], warnings=[warning]), report_path="out/report.json")

    assert len(comment) <= COMMENT_LIMIT
    # The template's own text has none of these; any found came from the untrusted fields.
    assert not _MENTION.search(comment)
    assert not _REFERENCE.search(comment)
    assert not _URL.search(comment)
    assert not _SHA.search(comment)
    assert {tag.lower() for tag in _TAG.findall(comment)} <= ALLOWED_TAGS
    for table in tables(comment):
        assert {cells(row) for row in table} == {cells(table[0])}
