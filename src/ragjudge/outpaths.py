"""Output paths are checked before the first paid call, so a bad one never throws a finished run away.

Each `--report`, `--comment-file`, `--junit`, `--html`, `--log` (`run`, `merge` and every other command) goes
through `check_output_path` when the command starts: the parent folder is
created if missing; a path that is a folder, that lies under a regular file, or
that cannot be written is bad usage (exit 2) naming the flag.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ragjudge.errors import UsageError


def check_output_path(flag: str, path: Path) -> None:
    """Raise UsageError naming `flag` unless `path` can be written; creates its parent folder."""
    where = f"{flag} {path}"
    if path.is_dir():
        raise UsageError(f"{where}: is a folder, not a file", tip=f"give a file path, e.g. {path / 'out'}")
    parent = path.parent
    for ancestor in (parent, *parent.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise UsageError(f"{where}: {ancestor} is a file, not a folder", tip="choose another path")
            break
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{where}: cannot create the folder {parent} ({exc.strerror})") from None
    _check_writable(where, path)


def check_output_paths(flags: Iterable[tuple[str, Path | None]]) -> None:
    """`check_output_path` for each (flag, path) whose path was given."""
    for flag, path in flags:
        if path is not None:
            check_output_path(flag, path)


def _check_writable(where: str, path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UsageError(f"{where}: cannot use this path ({exc.strerror})") from None
    if mode is not None and not stat.S_ISREG(mode):
        # A device or a pipe (/dev/stdout, a FIFO): opening it to probe could block or consume; ask the OS.
        if not os.access(path, os.W_OK):
            raise UsageError(f"{where}: not writable")
        return
    existed = mode is not None
    try:
        # A real open, not os.access: it also catches read-only file systems and runs as root. Append mode
        # leaves an existing file as it was; a probe file is removed again.
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{where}: not writable ({exc.strerror})", tip="choose a path you can write") from None
    if not existed:
        with contextlib.suppress(OSError):
            path.unlink()
