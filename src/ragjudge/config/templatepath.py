"""Where a comment template may be read from.

The template's text ends up in the PR comment, so a path that a pull request can
change (`template:` in ragjudge.yml) must not read outside the repository:
`template: /proc/self/environ` would publish the job's secrets. A path given on
the command line (`--template`) is the operator's own choice and may be anywhere,
but never a device, a pipe or a kernel pseudo-file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ragjudge.errors import ConfigError

MAX_TEMPLATE_BYTES = 1_000_000
_PSEUDO = (Path("/proc"), Path("/sys"), Path("/dev"))


def check_readable(path: Path, key: str) -> Path:
    """`path` resolved, when it is a regular file outside /proc, /sys and /dev; else exit 2 naming `key`."""
    resolved = path.resolve()
    if any(resolved.is_relative_to(root) for root in _PSEUDO):
        raise ConfigError(f"{key}: {path}: refused: not a template file (a system path)")
    if not resolved.exists():
        raise ConfigError(f"{key}: {path}: cannot read the comment template (file not found)")
    if not resolved.is_file():
        raise ConfigError(f"{key}: {path}: refused: not a regular file")
    if resolved.stat().st_size > MAX_TEMPLATE_BYTES:
        raise ConfigError(f"{key}: {path}: refused: over {MAX_TEMPLATE_BYTES:,} bytes")
    return resolved


def check_contained(path: Path, roots: Sequence[Path], key: str) -> Path:
    """`path` resolved, when it lies inside one of `roots` (the workspace, the config's folder) once links are
    followed; whether it exists is checked when it is read (`check_readable`)."""
    resolved = path.resolve()
    if resolved.exists():
        check_readable(path, key)
    if not any(resolved.is_relative_to(root.resolve()) for root in roots):
        where = " or ".join(str(r) for r in roots)
        raise ConfigError(
            f"{key}: {path}: refused: the template must be a file under {where}",
            tip="keep the template in the repository, or pass it with --template",
        )
    return resolved


def workspace() -> Path:
    """The repository being evaluated: `$GITHUB_WORKSPACE` on a runner, else the working directory."""
    return Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
