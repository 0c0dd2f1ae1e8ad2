"""Parts of README.md shown in the docs as they are written there, so the two never say it twice.

The README's links are relative to the repository's root: a link into `docs/` becomes relative to the docs,
and a link to another file of the repository (which the site does not hold) becomes its text.
"""

from __future__ import annotations

import re
from pathlib import Path

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def intro(readme: Path) -> str:
    """What the README says before its first section, without its title."""
    text = readme.read_text(encoding="utf-8")
    body = text.split("\n", 1)[1] if text.startswith("# ") else text
    return _relink(body.split("\n## ", 1)[0].strip("\n"))


def section(readme: Path, title: str) -> str:
    """The README's `## title` section, heading included, up to the next `## ` section."""
    text = readme.read_text(encoding="utf-8")
    start = text.find(f"\n## {title}\n")
    if start < 0:
        raise ValueError(f"README.md has no section '## {title}'")
    rest = text[start + 1 :]
    end = rest.find("\n## ", 1)
    return _relink(rest if end < 0 else rest[:end]).strip("\n")


def _relink(markdown: str) -> str:
    def link(match: re.Match[str]) -> str:
        text, target = match.group(1), match.group(2)
        if re.match(r"[a-z]+:|#", target):
            return match.group(0)
        if target.startswith("docs/"):
            return f"[{text}]({target.removeprefix('docs/')})"
        return text

    return _LINK.sub(link, markdown)
