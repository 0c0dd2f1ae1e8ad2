"""`ragjudge cases review FILE`: walk the cases pending review in the terminal and write each decision back.

For each case with `review: pending` it shows the question, the expected points, the golden ids and where the
case came from, and asks `[a]pprove / [e]dit / [r]eject / [s]kip / [q]uit`. `e` opens the case's own lines in
`$VISUAL` or `$EDITOR` (else `vi`); the edit must still read as one valid case, or it is set aside with the
reason, and the case is shown again to decide. A decision rewrites only that case's `review:` line (YAML) or that
case's line (JSONL), and an edit only that case's lines: comments, order and every other case stay as they are.
The file is written once, at the end (or at `q`), atomically, after the whole file is read back as a case file;
nothing is written when nothing was decided or edited.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ragjudge.cases.case import Case
from ragjudge.cases.caseset import load_cases
from ragjudge.cases.files import is_jsonl, read_items
from ragjudge.errors import CaseFileError, UsageError

ANSWERS = {"a": "approved", "r": "rejected", "e": "edit"}
_REVIEW_LINE = re.compile(r"^(\s*|-\s+)review:(\s*)pending(\s*#.*)?$")
"""A `review: pending` line, as its own key line or as an item's first key; the spacing and a comment are kept."""


def add_parser(tools: Any) -> None:
    r = tools.add_parser("review", help="walk the cases pending review: approve, edit, reject or skip each")
    r.add_argument("file", type=Path, metavar="FILE", help="a case file (YAML list or JSONL)")
    r.set_defaults(handler=handle)


@dataclass
class _Item:
    """One pending case's lines in the file, as read and as the person left them."""

    start: int
    """Its first line, 0-based."""
    lines: list[str]
    """Its lines (a JSONL case's one line), edited or as read."""
    end: int
    """One past its last line, as read."""
    decision: str | None = None
    edited: bool = False


def _show(case: Case, out: TextIO, k: int, n: int) -> None:
    print(f"\n[{k} of {n}] {case.id} ({case.origin})", file=out)
    print(f"  question: {case.question}", file=out)
    expected = case.expected if isinstance(case.expected, tuple) else ([case.expected] if case.expected else [])
    for point in expected:
        print(f"  expected: {point}", file=out)
    if case.golden_context_ids:
        print(f"  golden: {', '.join(case.golden_context_ids)}", file=out)
    if case.source:
        print(f"  source: {case.source}", file=out)


def _decide(out: TextIO, read: Callable[[], str]) -> str | None:
    """The person's answer: `approved`, `rejected`, `edit`, None to skip; raises EOFError at `q` or end of input."""
    while True:
        print("[a]pprove / [e]dit / [r]eject / [s]kip / [q]uit: ", end="", file=out, flush=True)
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
        print("  answer a, e, r, s or q", file=out)


def _item_end(lines: list[str], start: int, next_start: int) -> int:
    """One past the item's last line: the blank lines and comments before the next item are not the item's."""
    end = next_start
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _edit(item: _Item, path: Path, out: TextIO) -> Case | None:
    """Opens the item in the person's editor; the edited case, or None (said why) when it is not one valid case."""
    jsonl = is_jsonl(path)
    shown = json.dumps(json.loads(item.lines[0]), ensure_ascii=False, indent=2) + "\n" if jsonl else "".join(item.lines)
    with tempfile.TemporaryDirectory(prefix="ragjudge-review-") as folder:
        draft = Path(folder) / ("case.json" if jsonl else "case.yaml")
        draft.write_text(shown, encoding="utf-8")
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            subprocess.run([*shlex.split(editor), str(draft)], check=False)
        except OSError as exc:
            print(f"  cannot start the editor {editor!r} ({exc.strerror}): set EDITOR", file=out)
            return None
        text = draft.read_text(encoding="utf-8")
        if jsonl:
            try:
                text = json.dumps(json.loads(text), ensure_ascii=False) + "\n"
            except json.JSONDecodeError as exc:
                print(f"  edit set aside: not one JSON object ({exc.msg}, line {exc.lineno})", file=out)
                return None
            draft.write_text(text, encoding="utf-8")
            draft = draft.rename(draft.with_suffix(".jsonl"))
        try:
            cases = load_cases([draft]).cases
        except CaseFileError as exc:
            print(f"  edit set aside: {str(exc).replace(str(draft), 'the edited case')}", file=out)
            return None
    if len(cases) != 1:
        print(f"  edit set aside: it holds {len(cases)} cases; keep it to the one case", file=out)
        return None
    item.lines = text.splitlines(keepends=True)
    item.edited = True
    return cases[0]


