"""The one writer into the repository: a whole file replaced at once, never through a link, nothing lost.

The new text goes to a fresh temporary file beside the target, its name random and created exclusively without
following links (a planted `.cases.reviewed.yaml -> /home/runner/.bashrc` is never written through, and no fixed
name can be claimed first), with the target's own mode (a 0600 case file stays 0600). Before the rename the
target is read again: when it is no longer what the command read (a case appended while `cases review` waited
for an answer, a file swapped for a link), nothing is written and the error names the file, so the other
change is kept and the command can be run again. A target that is a link or not a regular file is refused.
"""

from __future__ import annotations

import os
import secrets
import stat
from enum import Enum
from pathlib import Path

from ragjudge.errors import CaseFileError
from ragjudge.repofiles.bounded import kind_of


class Unread(Enum):
    """What a command passes as `was` for a file it did not read."""

    ANY = "any"
    """Replace whatever is there (an output the command did not read, e.g. `dedupe --out`)."""


ANY = Unread.ANY
_NEW_FILE_MODE = 0o666
"""The mode a new file is created with before the umask, as `open(path, "w")` would."""


class Changed(CaseFileError):
    """The target is no longer what the command read: nothing was written."""


def write_atomic(path: Path, data: bytes, was: bytes | Unread | None) -> None:
    """Replace `path` with `data` at once; `was`: the bytes the command read from it (None: there was no file;
    `ANY`: not read). Refused (CaseFileError, nothing written) when the file changed since, or is a link."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Read at most one byte past what was read: enough to tell a change, however large the file has become.
    current = _current(path, len(was) + 1 if isinstance(was, bytes) else 0)
    if was is not ANY and (None if current is None else current[0]) != was:
        raise Changed(
            f"{path}: changed since ragjudge read it; nothing was written",
            tip="another program wrote to it meanwhile: its change is kept; run the command again",
        )
    mode = stat.S_IMODE(current[1]) if current is not None else _NEW_FILE_MODE & ~_umask()
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot write beside it: {exc.strerror or exc}") from None
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CaseFileError(f"{path}: cannot write it: {exc.strerror or exc}; it is unchanged") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_writable(path: Path) -> None:
    """Refuse now, before the work that leads to the write (a model's calls, a person's review), a target that
    `write_atomic` would refuse: a link, or something that is not a regular file."""
    _current(path, 0)


def _current(path: Path, most: int) -> tuple[bytes, int] | None:
    """The target's first `most` bytes and its mode now (None: no file); a link or a non-file there is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise CaseFileError(
                f"{path}: refused: a symbolic link (to {os.readlink(path)}); ragjudge writes only regular files",
                tip="write to the file it points to, or replace the link with a copy",
            ) from None
        raise CaseFileError(f"{path}: cannot read it before writing: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CaseFileError(
                f"{path}: refused: {kind_of(info.st_mode)}, not a file; nothing was written",
                tip="write to a regular file",
            )
        chunks: list[bytes] = []
        size = 0
        while size < most and (chunk := os.read(fd, min(1 << 20, most - size))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks), info.st_mode


def _umask() -> int:
    # The umask can only be read by setting it; set back at once (the CLI runs these writes on one thread).
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
