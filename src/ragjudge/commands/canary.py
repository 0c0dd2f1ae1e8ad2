"""`ragjudge canary`: promote, roll back, or say the data cannot tell yet.

Exit codes: 0 promote, 1 rollback, 4 inconclusive, 2 bad usage, config or feedback data,
3 could not evaluate (an arm never answered, the feedback source unreachable).
`--inconclusive-exit N` replaces the 4 (e.g. 0 where an inconclusive canary may proceed, as an
Argo Rollouts job metric, whose Job fails on any non-zero exit).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from ragjudge import masking
from ragjudge.canary.release import CanaryRequest, run_canary
from ragjudge.canary.report import CanaryReport, render_comment
from ragjudge.config.judge_overrides import with_judge_overrides
from ragjudge.config.loader import load_config
from ragjudge.errors import ExitCode
from ragjudge.outpaths import check_output_paths
from ragjudge.report.writing import write_report

_MARK = {"pass": "ok  ", "fail": "FAIL", "inconclusive": "??  "}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("canary", help="compare a canary with the stable version: promote, rollback or inconclusive")
    p.add_argument("--config", type=Path, help="config file (default: ./ragjudge.yml if present)")
    p.add_argument("--treatment", metavar="URL", help="the canary's endpoint URL (overrides canary.treatment)")
    p.add_argument("--control", metavar="URL", help="the stable endpoint URL (overrides canary.control)")
    p.add_argument("--feedback", type=Path, metavar="FILE", help="feedback counts JSON (overrides canary.feedback)")
    p.add_argument(
        "--inconclusive-exit",
        type=_exit_code,
        default=None,
        metavar="N",
        help="exit with N (0-255) instead of 4 when the verdict is inconclusive",
    )
    p.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    p.add_argument("--comment-file", type=Path, metavar="FILE", help="write the Markdown comment here")
    # The GitHub Action passes its judge-* inputs to every mode.
    p.add_argument("--judge-model", metavar="MODEL", help="judge model (overrides judge.model)")
    p.add_argument("--judge-base-url", metavar="URL", help="OpenAI-compatible base URL (overrides judge.base_url)")
    p.add_argument("--judge-api-key-env", metavar="VAR", help="read the judge API key from environment variable VAR")
    p.set_defaults(handler=handle)


def _exit_code(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f"an exit code is 0 to 255, not {value}")
    return value


def print_summary(report: CanaryReport, out: TextIO) -> None:
    mode = report.decision + (f", {report.confidence * 100:g}% intervals" if report.decision == "statistical" else "")
    print(f"ragjudge canary: {report.verdict.upper()} ({mode})", file=out)
    for reason in report.reasons:
        print(f"  reason: {reason}", file=out)
    for name, metric in report.metrics.items():
        print(f"  [{_MARK[metric.decision]}] {name}: {metric.reason}", file=out)
    for warning in report.warnings:
        print(f"  warning: {warning}", file=out)


def handle(args: argparse.Namespace) -> int:
    config = with_judge_overrides(
        load_config(args.config), args.judge_model, args.judge_base_url, args.judge_api_key_env
    )
    check_output_paths((("--report", args.report), ("--comment-file", args.comment_file)))
    outcome = run_canary(
        CanaryRequest(config=config, treatment=args.treatment, control=args.control, feedback=args.feedback)
    )
    if args.report is not None:
        write_report(outcome.report, args.report)
    if args.comment_file is not None:
        text = render_comment(outcome.report, report_path=str(args.report) if args.report else None)
        args.comment_file.parent.mkdir(parents=True, exist_ok=True)
        args.comment_file.write_text(masking.mask(text), encoding="utf-8")
    print_summary(outcome.report, sys.stdout)
    if outcome.exit_code == ExitCode.INCONCLUSIVE and args.inconclusive_exit is not None:
        return int(args.inconclusive_exit)
    return int(outcome.exit_code)
