"""The command line: `main(argv) -> int`, and the one place errors become exit codes."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from ragjudge import __version__, masking
from ragjudge.errors import ExitCode, RagjudgeError

# name -> the one-line help `ragjudge --help` lists. Only the command being run is imported (its module
# registers its own options), so `ragjudge --version` and every other command skip the openai SDK, Jinja, the
# statistics and the GitHub code. tests/test_cli.py keeps these lines equal to the modules' own.
COMMANDS = {
    "run": "evaluate the endpoint against the case set and apply the gate",
    "merge": "merge the reports of `run --shard i/n` into one and apply the rules once",
    "probe": "send one request and show what every response mapping key extracts",
    "dedupe": "drop duplicate questions (normalised), keeping the first",
    "demo": "run the gate on the bundled example service with the offline judge",
    "comment": "render the PR comment from a JSON report (and post it with --post)",
    "canary": "compare a canary with the stable version: promote, rollback or inconclusive",
    "calibrate": "measure the judge against human labels, and check it for bias",
    "cases": "test-set tools: generate from the knowledge base, stats, import bad cases, review pending ones",
    "serve": "run canary analyses over HTTP (Flagger webhooks, Argo Rollouts, /metrics)",
}
ALL = "*"
# The module of a command is named for it, but for `cases`, whose name the case-file loader (ragjudge.cases) has.
_MODULES = {"cases": "case_tools"}


def command_module(name: str) -> str:
    """The module that defines command `name`'s options and handler."""
    return f"ragjudge.commands.{_MODULES.get(name, name)}"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's own exit code for usage errors is 2, which is ours too.
        self.print_usage(sys.stderr)
        self.exit(ExitCode.BAD_INPUT, f"ragjudge: error: {message}\n")


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """The parser with `command`'s options in full (every command's for ALL); the others are names only."""
    parser = _Parser(prog="ragjudge", description="Evaluate a RAG endpoint against a case set and gate on rules.")
    parser.add_argument("--version", action="version", version=f"ragjudge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_text in COMMANDS.items():
        if command in (name, ALL):
            importlib.import_module(command_module(name)).add_parser(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command named on the command line: the first word that is not an option (none takes a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None, *, whole_process: bool = False) -> int:
    """`whole_process`: this command is all the process will do (the console script), see `entry`."""
    # Every byte this run prints goes through the mask: secrets registered while it runs (config
    # values from the environment, the judge key, the GitHub token) never reach stdout or stderr.
    with masking.scope(), masking.masked_std():
        masking.register_environ()
        return _main(argv, whole_process)


def _main(argv: Sequence[str] | None, whole_process: bool = False) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(chosen_command(argv))
    if whole_process:
        # What the imports built lives as long as the process: kept out of every collection from here on.
        gc.freeze()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else ExitCode.BAD_INPUT
    if args.command is None:
        parser.print_help(sys.stderr)
        return ExitCode.BAD_INPUT
    from ragjudge.interrupt import exit_code, stop_on_signals

    try:
        with stop_on_signals():
            code = int(args.handler(args))
        # A stopped command wrote what it could; its exit code says it was stopped (130 SIGINT, 143 SIGTERM).
        return exit_code() or code
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


def collect_less_often() -> None:
    """For a process that runs one command: the garbage collector tuned for a run's many long-lived objects.

    A run holds every case's result until its report, and the collector's full passes would walk all of them
    again and again (0.66 s of 15 s CPU at 10,000 offline cases): young collections come every 10,000
    allocations rather than 700, so far fewer objects are promoted to be walked.
    """
    gc.set_threshold(10_000, 10, 10)


def entry() -> None:
    collect_less_often()
    code = main(whole_process=True)
    from ragjudge.transport import deadline

    if deadline.stopped():
        # Calls abandoned after a signal may still hold worker threads; the outputs are written, so leave now
        # rather than wait for them at interpreter exit.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    # Everything is written. Frozen objects are left out of the collections the interpreter makes on its way
    # out, which otherwise walk every object the run imported (about 0.07 s after a model-judged run).
    gc.freeze()
    raise SystemExit(code)
