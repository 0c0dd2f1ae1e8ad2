"""The job summary: Markdown appended to `$GITHUB_STEP_SUMMARY`, under GitHub's 1 MiB per step.

It is the place for the full failing list: it uses the comment template with a limit
about sixteen times the comment's, so every failing case is listed where the PR
comment had to stop.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ragjudge import masking
from ragjudge.report.comment_view import links, run_url_of
from ragjudge.report.escape import code_id
from ragjudge.report.markdown import render_comment
from ragjudge.report.model import Report
from ragjudge.safetext import clean_text

MAX_SUMMARY_BYTES = 1_000_000
"""GitHub refuses a step summary over 1 MiB (1,048,576 bytes); stay under with room for the footer."""
_CUT = "\n\n…summary truncated to fit GitHub's 1 MiB limit: see the JSON report.\n"


def gate_summary(
    report: Report,
    report_path: str,
    notes: Sequence[str] = (),
    budget: int = MAX_SUMMARY_BYTES,
    html: bool = False,
) -> str:
    """The report as Markdown within `budget` UTF-8 bytes, footnotes (e.g. where the comment went) last. It
    opens with the headline, as the comment does; `html`: an HTML report was written (the artifacts are linked)."""
    run_links = links(run_url_of(os.environ), html)
    footer = _footer(report_path, notes)
    room = budget - len(footer.encode("utf-8"))
    limit = room  # characters; shrunk until the UTF-8 bytes fit too
    for _ in range(8):
        body = render_comment(report, None, limit=limit, report_path=report_path, links=run_links, in_summary=True)
        size = len(body.encode("utf-8"))
        if size <= room:
            return body + footer
        limit = max(1_000, int(limit * room / size * 0.97))
    return cap_bytes(body, room) + footer


def text_summary(text: str, report_path: str, notes: Sequence[str] = (), budget: int = MAX_SUMMARY_BYTES) -> str:
    """A summary from already-rendered Markdown (the canary and calibrate modes' own comment)."""
    footer = _footer(report_path, notes)
    return cap_bytes(text, budget - len(footer.encode("utf-8"))) + footer


def dry_run_summary(mode: str, plan: str, notes: Sequence[str] = (), budget: int = MAX_SUMMARY_BYTES) -> str:
    """A dry run's plan as printed, in a code block: no report was written, so no report line."""
    footer = "\n\n" + "\n".join(f"- {note}" for note in notes) + "\n" if notes else "\n"
    fenced = plan.strip().replace("```", "'''")
    text = f"## ragjudge {mode}: dry run (nothing was asked)\n\n```text\n{fenced}\n```"
    return cap_bytes(text, budget - len(footer.encode("utf-8"))) + footer


def cap_bytes(text: str, budget: int) -> str:
    """`text` cut to at most `budget` UTF-8 bytes, with a note, never splitting a character."""
    if len(text.encode("utf-8")) <= budget:
        return text
    keep = budget - len(_CUT.encode("utf-8"))
    return text.encode("utf-8")[: max(keep, 0)].decode("utf-8", errors="ignore") + _CUT


def _footer(report_path: str, notes: Sequence[str]) -> str:
    # The notes are ragjudge's own sentences (where the comment went), not data from the run.
    lines = [f"- JSON report: {code_id(report_path)} (the step's `report` output)"]
    lines.extend(f"- {note}" for note in notes)
    return "\n\n" + "\n".join(lines) + "\n"


def append_summary(path: Path | None, markdown: str) -> None:
    """Append to the step summary; outside Actions there is none."""
    if path is None:
        return
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        fh.write(clean_text(masking.mask(markdown)))
