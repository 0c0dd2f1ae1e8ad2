"""`ragjudge cases`: tools that keep the test set honest: see what it is made of, and feed production's bad
answers back into it as new cases.

* `cases generate --corpus PATH --n N --out FILE`: cases written from the knowledge base by the judge's
  model, pending review (commands/case_generate.py).
* `cases review FILE`: walk the pending cases and approve or reject each (commands/case_review.py).
* `cases stats FILE...`: how the case set is made up: counts by category, source and
  difficulty, questions that duplicate an earlier one after normalisation, the out-of-scope share.
* `cases import-bad FILE --into cases.yaml`: production's bad cases (JSONL with `question`,
  `answer`, optional `expected`) become case stubs with `source: reflow` and a
  `reflow-YYYY-MM-DD` tag (the import date), skipping questions the case set already has after
  normalisation. The bad answer is kept as a YAML comment above its stub, for the person who
  writes the expected answer; stubs are appended, so the file's own comments survive.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ragjudge.cases.case import Case
from ragjudge.cases.caseset import load_cases, validate
from ragjudge.cases.clustering import clusters
from ragjudge.cases.duplicates import duplicates, normalize_question
from ragjudge.cases.files import read_items
from ragjudge.cases.saving import Addition, Target, append, open_target
from ragjudge.cases.schema import CaseModel
from ragjudge.commands import case_generate, case_review
from ragjudge.errors import CaseFileError
from ragjudge.outpaths import check_output_paths

UNSET = "(unset)"
BAD_TIP = 'one JSON object a line: {"question": "...", "answer": "...", "expected": "..." (optional)}'


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "cases", help="test-set tools: generate from the knowledge base, stats, import bad cases, review pending ones"
    )
    tools = p.add_subparsers(dest="cases_command", metavar="TOOL", required=True)
    s = tools.add_parser("stats", help="counts by category, source, difficulty; duplicates; out-of-scope share")
    s.add_argument("files", type=Path, nargs="+", metavar="FILE", help="case files (YAML list or JSONL)")
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.set_defaults(handler=handle_stats)
    b = tools.add_parser("import-bad", help="turn bad production cases (JSONL) into case stubs (source: reflow)")
    b.add_argument("file", type=Path, metavar="FILE", help='JSONL: {"question", "answer", "expected"?}')
    b.add_argument("--into", type=Path, required=True, metavar="CASES", help="case file to append the stubs to")
    b.add_argument("--date", type=date.fromisoformat, metavar="YYYY-MM-DD", help="import date (default: today)")
    b.set_defaults(handler=handle_import)
    case_review.add_parser(tools)
    case_generate.add_parser(tools)


# ------------------------------------------------------------------------------------------ stats


def stats(cases: Sequence[Case]) -> dict[str, Any]:
    n = len(cases)
    out_of_scope = sum(1 for c in cases if not c.should_answer)
    dups = duplicates(cases)

    def count(values: list[str | None]) -> dict[str, int]:
        return dict(Counter(v if v else UNSET for v in values).most_common())

    return {
        "cases": n,
        "by_category": count([c.category for c in cases]),
        "by_source": count([c.source for c in cases]),
        "by_difficulty": count([c.difficulty for c in cases]),
        "by_review": count([c.review for c in cases]),
        "duplicates": [{"id": d.case.id, "duplicates": d.first.id, "question": d.case.question} for d in dups],
        "out_of_scope": out_of_scope,
        "out_of_scope_share": out_of_scope / n if n else None,
    }


def handle_stats(args: argparse.Namespace) -> int:
    case_set = load_cases(args.files)
    figures = stats(case_set.cases)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return 0
    print(f"cases: {figures['cases']} in {len(args.files)} file(s)")
    for key, title in (
        ("by_category", "category"),
        ("by_source", "source"),
        ("by_difficulty", "difficulty"),
        ("by_review", "review"),
    ):
        row = " · ".join(f"{name} {count}" for name, count in figures[key].items())
        print(f"by {title}: {row}")
    dups = figures["duplicates"]
    print(f"duplicates: {len(dups)} (same question as an earlier case after normalisation)")
    for d in dups:
        print(f"  {d['id']} duplicates {d['duplicates']}: {d['question']}")
    share = figures["out_of_scope_share"]
    print(f"out of scope: {figures['out_of_scope']} of {figures['cases']} ({share:.1%})")
    return 0


# ------------------------------------------------------------------------------------- import-bad


class BadCase(BaseModel):
    """One bad production case; other fields of the export (timestamps, user ids...) are ignored."""

    model_config = ConfigDict(extra="ignore")

    question: str
    answer: str
    expected: str | None = None
    category: str | None = None

    @field_validator("question")
    @classmethod
    def _question(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("is empty")
        return value


def read_bad(path: Path) -> list[BadCase]:
    out = []
    for item in read_items(path):
        where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
        if not isinstance(item.data, dict):
            raise CaseFileError(f"{where}: expected a JSON object, found {type(item.data).__name__}", tip=BAD_TIP)
        try:
            out.append(BadCase.model_validate(item.data))
        except ValidationError as exc:
            parts = []
            for err in exc.errors(include_input=False, include_url=False):
                field = ".".join(str(p) for p in err["loc"])
                msg = "required field is missing" if err["type"] == "missing" else err["msg"]
                parts.append(f"field {field!r}: {str(msg).removeprefix('Value error, ')}")
            raise CaseFileError(f"{where}: " + "; ".join(parts), tip=BAD_TIP) from None
    return out


def _existing(target: Target) -> tuple[Case, ...]:
    """The cases already in the file appended to, validated (none when it has none yet)."""
    return validate([(target.path, target.items)]).cases if target.items else ()


def _comment(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:300] + ("…" if len(flat) > 300 else "")


def handle_import(args: argparse.Namespace) -> int:
    check_output_paths((("--into", args.into),))
    bad = read_bad(args.file)
    target = open_target(args.into)
    existing = _existing(target)
    when: date = args.date or date.today()
    tag = f"reflow-{when.isoformat()}"
    seen = {normalize_question(c.question) for c in existing}
    ids = {c.id for c in existing}
    fresh: list[BadCase] = []
    for item in bad:
        key = normalize_question(item.question)
        if key not in seen:
            seen.add(key)
            fresh.append(item)
    dropped = len(bad) - len(fresh)
    # The playbook's weekly clustering: one candidate per group of similar questions, its members above it.
    groups = clusters([item.question for item in fresh])
    stubs: list[Addition] = []
    for group in groups:
        first = fresh[group[0]]
        k = len(stubs) + 1
        while f"reflow-{when:%Y%m%d}-{k:03d}" in ids:
            k += 1
        case_id = f"reflow-{when:%Y%m%d}-{k:03d}"
        ids.add(case_id)
        stub: dict[str, Any] = {"id": case_id, "question": first.question}
        if first.expected:
            stub["expected"] = first.expected
        if first.category:
            stub["category"] = first.category
        stub.update(source="reflow", tags=[tag], review="pending")
        CaseModel.model_validate(stub)  # a stub must be a valid case
        note = f"production answer (bad): {_comment(first.answer)}"
        if len(group) > 1:
            members = " | ".join(_comment(fresh[m].question) for m in group)
            note = f"cluster of {len(group)} similar production questions: {members}\n{note}"
        stubs.append(Addition(stub, note))
    if stubs:
        append(target, stubs)
    print(
        f"imported={len(stubs)} from {len(fresh)} question(s) in {len(groups)} cluster(s) dropped={dropped} "
        f"(duplicates of existing questions) into {args.into}"
    )
    if stubs:
        print("Tip: write each stub's `expected` (and must_mention), then approve it with `ragjudge cases review`")
    return 0
