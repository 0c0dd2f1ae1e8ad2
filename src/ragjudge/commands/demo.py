"""`ragjudge demo`: the example RAG service, the example cases and the offline judge, no API key."""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from ragjudge.config.loader import load_config
from ragjudge.errors import ExitCode, exit_code_for
from ragjudge.gate.evaluation import GateRequest, run_gate
from ragjudge.outpaths import check_output_paths
from ragjudge.report.markdown import render_comment
from ragjudge.report.writing import write_report


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the gate on the bundled example service with the offline judge")
    p.add_argument("--strict", action="store_true", help="exit with the gate's code instead of 0")
    p.add_argument("--report", type=Path, metavar="FILE", help="also write the JSON report here")
    p.set_defaults(handler=handle)


def examples_dir() -> Path:
    return Path(str(resources.files("ragjudge.examples")))


def handle(args: argparse.Namespace) -> int:
    # Imported by name: the example lives in examples/, mapped into the package at install time.
    serve_in_thread = importlib.import_module("ragjudge.examples.rag_service").serve_in_thread

    check_output_paths((("--report", args.report),))
    config = load_config(examples_dir() / "ragjudge.yml")
    config = config.model_copy(update={"judge": config.judge.model_copy(update={"provider": "offline"})})
    server, url = serve_in_thread()
    try:
        print(f"ragjudge demo: example RAG service at {url}, offline lexical judge, no API key needed\n")
        report = run_gate(GateRequest(config=config, endpoint=url))
    finally:
        server.shutdown()
        server.server_close()
    if args.report:
        write_report(report, args.report)
    comment = render_comment(report)
    s = report.suite
    print(f"verdict: {report.verdict.upper()} ({s.passed}/{s.cases} passed, {s.failed} failed, {s.errored} errored)")
    print("\n----- PR comment (Markdown) -----\n")
    sys.stdout.write(comment)
    print("\n----- end of comment -----")
    if args.strict:
        return int(exit_code_for(report.verdict))
    return int(ExitCode.PASSED)
