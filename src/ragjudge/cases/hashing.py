"""A case as it is asked and checked, hashed: the same text, reference and checks give the same digest wherever
the case was read from.

`provenance.case_set_hash` hashes the whole set; `CaseBlock.case_hash` one case, so a comparison can tell which
cases changed under the same id.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ragjudge.cases.case import Case

NOT_HASHED = ("origin", "file", "line", "turns", "turn", "history", "conversation_id", "review")
"""Where a case was read from, whether a person approved it yet, and what a conversation adds (hashed as `turns`
only when it has turns, so a case set without conversations hashes as it did before they existed)."""


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def row(case: Case) -> dict[str, object]:
    """The case's fields that decide how it is asked and checked."""
    out: dict[str, object] = {k: v for k, v in vars(case).items() if k not in NOT_HASHED}
    if case.turns:
        out["turns"] = [row(turn) for turn in case.turns]
    return out


def case_hash(case: Case) -> str:
    """One case: the first 16 hex digits of its row's SHA-256 (`CaseBlock.case_hash`)."""
    return hashlib.sha256(canonical(row(case))).hexdigest()[:16]
