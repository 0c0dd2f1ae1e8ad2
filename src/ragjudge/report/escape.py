"""Making untrusted text (answers, questions, case ids, judge reasons) inert in Markdown.

Such text must not break a table or the layout, mention anyone, inject HTML,
or be evaluated as a template. Templates only ever receive it as data, and
every field passes through one of these functions before it reaches the page:

* `inline` for Markdown contexts (table cells, paragraphs, list items);
* `code_id` for ids in Markdown contexts, shown in code style;
* `html_text` inside raw HTML blocks such as `<summary>`, where Markdown is
  not processed (so backslash escapes would show) but entities are.
"""

from __future__ import annotations

import re

# HTML is neutralised as entities. `@` gets a zero-width space after it: GitHub finds mentions in the
# rendered text, so neither `\@` nor `&#64;` stops a ping (github/markup#1168), but `@\u200b` does.
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "@\u200b"}
_HTML_ATTR = {**_HTML, '"': "&quot;", "'": "&#39;"}
# `#123` would cross-reference issue 123 (and leave a "mentioned this" trail there): same remedy.
_ISSUE_REF = re.compile(r"#(?=\d)")
# Markdown punctuation that could open emphasis, code, a link or image, a heading or a table cell.
_MD = re.compile(r"([\\`*_\[\]|~#])")
# At the start of a list item, these would open a nested list.
_LEADING_MARKER = re.compile(r"^(\d{1,9})([.)])(?=\s|$)|^([-+])(?=\s|$)")


def _flat(text: object, limit: int) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def inline(text: object, limit: int = 300) -> str:
    """One line of inert Markdown text, at most `limit` characters before escaping."""
    out = _MD.sub(r"\\\1", _flat(text, limit))
    out = _LEADING_MARKER.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", out)
    out = _ISSUE_REF.sub("#\u200b", out)
    # Entities last, so that the `#` of an entity is not escaped.
    return "".join(_HTML.get(ch, ch) for ch in out)


def code_id(text: object, limit: int = 120) -> str:
    """An id in code style for Markdown contexts: `<code>` around inert text (safe in table cells)."""
    clean = inline(text, limit)
    return f"<code>{clean}</code>" if clean else "<code>(none)</code>"


def html_text(text: object, limit: int = 300) -> str:
    """One line of inert text inside a raw HTML block, where Markdown is not processed."""
    return "".join(_HTML_ATTR.get(ch, ch) for ch in _ISSUE_REF.sub("#\u200b", _flat(text, limit)))
