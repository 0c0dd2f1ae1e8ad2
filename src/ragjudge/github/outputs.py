"""Step outputs, appended to `$GITHUB_OUTPUT` in the runner's heredoc format.

Every value is written as `name<<DELIMITER` / value / `DELIMITER` with a random
delimiter, as @actions/core does, so a multi-line value (or one that an endpoint
influenced) cannot end early and set another output.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragjudge import masking
from ragjudge.metrics.names import FAITHFULNESS, P95_LATENCY_MS, PASS_RATE, REJECTION_ACCURACY
from ragjudge.safetext import clean_text


def format_outputs(values: Mapping[str, str]) -> str:
    chunks = []
    for name, raw in values.items():
        value = clean_text(masking.mask(raw))
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        if delimiter in name or delimiter in value:  # a UUID collision: refuse rather than corrupt
            raise ValueError(f"output {name!r}: the value contains the delimiter")
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(chunks)


def write_outputs(path: Path | None, values: Mapping[str, str]) -> None:
    """Append the outputs; without `$GITHUB_OUTPUT` (outside Actions) there is nowhere to put them."""
    if path is None:
        return
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        fh.write(format_outputs(values))


OUTPUT_NAMES = (
    "verdict",
    "passed",
    "report",
    "failed-cases",
    "errored-cases",
    "failed-case-ids",
    "pass-rate",
    FAITHFULNESS,
    "rejection-accuracy",
    "p95-latency-ms",
    "comment-url",
)


_BREAK = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def step_outputs(data: Mapping[str, Any] | None, passed: bool, report_path: str, comment_url: str) -> dict[str, str]:
    """The action's outputs from a report's JSON (any mode's); what a report lacks is an empty string.

    A canary report has no suite block: its treatment arm's faithfulness and p95 latency are used.

    `failed-case-ids` lists failing and errored case ids, one per line.
    """
    report = data or {}
    suite: Mapping[str, Any] = report["suite"] if isinstance(report.get("suite"), dict) else _treatment(report)
    cases: list[Any] = report["cases"] if isinstance(report.get("cases"), list) else []
    bad = [
        # A report read back may come from anywhere: an id holding a line break is escaped, never several ids.
        _one_line(str(c.get("id")))
        for c in cases
        if isinstance(c, dict) and c.get("status") in ("fail", "error") and c.get("review") != "pending"
    ]
    values = {
        "verdict": str(report.get("verdict") or "error"),
        "passed": "true" if passed else "false",
        "report": report_path,
        "failed-cases": _number(suite.get("failed")),
        "errored-cases": _number(suite.get("errored")),
        "failed-case-ids": "\n".join(bad),
        "pass-rate": _number(suite.get(PASS_RATE)),
        FAITHFULNESS: _number(suite.get(FAITHFULNESS)),
        "rejection-accuracy": _number(suite.get(REJECTION_ACCURACY)),
        "p95-latency-ms": _number(suite.get(P95_LATENCY_MS), 1),
        "comment-url": comment_url,
    }
    assert tuple(values) == OUTPUT_NAMES
    return values


def _one_line(text: str) -> str:
    return _BREAK.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def _treatment(report: Mapping[str, Any]) -> dict[str, Any]:
    """A canary report's figures for the canary (treatment) arm, under the gate's names."""
    metrics = report.get("metrics")
    if not isinstance(metrics, dict):
        return {}
    return {name: m.get("treatment") for name, m in metrics.items() if isinstance(m, dict)}


def _number(value: Any, digits: int = 4) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    if isinstance(value, int):
        return str(value)
    return str(round(value, digits))
