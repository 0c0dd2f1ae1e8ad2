"""The canary comment: warnings by kind, paths relative to the workspace."""

from __future__ import annotations

from typing import Any

import pytest

from ragjudge.canary.report import CanaryReport, render_comment


def _arm(url: str) -> dict[str, Any]:
    return {
        "url": url,
        "requests": 43,
        "ok": 43,
        "errors": 0,
        "error_examples": [],
        "p50_latency_ms": 10.0,
        "p95_latency_ms": 11.0,
        "faithfulness": None,
        "scored": 0,
        "unscored": 0,
        "dislikes": None,
        "responses": None,
        "dislike_rate": None,
    }


def test_fifty_eight_warnings_of_one_kind_are_one_line_with_paths_in_the_workspace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warnings = [
        f"case 'cs-{i:03d}' (/home/runner/work/shop/shop/cases/canary.yaml:{i * 9}): category 'oos' looks like "
        "out-of-scope but is not a recognised spelling"
        for i in range(58)
    ]
    report = CanaryReport.model_validate(
        {
            "verdict": "inconclusive",
            "reasons": [],
            "metrics": {},
            "arms": {"treatment": _arm("http://canary/ask"), "control": _arm("http://stable/ask")},
            "decision": "statistical",
            "confidence": 0.95,
            "warnings": warnings,
        }
    )
    monkeypatch.setenv("GITHUB_WORKSPACE", "/home/runner/work/shop/shop")
    lines = render_comment(report).splitlines()
    shown = [line for line in lines if line.startswith("> ⚠️")]
    assert shown == [
        "> ⚠️ case 'cs-000' (cases/canary.yaml:0): category 'oos' looks like out-of-scope but is not a recognised "
        "spelling (and 57 more like it)"
    ]
    compared = (
        "Compared: the treatment <code>http://canary/ask</code> against the control <code>http://stable/ask</code>."
    )
    assert compared in lines
