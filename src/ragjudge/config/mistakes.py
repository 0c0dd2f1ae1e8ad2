"""Newcomer mistakes, recognised in pydantic's errors and told as what to write instead.

The config and case files both pass their validation errors through `recognise`, so a mistake reads the
same wherever it is made. A value is shown back only when it cannot be a secret: a number, or (in a case
file) the text the person typed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.metrics.names import NEWLY_FAILING

RULE_TABLES = {("gate", "case"), ("gate", "suite"), ("gate", "regression"), ("canary", "rules")}
"""Where a mapping of `metric: "OP number"` rules is written."""

# Rules on these are ceilings (`<=`); every other metric is a floor (`>=`).
_CEILINGS = ("_ms", "_usd", "_error_rate", "_ratio", "contradictions", NEWLY_FAILING)
_CASE_FILE_NAME = re.compile(r"[\w.\-/]{1,120}\.(?:ya?ml|jsonl|ndjson)")


@dataclass(frozen=True)
class Mistake:
    """A recognised mistake: what is wrong (replacing pydantic's wording) and what to write instead."""

    problem: str
    tip: str


def recognise(loc: Sequence[str | int], kind: str, value: Any, *, echo: bool) -> Mistake | None:
    """The mistake behind one pydantic error (`loc`, its `type`, the `value` given), or None.

    `echo`: the value may be quoted back in the tip (case files); else only a number or a file name is."""
    name = next((str(p) for p in reversed(loc) if isinstance(p, str)), "value")
    if kind == "string_type" and len(loc) == 3 and tuple(loc[:2]) in RULE_TABLES and _is_number(value):
        op = "<=" if name.endswith(_CEILINGS) else ">="
        return Mistake(
            "a rule is a comparison in quotes, not a bare number", f'write {name}: "{op} {value:g}" (quoted)'
        )
    if kind == "list_type" and isinstance(value, str):
        if tuple(loc) == ("cases",):
            shown = value if _CASE_FILE_NAME.fullmatch(value) else "cases.yaml"
            return Mistake(
                "a list of case files is expected, not a single path",
                f"write it as a list, even of one file: cases: [{shown}]",
            )
        shown = json.dumps(value, ensure_ascii=False) if echo and len(value) <= 80 else '"..."'
        return Mistake("a list is expected, not a single text", f"write it as a list, even of one: {name}: [{shown}]")
    if kind == "path_type" and tuple(loc[:1]) == ("cases",) and isinstance(value, dict):
        return Mistake(
            "a case file's path is expected: cases are not written inline in ragjudge.yml",
            "put the cases in a file of their own (cases.yaml, a YAML list) and name it: cases: [cases.yaml]",
        )
    if kind == "path_type" and isinstance(value, list):
        return Mistake("one path is expected, not a list", f"write a single file: {name}: FILE")
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
