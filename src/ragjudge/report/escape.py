"""Making untrusted text (answers, questions, judge reasons) inert in Markdown.

Such text must not break a table or the layout, mention anyone, inject HTML,
or be evaluated as a template. Templates only ever receive it as data, and
every field passes through `inline` before it reaches the page.
"""

from __future__ import annotations

import re

# HTML is neutralised as entities; `@` too, so that no one is mentioned.
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "&#64;"}
# Markdown punctuation that could open emphasis, code, a link or image, or a table cell.
_MD = re.compile(r"([\\`*_\[\]|~])")


def inline(text: object, limit: int = 300) -> str:
    """One line of inert text, at most `limit` characters before escaping."""
    flat = " ".join(str(text if text is not None else "").split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    out = "".join(_HTML.get(ch, ch) for ch in flat)
    return _MD.sub(r"\\\1", out)


def code_id(text: object) -> str:
    """An id in code style: backticks are replaced so the span cannot close, `|` escaped for tables."""
    clean = " ".join(str(text).replace("`", "'").split())[:120].replace("|", "\\|")
    return f"`{clean}`" if clean else "`(none)`"
