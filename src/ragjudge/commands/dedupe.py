"""`ragjudge dedupe`: drop cases whose question duplicates an earlier one after normalisation."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from ragjudge.cases import normalize_question, read_items
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
        question = data.get("question") if isinstance(data, dict) else None
        if not isinstance(question, str) or not question.strip():
            where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
            raise CaseFileError(f"{where}: case has no question", tip="every case needs a `question`")
        key = normalize_question(question)
        if key in seen:
            continue
        seen.add(key)
        kept.append(data)
    if path.suffix.lower() in {".jsonl", ".ndjson"}:
        text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept)
    else:
        text = yaml.safe_dump(kept, allow_unicode=True, sort_keys=False)
    out.write_text(text, encoding="utf-8")
    print(f"kept={len(kept)} dropped={len(items) - len(kept)}")
    return 0
