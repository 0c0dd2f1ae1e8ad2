"""Paths as a reviewer reads them: relative to the workspace (the Action's checkout, else the working folder).

An absolute runner path says nothing to a reviewer, and an annotation lands on a file only when it names it
relative to the checkout.
"""

from __future__ import annotations

import os
from pathlib import Path


def workspace_root() -> str:
    """Where relative paths are relative to: the Action's workspace, else the working folder."""
    return os.environ.get("GITHUB_WORKSPACE") or os.getcwd()


def relative_paths(text: str, root: str | None = None) -> str:
    """`text` with every path under the workspace written relative to it."""
    base = (root or workspace_root()).rstrip("/\\")
    if len(base) < 2:
        return text  # "/" would strip every slash
    return text.replace(base + "/", "").replace(base + "\\", "")


def workspace_path(path: str | Path, root: str | None = None) -> str | None:
    """`path` relative to the workspace, as a POSIX path, both compared as real paths (symlinks followed, `..`
    resolved, so a checkout reached through a link still holds its files); None when it lies outside."""
    base = Path(root or workspace_root()).resolve()
    try:
        return Path(path).resolve().relative_to(base).as_posix()
    except ValueError:
        return None