def _decided(item: _Item, path: Path, case_id: str) -> list[str]:
    """The item's lines with its decision written in (its `review: pending` line, or its JSON's `review`)."""
    if item.decision is None:
        return item.lines
    if is_jsonl(path):
        line = item.lines[0]
        data = json.loads(line)
        data["review"] = item.decision
        return [json.dumps(data, ensure_ascii=False) + line[len(line.rstrip("\r\n")) :]]
    out = list(item.lines)
    for k, line in enumerate(out):
        found = _REVIEW_LINE.match(line.rstrip("\r\n"))
        if found is not None:
            newline = line[len(line.rstrip("\r\n")) :]
            out[k] = f"{found.group(1)}review:{found.group(2)}{item.decision}{found.group(3) or ''}{newline}"
            return out
    raise CaseFileError(f"{path}: case {case_id!r}: its `review: pending` line was not found on its lines")


def handle(args: argparse.Namespace) -> int:
    path: Path = args.file
    cases = [c for c in load_cases([path]).cases if c.review == "pending"]
    if not cases:
        print(f"{path}: no case is pending review")
        return 0
    starts = {str(item.data.get("id")): item.line for item in read_items(path) if isinstance(item.data, dict)}
    raw = path.read_bytes()
    lines = raw.decode("utf-8-sig").splitlines(keepends=True)
    item_lines = sorted(line for line in starts.values() if line)
    items: dict[str, _Item] = {}
    for case in cases:
        line = starts.get(case.id)
        if line is None:
            raise UsageError(f"{path}: case {case.id!r}: no line to write the decision to (a case without an id?)")
        end = (
            line
            if is_jsonl(path)
            else _item_end(lines, line - 1, next((n - 1 for n in item_lines if n > line), len(lines)))
        )
        items[case.id] = _Item(line - 1, lines[line - 1 : end], end)
    out = sys.stdout
    try:
        for k, case in enumerate(cases, start=1):
            shown = case
            while True:
                _show(shown, out, k, len(cases))
                answer = _decide(out, sys.stdin.readline)
                if answer != "edit":
                    items[case.id].decision = answer
                    break
                shown = _edit(items[case.id], path, out) or shown
    except EOFError:
        print("", file=out)
    touched = [(case_id, item) for case_id, item in items.items() if item.decision or item.edited]
    if not touched:
        print("nothing decided: the file is unchanged")
        return 0
    # From the bottom up, so an edit that adds or drops lines leaves the items above where they were.
    for case_id, item in sorted(touched, key=lambda pair: -pair[1].start):
        lines[item.start : item.end] = _decided(item, path, case_id)
    _write(path, raw, "".join(lines))
    decisions = [item.decision for item in items.values()]
    edited = sum(item.edited for item in items.values())
    print(
        f"{path}: {decisions.count('approved')} approved, {decisions.count('rejected')} rejected, {edited} edited, "
        f"{decisions.count(None)} left pending"
    )
    return 0


def _write(path: Path, raw: bytes, text: str) -> None:
    """Writes the file atomically, once the whole of it reads back as a case file (else nothing is written)."""
    tmp = path.with_name(f".{path.stem}.reviewed{path.suffix}")  # the case file's suffix: it is read back as one
    tmp.write_bytes((b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b"") + text.encode("utf-8"))
    try:
        load_cases([tmp])
    except CaseFileError as exc:
        tmp.unlink()
        raise CaseFileError(
            f"{path}: the reviewed file would not read as a case file ({str(exc).replace(str(tmp), str(path))}); "
            "nothing was written"
        ) from None
    os.replace(tmp, path)
