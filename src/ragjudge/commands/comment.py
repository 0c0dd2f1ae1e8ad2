"""`ragjudge comment`: render (and, inside GitHub Actions, post) the comment from a saved report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ragjudge.report.comment import render_comment
from ragjudge.report.model import load_report


def add_parser(sub: Any) -> None:
    p = sub.add_parser("comment", help="render the PR comment from a JSON report")
    p.add_argument("--report", type=Path, required=True, metavar="FILE", help="report written by `run --report`")
    p.add_argument("--template", type=Path, metavar="FILE", help="Jinja template for the comment")
    p.add_argument("--comment-file", type=Path, metavar="FILE", help="write the comment here (default: stdout)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    report = load_report(args.report)
    text = render_comment(report, args.template, report_path=str(args.report))
    if args.comment_file:
        args.comment_file.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
