"""`--shard i/n`: a stable partition of the case set by a hash of each case's id.

The hash (SHA-256, not Python's salted `hash`) depends on the id alone, so a case stays in
the same shard across runs, machines and edits of other cases; shards are numbered from 1,
as a CI matrix counts them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from ragjudge.errors import UsageError

T = TypeVar("T")

_SHARD = re.compile(r"^\s*(\d{1,6})\s*/\s*(\d{1,6})\s*$")
"""At most 6 digits each: a million shards is past any CI matrix, and Python refuses int() of 4,300 digits."""


@dataclass(frozen=True)
class Shard:
    """Part `index` of `count` (1 <= index <= count)."""

    index: int
    count: int

    def keeps(self, case_id: str) -> bool:
        return shard_of(case_id, self.count) == self.index

    def positions(self, ids: Sequence[str]) -> list[int]:
        """Where this shard's cases stand in the whole set (so `merge` can restore the order)."""
        return [k for k, case_id in enumerate(ids) if self.keeps(case_id)]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(case_id: str, count: int) -> int:
    """The shard (1..count) a case id belongs to."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str) -> Shard:
    """`2/3` -> Shard(2, 3); anything else is a usage error saying what to write."""
    match = _SHARD.match(text)
    shown = text if len(text) <= 40 else text[:40] + "…"
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise UsageError(
            f"--shard {shown!r}: expected i/n with 1 <= i <= n <= 999999",
            tip="e.g. --shard 2/3 for the second of three shards (in a matrix: --shard ${{ matrix.shard }}/3)",
        )
    return Shard(int(match.group(1)), int(match.group(2)))
