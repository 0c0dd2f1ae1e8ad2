"""The one reader of a repository file: bounded in size, regular files only, links kept inside their folder.

A FIFO named like a document would hold the reader forever and `/dev/zero` never ends, so the file is opened
without blocking and refused unless it is a regular file; its size is checked before a byte is read and the read
stops one byte past the limit whatever the size said. With `inside`, a path whose real location leaves that
folder (a checked-in `notes.md -> ../../.ssh/id_rsa`) is refused before it is opened: what it points to would
otherwise be sent on (to a model, into a report). The limit and the messages are the caller's: each kind of file
has its own. Every refusal is a CaseFileError (or the caller's error, a ConfigError for the config: exit 2) naming
the file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ragjudge.errors import CaseFileError, RagjudgeError

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Bound:
    """How much of one kind of file is read, and what is said when there is more."""

    limit: int
    """The most bytes read; a file over it is refused."""
    too_big: str
    """The message after the path when it is over `limit` (e.g. `over 10,000,000 bytes, the limit for a case file`)."""
    tip: str
    """What to do about a file over the limit."""
    missing: str = "file not found"
    """The message after the path when there is no file."""
    missing_tip: str | None = None
    """What to do about a missing file."""
    error: type[RagjudgeError] = CaseFileError
    """The error raised (each exit 2): a case file's, or the config's own."""


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def outside(path: Path, folder: Path) -> Path | None:
    """Where `path` really is when that is outside `folder` (through a link, `..`), else None."""
    real = Path(os.path.realpath(path))
    return None if real.is_relative_to(os.path.realpath(folder)) else real


def read_bounded(path: Path, bound: Bound, inside: Path | None = None) -> bytes:
    """`path`'s bytes; refused (CaseFileError) when missing, not a regular file, over the bound, or, with
    `inside`, really outside that folder."""
    if inside is not None and (real := outside(path, inside)) is not None:
        raise bound.error(
            f"{path}: refused: it links outside {inside} (to {real})",
            tip=f"keep the files it reads inside {inside}: copy the file in rather than link to it",
        )
    try:
        # O_NONBLOCK: opening a FIFO without a writer returns at once (and is refused below) instead of waiting.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise bound.error(f"{path}: {bound.missing}", tip=bound.missing_tip) from None
    except OSError as exc:
        try:
            mode = os.stat(path).st_mode  # a socket cannot be opened at all
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise _not_a_file(path, mode, bound.error) from None
        raise bound.error(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_a_file(path, info.st_mode, bound.error)
        # A regular file's size says it at once; the read still stops one byte past the limit (a file growing).
        too_big = info.st_size > bound.limit
        raw = b"" if too_big else _read_upto(path, fd, bound.limit + 1, bound.error)
    finally:
        os.close(fd)
    if too_big or len(raw) > bound.limit:
        raise bound.error(f"{path}: {bound.too_big}", tip=bound.tip)
    return raw


def _not_a_file(path: Path, mode: int, error: type[RagjudgeError]) -> RagjudgeError:
    return error(
        f"{path}: refused: {kind_of(mode)}, not a file",
        tip="only regular files are read; remove it or put a file in its place",
    )


def _read_upto(path: Path, fd: int, most: int, error: type[RagjudgeError]) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < most:
        try:
            chunk = os.read(fd, min(_CHUNK, most - size))
        except OSError as exc:
            raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
