"""What `run` and `merge` write: the JSON report, the comment, JUnit and HTML, and the summary on stdout.

Each renderer is imported only when its output is asked for, so a merge that writes only JSON loads no
template library.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ragjudge import masking
from ragjudge.errors import exit_code_for
from ragjudge.report.model import Report
from ragjudge.report.writing import write_report
from ragjudge.safetext import clean_text


def add_report_outputs(p: argparse.ArgumentParser) -> None:
    """The report formats read outside GitHub, shared by `run` and `merge`."""
    p.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report here (GitLab, Jenkins)")
    p.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained HTML report here")


def print_summary(report: Report, out: TextIO) -> None:
    """The headline first, then the counts, the warnings by kind, the rules and the failing cases (this change's
    first, those already failing on the baseline last)."""
    from ragjudge.report.bill import cost_words
    from ragjudge.report.changes import on_main_words
    from ragjudge.report.comment_view import reading_order
    from ragjudge.report.headline import headline_of
    from ragjudge.report.warning_kinds import by_kind

    s = report.suite
    sentence = (report.headline or headline_of(report)).sentence
    print(f"ragjudge: {report.verdict.upper()}: {sentence}", file=out)
    print(
        f"  {s.passed}/{s.cases} cases passed, {s.failed} failed, {s.errored} errored "
        f"(judge: {report.judge_info.name()})",
        file=out,
    )
    bill = cost_words(s)
    if bill:
        print(f"  cost: {bill}", file=out)
    for kind in by_kind([w for w in report.warnings if w != report.error_reason]):
        print(f"  warning: {kind.text()}", file=out)
    comparison = report.comparison
    if comparison is not None:
        for notice in comparison.notices:
            print(f"  notice: {notice}", file=out)
    rules = [r for r in report.rules if r.scope == "suite"] + (comparison.rules if comparison else [])
    on_main = on_main_words(report)
    for rule in rules:
        mark = "n/a " if rule.passed is None and rule.scope == "regression" else ("ok  " if rule.passed else "FAIL")
        also = on_main.get(rule.metric, "") if rule.scope == "suite" and rule.passed is False else ""
        print(f"  [{mark}] {rule.reason}{also}", file=out)
    for case in reading_order(report.cases):
        if case.status != "pass" or case.flaky:
            change = f" [{case.change}]" if case.change else ""
            runs = f" ({case.k_of_n})" if case.k_of_n else ""
            why = ": " + "; ".join(case.failed_conditions) if case.failed_conditions else ""
            print(f"  {case.id} {case.status}{change}{runs}{why}", file=out)


@dataclass(frozen=True)
class Outputs:
    """Where `run` and `merge` write what they found."""

    report: Path | None = None
    comment: Path | None = None
    template: Path | None = None
    """The comment's Jinja template (None: the built-in one)."""
    junit: Path | None = None
    html: Path | None = None
    run_url: str | None = None
    """The workflow run's page, when in GitHub Actions: the comment links it (and its artifacts, with `html`)."""

    def flags(self) -> tuple[tuple[str, Path | None], ...]:
        """Each output path with its flag, for `check_output_paths` before any work is done."""
        return (
            ("--report", self.report),
            ("--comment-file", self.comment),
            ("--junit", self.junit),
            ("--html", self.html),
        )


def emit(report: Report, out: Outputs) -> int:
    """Render every output, then write them and print the summary; the exit code follows the verdict.

    Nothing is written before all have rendered: a renderer that fails leaves no report behind that says `pass`.
    """
    texts: list[tuple[Path, str]] = []
    if out.comment is not None:
        from ragjudge.report.comment_view import links
        from ragjudge.report.markdown import render_comment  # imported late: Jinja is needed only here

        comment = render_comment(
            report,
            out.template,
            report_path=str(out.report) if out.report else None,
            links=links(out.run_url, html=out.html is not None),
        )
        texts.append((out.comment, comment))
    if out.junit is not None:
        from ragjudge.report.junit import render_junit

        texts.append((out.junit, render_junit(report)))
    if out.html is not None:
        from ragjudge.report.html import render_html

        texts.append((out.html, render_html(report)))
    if out.report is not None:
        write_report(report, out.report)
    for path, text in texts:
        write_text(path, text)
    print_summary(report, sys.stdout)
    if report.error_reason and report.shard is not None:
        # A shard's step passes once its report is written: its budget is a notice, the merge decides.
        shard = f"{report.shard.index}/{report.shard.count}"
        print(f"ragjudge: shard {shard}: {report.error_reason} (`ragjudge merge` gates the whole set)", file=sys.stderr)
    elif report.error_reason:
        print(f"ragjudge: error: {report.error_reason}", file=sys.stderr)
    return int(exit_code_for(report.verdict))


def write_text(path: Path, text: str) -> None:
    """An output people read (comment, JUnit, HTML), with every registered secret masked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Safe for UTF-8, XML and HTML whatever reached the renderer: no lone surrogate, no control character.
    path.write_text(clean_text(masking.mask(text)), encoding="utf-8")
