"""The command line: `main(argv) -> int`, and the one place errors become exit codes."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from ragjudge import __version__, masking
from ragjudge.commands import calibrate, canary, cases, comment, dedupe, demo, run
from ragjudge.errors import ExitCode, RagjudgeError

COMMANDS = (run, dedupe, demo, comment, canary, calibrate, cases)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own exit code for usage errors is 2, which is ours too.
        self.print_usage(sys.stderr)
        self.exit(ExitCode.BAD_INPUT, f"ragjudge: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ragjudge", description="Evaluate a RAG endpoint against a case set and gate on rules.")
    parser.add_argument("--version", action="version", version=f"ragjudge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Every byte this run prints goes through the mask: secrets registered while it runs (config
    # values from the environment, the judge key, the GitHub token) never reach stdout or stderr.
    with masking.scope(), masking.masked_std():
        masking.register_environ()
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else ExitCode.BAD_INPUT
    if args.command is None:
        parser.print_help(sys.stderr)
        return ExitCode.BAD_INPUT
    try:
        return int(args.handler(args))
    except RagjudgeError as exc:
        print(exc.render(), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("ragjudge: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence: a report, never a traceback
        print(f"ragjudge: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("RAGJUDGE_DEBUG"):
            traceback.print_exc()
        else:
            print("Tip: rerun with RAGJUDGE_DEBUG=1 for a traceback, and report it", file=sys.stderr)
        return int(ExitCode.COULD_NOT_EVALUATE)


def entry() -> None:
    raise SystemExit(main())
