"""`ragjudge run`: the gate."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from ragjudge.config import load_config
from ragjudge.errors import UsageError
from ragjudge.gate import GateRequest, exit_code_for, run_gate
from ragjudge.report.comment import render_comment
from ragjudge.report.model import Report, write_report


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="evaluate the endpoint against the case set and apply the gate")
    p.add_argument("--config", type=Path, help="config file (default: ./ragjudge.yml if present)")
    p.add_argument("--endpoint", help="endpoint URL (overrides endpoint.url)")
    p.add_argument("--cases", type=Path, nargs="+", metavar="FILE", help="case files (override `cases:`)")
    p.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    p.add_argument("--comment-file", type=Path, metavar="FILE", help="write the Markdown comment here")
    p.add_argument("--template", type=Path, metavar="FILE", help="Jinja template for the comment")
    p.add_argument("--log", type=Path, metavar="FILE", help="JSONL log of every endpoint and judge call")
    p.add_argument("--traces", type=Path, metavar="FILE", help="judge recorded traces (JSONL) instead of calling")
    p.add_argument("--sample", type=int, metavar="N", help="with --traces: judge a random sample of N traces")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="with --sample: the random seed (default 0)")
    p.set_defaults(handler=handle)


def print_summary(report: Report, out: TextIO) -> None:
    s = report.suite
    print(
        f"ragjudge: {report.verdict.upper()}: {s.passed}/{s.cases} cases passed, "
        f"{s.failed} failed, {s.errored} errored (judge: {report.judge_info.get('judge', '?')})",
        file=out,
    )
    for w in report.warnings:
        print(f"  warning: {w}", file=out)
    for rule in report.rules:
        if rule.scope == "suite":
            mark = "ok  " if rule.passed else "FAIL"
            print(f"  [{mark}] {rule.reason}", file=out)
    for case in report.cases:
        if case.status != "pass":
            print(f"  {case.id} {case.status}: " + "; ".join(case.failed_conditions), file=out)


def handle(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.sample is not None and (args.traces is None or args.sample < 1):
        raise UsageError("--sample N needs --traces FILE and N >= 1")
    request = GateRequest(
        config=config,
        endpoint=args.endpoint,
        cases=args.cases or (),
        log=args.log,
        traces=args.traces,
        sample=args.sample,
        seed=args.seed,
    )
    report = run_gate(request)
    return emit(report, args.report, args.comment_file, args.template or config.template)


def emit(report: Report, report_path: Path | None, comment_path: Path | None, template: Path | None) -> int:
    """Write the outputs and print the summary; the exit code follows the verdict."""
    if report_path is not None:
        write_report(report, report_path)
    if comment_path is not None:
        comment = render_comment(report, template, report_path=str(report_path) if report_path else None)
        comment_path.parent.mkdir(parents=True, exist_ok=True)
        comment_path.write_text(comment, encoding="utf-8")
    print_summary(report, sys.stdout)
    return int(exit_code_for(report.verdict))
