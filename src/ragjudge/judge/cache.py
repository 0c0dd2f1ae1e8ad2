"""On-disk cache of validated judge replies.

Keyed on everything that could change a judgement: base URL, model, judge
kind, the full prompt, the schema, temperature, seed and sample index. Only
replies that passed validation are stored, so a bad reply is asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ragjudge.errors import RagjudgeError
from ragjudge.repofiles.bounded import Bound, read_bounded


def cache_key(parts: dict[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_ENTRY_BOUND = Bound(10_000_000, "over 10,000,000 bytes, more than a judge reply", tip="clear the judge cache")


class JudgeCache:
    """A folder of small JSON files, two-level fan-out; None disables it."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._made: set[Path] = set()  # fan-out folders known to exist: one mkdir each per run, not per write

    def holds_entries(self) -> bool:
        """Whether anything was cached before (a folder with a fan-out folder in it): a cheap guess that
        this run's judgements may be cache hits, made without reading any entry."""
        if self.root is None:
            return False
        try:
            with os.scandir(self.root) as entries:
                return any(e.is_dir() for e in entries)
        except OSError:
            return False

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        if self.root is None:
            return None
        try:
            # The cache folder may be committed: an entry linked to /dev/zero or a FIFO is a miss, not a hang.
            data = json.loads(read_bounded(self._path(key), _ENTRY_BOUND).decode("utf-8"))
        except (RagjudgeError, ValueError):
            return None  # a missing or damaged entry is a miss, never an error
        return data if isinstance(data, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self.root is None:
            return
        path = self._path(key)
        try:
            if path.parent not in self._made:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._made.add(path.parent)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(value, ensure_ascii=False))  # dumps encodes in C; dump does not
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache folder costs money, not correctness
