"""The comment says what changed: the alert under the headline, the regressions, fixed and flaky cases, the deltas."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.fakes.reports import C, report

from ragjudge.compare import compare_with_baseline
from ragjudge.config.loader import parse_config
from ragjudge.report.changes import alert, delta_rows
from ragjudge.report.markdown import render_comment
from ragjudge.report.model import Report

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def compared(now: list[C], base: list[C], **gate: Any) -> Report:
    config = parse_config({"gate": gate}, "t", Path("."))
    return compare_with_baseline(report(now), report(base), config, now=NOW)


def text(body: str) -> str:
    return body.replace("\u200b", "")


def test_note_when_nothing_got_worse() -> None:
    result = compared([C("a"), C("b")], [C("a"), C("b", "fail")])
    found = alert(result)
    assert found is not None
    assert text(found.markdown()) == "> [!NOTE]\n> Against main@0123456 (3 days old): 1 fixed, 1 still passing"
    body = render_comment(result)
    assert "\n\n> [!NOTE]\n> Against main@" in body
    assert "**Fixed** (failed on main@\u200b012345\u200b6, pass now): <code>b</code>" in body


def test_note_when_the_baseline_was_not_found() -> None:
    missing = report([C("a")]).model_copy(
        update={"warnings": ["no baseline: artifacts/main.json not found; the gate applied the absolute rules only"]}
    )
    found = alert(missing)
    assert found is not None
    assert text(found.markdown()) == (
        "> [!NOTE]\n> No baseline was compared: artifacts/main.json not found; the gate applied the absolute rules only"
    )
    lines = render_comment(missing).splitlines()
    assert lines[:3] == ["## ✅ ragjudge: PASS", "", "**1 of 1 cases pass and every rule holds.**"]
    assert "> [!NOTE]" in lines


def test_no_alert_when_no_baseline_was_asked_for() -> None:
    assert alert(report([C("a")])) is None
    assert "> [!" not in render_comment(report([C("a")]))


def test_warning_for_flaky_cases_and_notices() -> None:
    result = compared([C("a", flaky=True), C("b"), C("new")], [C("a"), C("b"), C("gone")])
    found = alert(result)
    assert found is not None and found.kind == "WARNING"
    assert text(found.markdown()).splitlines() == [
        "> [!WARNING]",
        "> Against main@0123456 (3 days old): 1 new, 1 removed, 1 flaky, 1 still passing; flaky: a (1 of 2 passed)",
        "> - the case set changed: compared on the 2 case(s) in both reports; new: new; removed: gone",
    ]
    body = text(render_comment(result))
    assert "### Flaky: passed only after repeats (not blocking)" in body
    assert "| <code>a</code> | 1 of 2 passed | x |" in body


def test_caution_names_the_regressions_and_the_failed_delta_rules() -> None:
    base = [C(f"c{i:02d}") for i in range(40)]
    now = [C(f"c{i:02d}", "fail" if i < 12 else "pass") for i in range(40)]
    result = compared(now, base, regression={"newly_failing": "<= 0", "pass_rate_delta": ">= -0.02"})
    found = alert(result)
    assert found is not None and found.kind == "CAUTION"
    sentence = text(found.sentence)
    assert sentence == (
        "Against main@0123456 (3 days old): 12 regressions, 28 still passing; "
        "pass\\_rate\\_delta -0.300 &lt; -0.020, significant (p &lt; 0.001, below 0.05)"
    )
    # The headline names them, and the rule the delta broke.
    assert result.headline is None  # worked out by run and merge, or when a saved report is rendered
    first = text(render_comment(result)).splitlines()[2]
    assert first == (
        "**Blocked by 12 regressions (c00, c01, c02, c03, c04 and 7 more); pass\\_rate\\_delta -0.300 &lt; -0.020, "
        "significant (p &lt; 0.001, below 0.05).**"
    )
    # No case changed status, but faithfulness dropped everywhere: worse without a regression.
    faithful = [C(f"c{i:02d}", faithfulness=1.0) for i in range(40)]
    drifted = [C(f"c{i:02d}", faithfulness=0.8) for i in range(40)]
    only_delta = compared(drifted, faithful, regression={"newly_failing": "<= 0", "faithfulness_delta": ">= -0.02"})
    found = alert(only_delta)
    assert found is not None and found.kind == "CAUTION"
    assert text(found.sentence) == (
        "Against main@0123456 (3 days old): 40 still passing; faithfulness\\_delta -0.200 &lt; -0.020, significant "
        "(p &lt; 0.001, below 0.05)"
    )


def test_delta_rows_say_significance_in_words() -> None:
    base = [C(f"c{i}", latency=100.0 + i, faithfulness=1.0) for i in range(40)]
    now = [C(f"c{i}", latency=2 * (100.0 + i), faithfulness=1.0 if i else 0.5) for i in range(40)]
    rows = delta_rows(compared(now, base))
    assert rows == [
        {
            "metric": "pass_rate",
            "base": "1.000",
            "now": "1.000",
            "moved": "0 / 0",
            "delta": "= +0.000",
            "interval": "+0.000 to +0.000",
            "p": "1.000",
            "verdict": "not significant",
        },
        {
            "metric": "faithfulness",
            "base": "1.000",
            "now": "0.988",
            "moved": "0 / 1",
            "delta": "▼ -0.013",
            "interval": "-0.037 to +0.000",
            "p": "1.000",
            "verdict": "not significant",
        },
        {
            "metric": "p95_latency_ms",
            "base": "137 ms",
            "now": "274 ms",
            "moved": "0 / 40",
            "delta": "▲ 2.00×",
            "interval": "2.00× to 2.00×",
            "p": "—",
            "verdict": "significant",
        },
    ]


def test_hostile_case_ids_stay_inert() -> None:
    evil = "evil|<img src=x onerror=alert(1)>@octocat #12"
    result = compared([C(evil, "fail")], [C(evil)])
    body = render_comment(result)
    assert "<img" not in body and "@octocat" not in body and "#12" not in body
    first = body.splitlines()[2]
    assert first == "**Blocked by 1 regression (evil\\|&lt;img src=x onerror=alert(1)&gt;@\u200boctocat \\#\u200b12).**"
    row = next(line for line in body.splitlines() if line.startswith("| <code>evil"))
    assert row.count(" | ") == 3  # four cells (case, status, change, condition): the id's pipe is escaped


def test_many_regressions_stay_under_the_cap_and_are_counted() -> None:
    base = [C(f"case-{i:04d}") for i in range(1200)]
    now = [C(f"case-{i:04d}", "fail", conditions=[f"failed because {'x' * 150} {i}"]) for i in range(1200)]
    body = render_comment(compared(now, base), limit=60_000)
    assert len(body) <= 60_000
    shown = len(re.findall(r"^\| <code>case-\d{4}</code> \| fail \| regression \|", body, flags=re.M))
    hidden = re.search(r"…and (\d+) more failing or errored case\(s\) not shown here", body)
    assert hidden is not None and shown > 0 and shown + int(hidden.group(1)) == 1200
    lines = text(body).splitlines()
    ids = "case-0000, case-0001, case-0002, case-0003, case-0004 and 1195 more"
    cause = "failed because " + "x" * 150 + " …"
    # Most failing cases share one condition: the headline names it, so the cause is in the first lines.
    assert lines[2] == f"**Blocked by 1200 regressions ({ids}). All 1200 failing cases share one cause: {cause}.**"
    # One condition, differing only in its numbers: one cause, above the rows, each row keeping its own text.
    assert f"**{cause}** · 1200 cases, all regressions: <code>case-0000</code>, " in body
    assert body.index("**" + cause) < body.index("| <code>case-0000</code> | fail | regression | failed because")
