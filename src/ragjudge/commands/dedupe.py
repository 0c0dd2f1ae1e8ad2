"""`ragjudge dedupe`: drop cases whose question duplicates an earlier one after normalisation."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragjudge.cases.duplicates import raw_key
from ragjudge.cases.files import is_jsonl, read_items
from ragjudge.cases.saving import write_cases
from ragjudge.errors import CaseFileError
from ragjudge.outpaths import check_output_paths


def add_parser(sub: Any) -> None:
    p = sub.add_parser("dedupe", help="drop duplicate questions (normalised), keeping the first")
    p.add_argument("file", type=Path, help="case file (YAML list or JSONL)")
    p.add_argument("--out", type=Path, help="where to write the kept cases (default: FILE.deduped.EXT)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    path: Path = args.file
    out: Path = args.out or path.with_name(f"{path.stem}.deduped{path.suffix}")
    check_output_paths((("--out", out),))
    items = read_items(path)
    kept: list[Any] = []
    seen: set[str] = set()
    for item in items:
        data = item.data
        key = raw_key(data)
        if key is None:
            where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
            raise CaseFileError(
                f"{where}: case has no question", tip="every case needs a `question` (or `turns:`, each with one)"
            )
        if key in seen:
            continue
        seen.add(key)
        kept.append(data)
    # Written in the format of the file read, whatever --out is called.
    write_cases(out, kept, jsonl=is_jsonl(path))
    print(f"kept={len(kept)} dropped={len(items) - len(kept)}")
    return 0
