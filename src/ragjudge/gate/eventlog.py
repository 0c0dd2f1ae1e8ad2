"""The evaluation log (`--log`): JSONL, one line per endpoint call and per judgement, flushed as it goes."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ragjudge import masking
from ragjudge.errors import UsageError
from ragjudge.safetext import clean_text


class EventLog:
    """Thread-safe JSONL writer; a no-op when no path is given.

    Every registered secret (`ragjudge.masking`; `secrets` are registered too) is replaced by
    `***` in every line before it is written, in its JSON-escaped form as well.
    """

    def __init__(self, path: Path | None, secrets: tuple[str, ...] = ()) -> None:
        self._lock = threading.Lock()
        masking.register(*secrets)
        self._file: IO[str] | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = path.open("w", encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"{path}: cannot write the log ({exc.strerror})") from None

    def write(self, event_type: str, case_id: str, fields: dict[str, Any]) -> None:
        if self._file is None:
            return
        record = {"type": event_type, "case_id": case_id, "timestamp": datetime.now(UTC).isoformat(), **fields}
        line = clean_text(masking.mask(json.dumps(record, ensure_ascii=False, default=str)))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
