"""`ragjudge merge`: the reports of a sharded run become one report, gated once."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ragjudge.outpaths import check_output_paths
from ragjudge.report.comment_view import run_url_of
from ragjudge.report.emit import Outputs, add_report_outputs, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("merge", help="merge the reports of `run --shard i/n` into one and apply the rules once")
    p.add_argument("reports", type=Path, nargs="+", metavar="REPORT", help="every shard's JSON report")
    p.add_argument(
        "--config",
        type=Path,
        help="config file (default: ./ragjudge.yml if present): the comment template, baseline and regression rules",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="compare the merged report with this report from main (overrides baseline.report); a missing file "
        "is a warning",
    )
    p.add_argument("--report", type=Path, metavar="FILE", help="write the merged JSON report here")
    p.add_argument("--comment-file", type=Path, metavar="FILE", help="write the Markdown comment here")
    p.add_argument("--template", type=Path, metavar="FILE", help="Jinja template for the comment")
    add_report_outputs(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ragjudge.compare import baseline_for, compare_with_baseline, regression_rules
    from ragjudge.config.loader import load_config
    from ragjudge.gate.merge_shards import ShardReport, merge_reports, shard_name
    from ragjudge.gate.spending import merged_costs
    from ragjudge.report.headline import with_headline
    from ragjudge.report.reading import load_report

    config = load_config(args.config)
    regression_rules(config)  # bad regression rules are exit 2 before anything is read
    template = args.template or config.template
    if args.comment_file is not None:
        from ragjudge.report.markdown import check_template  # imported here: Jinja only for a comment

        check_template(template)
    outputs = Outputs(args.report, args.comment_file, template, args.junit, args.html, run_url_of(os.environ))
    check_output_paths(outputs.flags())
    parts = [ShardReport(path, load_report(path)) for path in args.reports]
    # The costs and budgets as the shards knew them: unknown stays unknown, and each shard's budget is listed.
    report = merged_costs(merge_reports(parts, config.gate.max_error_rate), [(shard_name(p), p.report) for p in parts])
    # The same comparison as `run --baseline`, once, over the whole merged set.
    warnings: list[str] = []
    baseline = baseline_for(args.baseline or config.baseline.report, config.gate.regression is not None, warnings)
    report.warnings.extend(warnings)
    if baseline is not None:
        report = compare_with_baseline(report, baseline.report, config, baseline_path=baseline.path)
    return emit(with_headline(report), outputs)
