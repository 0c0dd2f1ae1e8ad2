"""Warnings by kind: 58 warnings that say the same thing of 58 cases are one line with a count.

A warning's kind is its text without what is particular to it: quoted names, bracketed places and numbers.
The first warning of a kind is shown as written, its paths made relative to the workspace (an absolute runner
path says nothing to a reviewer), and the rest are counted; the JSON report keeps every one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.report.workspace import relative_paths

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_BRACKETED = re.compile(r"\([^()]*\)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def kind_of(warning: str) -> str:
    """The text two warnings of one kind share."""
    text = _QUOTED.sub("'…'", warning)
    text = _BRACKETED.sub("(…)", text)
    return _NUMBER.sub("N", text)


@dataclass(frozen=True)
class WarningKind:
    """Warnings that say the same thing: the first as written, and how many there are."""

    first: str
    count: int

    def text(self) -> str:
        """The first warning, and `(and N more like it)` when there are more."""
        return self.first if self.count == 1 else f"{self.first} (and {self.count - 1} more like it)"


def by_kind(warnings: Sequence[str], root: str | None = None) -> list[WarningKind]:
    """One entry per kind, in the order each kind first appears."""
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for warning in warnings:
        shown = relative_paths(warning, root)
        kind = kind_of(shown)
        first.setdefault(kind, shown)
        counts[kind] = counts.get(kind, 0) + 1
    return [WarningKind(first[kind], counts[kind]) for kind in first]
