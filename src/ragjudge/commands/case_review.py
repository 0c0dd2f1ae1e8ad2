"""`ragjudge cases review FILE`: walk the cases pending review in the terminal and write each decision back.

For each case with `review: pending` it shows the question, the expected points, the golden ids and where the
case came from, and asks `[a]pprove / [r]eject / [s]kip / [q]uit`. A decision rewrites only that case's
`review:` line (YAML) or that case's line (JSONL): comments, order and every other case stay as they are. The
file is written once, at the end (or at `q`), atomically; nothing is written when no decision was made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, TextIO

from ragjudge.cases.caseset import load_cases
from ragjudge.cases.files import read_items
from ragjudge.errors import CaseFileError, UsageError

ANSWERS = {"a": "approved", "r": "rejected"}
_REVIEW_LINE = re.compile(r"^(\s*|-\s+)review:(\s*)pending(\s*#.*)?$")
"""A `review: pending` line, as its own key line or as an item's first key; the spacing and a comment are kept."""


def add_parser(tools: Any) -> None:
    r = tools.add_parser("review", help="walk the cases pending review: approve, reject or skip each")
    r.add_argument("file", type=Path, metavar="FILE", help="a case file (YAML list or JSONL)")
    r.set_defaults(handler=handle)


def _show(case: Any, out: TextIO, k: int, n: int) -> None:
    print(f"\n[{k} of {n}] {case.id} ({case.origin})", file=out)
    print(f"  question: {case.question}", file=out)
    expected = case.expected if isinstance(case.expected, tuple) else ([case.expected] if case.expected else [])
    for point in expected:
        print(f"  expected: {point}", file=out)
    if case.golden_context_ids:
        print(f"  golden: {', '.join(case.golden_context_ids)}", file=out)
    if case.source:
        print(f"  source: {case.source}", file=out)


def _decide(out: TextIO, read: Any) -> str | None:
    """The person's answer: `approved`, `rejected`, None to skip; raises EOFError at `q` or end of input."""
    while True:
        print("[a]pprove / [r]eject / [s]kip / [q]uit: ", end="", file=out, flush=True)
        line = read()
        if not line:
            raise EOFError
        answer = line.strip().lower()[:1]
        if answer == "q":
            raise EOFError
        if answer == "s":
            return None
        if answer in ANSWERS:
            return ANSWERS[answer]
        print("  answer a, r, s or q", file=out)


def _rewrite_yaml(lines: list[str], start: int, end: int, decision: str, case_id: str, path: Path) -> None:
    """The `review: pending` line of the item on lines [start, end) (0-based) set to `decision`."""
    for k in range(start, end):
        found = _REVIEW_LINE.match(lines[k].rstrip("\r\n"))
        if found is not None:
            newline = lines[k][len(lines[k].rstrip("\r\n")) :]
            lines[k] = f"{found.group(1)}review:{found.group(2)}{decision}{found.group(3) or ''}{newline}"
            return
    raise CaseFileError(f"{path}: case {case_id!r}: its `review: pending` line was not found on its lines")


def handle(args: argparse.Namespace) -> int:
    path: Path = args.file
    cases = [c for c in load_cases([path]).cases if c.review == "pending"]
    if not cases:
        print(f"{path}: no case is pending review")
        return 0
    items = read_items(path)
    starts = {str(item.data.get("id")): item.line for item in items if isinstance(item.data, dict)}
    raw = path.read_bytes()
    text = raw.decode("utf-8-sig")
    lines = text.splitlines(keepends=True)
    item_lines = sorted(line for line in starts.values() if line)
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    decided: dict[str, str] = {}
    out = sys.stdout
    try:
        for k, case in enumerate(cases, start=1):
            _show(case, out, k, len(cases))
            decision = _decide(out, sys.stdin.readline)
            if decision is not None:
                decided[case.id] = decision
    except EOFError:
        print("", file=out)
    if not decided:
        print("nothing decided: the file is unchanged")
        return 0
    for case_id, decision in decided.items():
        line = starts.get(case_id)
        if line is None:
            raise UsageError(f"{path}: case {case_id!r}: no line to write the decision to (a case without an id?)")
        if jsonl:
            data = json.loads(lines[line - 1])
            data["review"] = decision
            ending = lines[line - 1][len(lines[line - 1].rstrip("\r\n")) :]
            lines[line - 1] = json.dumps(data, ensure_ascii=False) + ending
        else:
            end = next((n - 1 for n in item_lines if n > line), len(lines))
            _rewrite_yaml(lines, line - 1, end, decision, case_id, path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes((b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b"") + "".join(lines).encode("utf-8"))
    os.replace(tmp, path)
    counts = {d: sum(v == d for v in decided.values()) for d in ("approved", "rejected")}
    left = len(cases) - len(decided)
    print(f"{path}: {counts['approved']} approved, {counts['rejected']} rejected, {left} left pending")
    return 0
