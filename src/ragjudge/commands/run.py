"""`ragjudge run`: the gate."""

from __future__ import annotations

import argparse
import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragjudge.compare import regression_rules
from ragjudge.config.judge_overrides import with_judge_overrides
from ragjudge.config.loader import load_config
from ragjudge.config.model import Config
from ragjudge.errors import UsageError
from ragjudge.gate.dry_run import describe, plan_run
from ragjudge.gate.evaluation import GateRequest, case_set_of, check_criteria, gate_rules, run_gate
from ragjudge.gate.shard import parse_shard
from ragjudge.outpaths import check_output_paths
from ragjudge.report.comment_view import run_url_of
from ragjudge.report.emit import Outputs, add_report_outputs, emit
from ragjudge.report.markdown import check_template, compiled


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="evaluate the endpoint against the case set and apply the gate")
    p.add_argument("--config", type=Path, help="config file (default: ./ragjudge.yml if present)")
    p.add_argument("--endpoint", help="endpoint URL (overrides endpoint.url)")
    p.add_argument("--cases", type=Path, nargs="+", metavar="FILE", help="case files (override `cases:`)")
    p.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    p.add_argument("--comment-file", type=Path, metavar="FILE", help="write the Markdown comment here")
    p.add_argument("--template", type=Path, metavar="FILE", help="Jinja template for the comment")
    add_report_outputs(p)
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="evaluate only shard I of N (a stable partition by a hash of the case id); the step exits 0 "
        "once its report is written: `ragjudge merge` gates the whole set",
    )
    p.add_argument("--log", type=Path, metavar="FILE", help="JSONL log of every endpoint and judge call")
    p.add_argument(
        "--log-bodies",
        action="store_true",
        help="with --log: keep every reply body too (truncated to endpoint.max_log_body_bytes, secrets masked)",
    )
    p.add_argument("--traces", type=Path, metavar="FILE", help="judge recorded traces (JSONL) instead of calling")
    p.add_argument("--sample", type=int, metavar="N", help="with --traces: judge a random sample of N traces")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="with --sample: the random seed (default 0)")
    p.add_argument(
        "--bias-check",
        type=int,
        default=0,
        metavar="N",
        help="spend N extra evidence-judge calls on a position swap (sampled cases' passages reversed)",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="compare with this report from main (overrides baseline.report); a missing file is a notice",
    )
    p.add_argument(
        "--repeat",
        type=parse_repeat,
        metavar="MAX/PASS_AT",
        help="re-run a failing case up to MAX runs until PASS_AT of them pass (overrides `repeat`; e.g. 3/2)",
    )
    p.add_argument(
        "--rejudge",
        type=int,
        metavar="N",
        help="judge the reply of a case failing on a judge-decided condition N more times, no endpoint call "
        "(overrides judge.rejudge; 0 to 10)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="read the config and the cases, ask nothing, and print what the run would ask and cost",
    )
    p.add_argument("--judge-model", metavar="MODEL", help="judge model (overrides judge.model)")
    p.add_argument("--judge-base-url", metavar="URL", help="OpenAI-compatible base URL (overrides judge.base_url)")
    p.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="read the judge API key from environment variable VAR (overrides judge.api_key; "
        "the key itself never goes on a command line). Without it and without judge.api_key, "
        "OPENAI_API_KEY is used when set",
    )
    p.set_defaults(handler=handle)


def parse_repeat(text: str) -> tuple[int, int]:
    """`3/2` -> (3, 2); `3` -> (3, 1)."""
    match = re.fullmatch(r"(\d{1,2})(?:/(\d{1,2}))?", text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not MAX/PASS_AT, e.g. 3/2")
    max_runs, pass_at = int(match.group(1)), int(match.group(2) or 1)
    if not 1 <= pass_at <= max_runs <= 10:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 <= PASS_AT <= MAX <= 10")
    return max_runs, pass_at


def handle(args: argparse.Namespace) -> int:
    # A signal stops the run (see ragjudge.interrupt): the report holds the cases finished before it.
    config = with_judge_overrides(
        load_config(args.config), args.judge_model, args.judge_base_url, args.judge_api_key_env
    )
    if args.sample is not None and (args.traces is None or args.sample < 1):
        raise UsageError("--sample N needs --traces FILE and N >= 1")
    if args.log_bodies and args.log is None:
        raise UsageError("--log-bodies needs --log FILE")
    if args.bias_check < 0:
        raise UsageError("--bias-check N needs N >= 0")
    if args.rejudge is not None:
        if not 0 <= args.rejudge <= 10:
            raise UsageError(f"--rejudge {args.rejudge}: N must be 0 to 10")
        config = config.model_copy(update={"judge": config.judge.model_copy(update={"rejudge": args.rejudge})})
    if args.dry_run:
        return dry_run(config, args)
    shard = parse_shard(args.shard) if args.shard is not None else None
    template = args.template or config.template
    warm_up: list[Callable[[], object]] = []
    if args.comment_file is not None:
        warm_up.append(functools.partial(compiled, check_template(template)))
    outputs = Outputs(args.report, args.comment_file, template, args.junit, args.html, run_url_of(os.environ))
    check_output_paths((*outputs.flags(), ("--log", args.log)))
    request = GateRequest(
        config=config,
        endpoint=args.endpoint,
        cases=args.cases or (),
        log=args.log,
        log_bodies=args.log_bodies,
        traces=args.traces,
        sample=args.sample,
        seed=args.seed,
        bias_check=args.bias_check,
        baseline=args.baseline,
        repeat=args.repeat,
        shard=shard,
        warm_up=warm_up,
    )
    report = run_gate(request)
    code = emit(report, outputs)
    if shard is not None:
        # A shard's verdict covers part of the set; only `merge` gates. Its report is what matters here.
        print(f"ragjudge: shard {shard}: exit 0 (the gate is `ragjudge merge` over every shard's report)")
        return 0
    return code


def dry_run(config: Config, args: argparse.Namespace) -> int:
    """`--dry-run`: the case set read and checked as a run reads it, the plan printed, nothing asked."""
    cases = [c for c in case_set_of(config, args.cases or ()).cases if c.review != "rejected"]
    case_rules, suite_rules = gate_rules(config)
    check_criteria(cases, config, (*case_rules, *suite_rules, *regression_rules(config)))
    repeat = args.repeat or (config.repeat.max, config.repeat.pass_at)
    baseline = args.baseline is not None or config.baseline.report is not None
    print("\n".join(describe(plan_run(config, cases, repeat, baseline), config)))
    return 0
