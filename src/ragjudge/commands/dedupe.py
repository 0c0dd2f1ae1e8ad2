"""`ragjudge dedupe`: drop cases whose question duplicates an earlier one after normalisation."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from ragjudge.cases import questions_key, read_items
from ragjudge.errors import CaseFileError
from ragjudge.outpaths import check_output_paths


def add_parser(sub: Any) -> None:
    p = sub.add_parser("dedupe", help="drop duplicate questions (normalised), keeping the first")
    p.add_argument("file", type=Path, help="case file (YAML list or JSONL)")
    p.add_argument("--out", type=Path, help="where to write the kept cases (default: FILE.deduped.EXT)")
    p.set_defaults(handler=handle)


def _key(data: Any) -> str | None:
    """The normalised question, or a conversation's every question; None when there is none to compare."""
    if not isinstance(data, dict):
        return None
    turns = data.get("turns")
    questions = [t.get("question") for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []
    if not turns:
        questions = [data.get("question")]
    texts = [q for q in questions if isinstance(q, str) and q.strip()]
    if not texts or len(texts) != len(questions):
        return None
    return questions_key(texts)


def handle(args: argparse.Namespace) -> int:
    path: Path = args.file
    out: Path = args.out or path.with_name(f"{path.stem}.deduped{path.suffix}")
    check_output_paths((("--out", out),))
    items = read_items(path)
    kept: list[Any] = []
    seen: set[str] = set()
    for item in items:
        data = item.data
        key = _key(data)
        if key is None:
            where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
            raise CaseFileError(
                f"{where}: case has no question", tip="every case needs a `question` (or `turns:`, each with one)"
            )
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
