"""Every Markdown output rendered as GitHub renders it (GitHub-flavoured Markdown through markdown-it-py): no
literal backtick or backslash where code was meant, no double-escaped entity where a symbol was meant, inside
HTML blocks (`<details>`, `<sub>`) as much as outside them (issue 39: ``run \\`ragjudge dedupe\\` `` showed as
written)."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from tests.report.samples import sample_report

from ragjudge.canary.report import CanaryReport
from ragjudge.canary.report import render_comment as render_canary
from ragjudge.github.summary import gate_summary
from ragjudge.report.escape import prose
from ragjudge.report.markdown import render_comment
from ragjudge.report.model import Report

GFM = MarkdownIt("gfm-like").disable("linkify")
DEDUPE = (
    "case 'cs-003-v02' (cases/anchors.yaml:15) duplicates the question of case 'cs-003-v01' after normalisation; "
    "run `ragjudge dedupe` to drop it"
)
CALIBRATE = "judge calibration is missing: run `ragjudge calibrate --config my_config.yml --labels labels.jsonl`"


def _text(markdown: str) -> tuple[str, list[str]]:
    """(the rendered text outside `<code>`, the texts inside `<code>`)."""
    html = GFM.render(markdown)
    codes = re.findall(r"<code>(.*?)</code>", html, flags=re.S)
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", outside), codes


def _clean(markdown: str) -> list[str]:
    text, codes = _text(markdown)
    found = [bad for bad in ("`", "\\", "&amp;amp;", "&amp;lt;", "&amp;gt;", "&amp;#") if bad in text]
    found += [f"code: {c}" for c in codes if "\\" in c or "&amp;amp;" in c]
    return found


def _with_warnings(n_kinds: int) -> Report:
    report = sample_report(comparison=True)
    kinds = [DEDUPE, CALIBRATE, *(f"kind {k}: see `ragjudge probe`" for k in range(n_kinds))]
    return report.model_copy(update={"warnings": kinds})


@pytest.mark.parametrize("kinds", [0, 5])  # the warnings as quotes, then folded in a <details> block
def test_the_comment_renders_code_as_code(kinds: int) -> None:
    comment = render_comment(_with_warnings(kinds))
    assert _clean(comment) == []
    _, codes = _text(comment)
    assert "ragjudge dedupe" in codes
    assert "ragjudge calibrate --config my_config.yml --labels labels.jsonl" in codes


def test_the_job_summary_renders_code_as_code() -> None:
    summary = gate_summary(_with_warnings(5), "ragjudge-report.json")
    assert _clean(summary) == []
    assert "ragjudge-report.json" in _text(summary)[1]


def test_the_canary_comment_renders_code_as_code() -> None:
    arm = {
        "url": "http://canary/ask",
        "requests": 3,
        "ok": 3,
        "errors": 0,
        "error_rate": 0.0,
        "p50_latency_ms": 10.0,
        "p95_latency_ms": 11.0,
        "error_examples": [],
        "faithfulness": None,
        "scored": 0,
        "unscored": 0,
        "dislikes": None,
        "responses": None,
        "dislike_rate": None,
    }
    report = CanaryReport.model_validate(
        {
            "verdict": "inconclusive",
            "reasons": ["too few requests: raise `canary.sample`"],
            "metrics": {},
            "arms": {"treatment": arm, "control": {**arm, "url": "http://stable/ask"}},
            "decision": "statistical",
            "confidence": 0.95,
            "warnings": [DEDUPE],
        }
    )
    comment = render_canary(report)
    assert _clean(comment) == []
    assert {"ragjudge dedupe", "canary.sample"} <= set(_text(comment)[1])


def test_prose_quotes_code_as_code_and_keeps_the_rest_inert() -> None:
    assert prose("run `ragjudge dedupe` on a_b") == "run <code>ragjudge dedupe</code> on a\\_b"
    assert prose("`<img src=x>`, @octo") == "<code>&lt;img src=x&gt;</code>, @\u200bocto"
    assert prose("a lone ` stays escaped") == "a lone \\` stays escaped"
    assert prose("x `a_b`", html=True) == "x <code>a_b</code>"
