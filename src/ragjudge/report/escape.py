"""Making untrusted text (answers, questions, case ids, judge reasons) inert in Markdown.

Such text must not break a table or the layout, mention anyone, inject HTML,
or be evaluated as a template. Templates only ever receive it as data, and
every field passes through one of these functions before it reaches the page:

* `inline` for Markdown contexts (table cells, paragraphs, list items);
* `code_id` for ids in Markdown contexts, shown in code style;
* `html_text` inside raw HTML blocks such as `<summary>`, where Markdown is
  not processed (so backslash escapes would show) but entities are;
* `prose` for ragjudge's own sentences that name a command or a key in
  backticks (a warning's "run `ragjudge dedupe`"): each such span is `<code>`,
  which reads as code in Markdown and in HTML blocks alike, never an escaped
  backtick shown as one.
"""

from __future__ import annotations

import re

# HTML is neutralised as entities. `@` gets a zero-width space after it: GitHub finds mentions in the
# rendered text, so neither `\@` nor `&#64;` stops a ping (github/markup#1168), but `@\u200b` does.
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "@\u200b"}
_HTML_ATTR = {**_HTML, '"': "&quot;", "'": "&#39;"}
# `#123` would cross-reference issue 123 (and leave a "mentioned this" trail there): same remedy.
# `owner/repo#123` is covered by the same rule, `owner/repo@sha` by the `@` one.
_ISSUE_REF = re.compile(r"#(?=\d)")
# The other autolinks GitHub makes in comments: `GH-123`; a commit SHA (7 to 40 hex digits, split
# every 6 so that no piece is long enough); and bare issue, pull-request, discussion and commit URLs (GitHub
# turns them into cross-references), whose scheme or `www.` is broken so that they stay text. Other URLs stay
# links: a link mentions no one.
_GH_REF = re.compile(r"(?i)(GH-)(?=\d)")
_SHA = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{7,}(?![0-9A-Za-z])")
_URL = re.compile(r"(?i)(https?:|www\.)(?=\S*/(?:issues|pull|pulls|discussions|commit)/\w)")
# Markdown punctuation that could open emphasis, code, a link or image, a heading or a table cell.
_MD = re.compile(r"([\\`*_\[\]|~#])")
# At the start of a list item, these would open a nested list.
_LEADING_MARKER = re.compile(r"^(\d{1,9})([.)])(?=\s|$)|^([-+])(?=\s|$)")


def _unlinked(text: str) -> str:
    text = _ISSUE_REF.sub("#\u200b", text)
    text = _GH_REF.sub("\\1\u200b", text)
    text = _SHA.sub(lambda m: "\u200b".join(m[0][i : i + 6] for i in range(0, len(m[0]), 6)), text)
    return _URL.sub(lambda m: m[1][:-1] + "\u200b" + m[1][-1], text)


def _flat(text: object, limit: int) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def inline(text: object, limit: int = 300) -> str:
    """One line of inert Markdown text, at most `limit` characters before escaping."""
    return _markdown(_flat(text, limit))


def _markdown(flat: str) -> str:
    out = _MD.sub(r"\\\1", flat)
    out = _LEADING_MARKER.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", out)
    out = _unlinked(out)
    # Entities last, so that the `#` of an entity is not escaped.
    return "".join(_HTML.get(ch, ch) for ch in out)


def _html(flat: str) -> str:
    return "".join(_HTML_ATTR.get(ch, ch) for ch in _unlinked(flat))


def code_id(text: object, limit: int = 120) -> str:
    """An id in code style for Markdown contexts: `<code>` around inert text (safe in table cells)."""
    clean = inline(text, limit)
    return f"<code>{clean}</code>" if clean else "<code>(none)</code>"


def html_text(text: object, limit: int = 300) -> str:
    """One line of inert text inside a raw HTML block, where Markdown is not processed."""
    return _html(_flat(text, limit))


_SPAN = re.compile(r"`([^`\n]{1,200})`")


def prose(text: object, limit: int = 300, html: bool = False) -> str:
    """`inline` (or `html_text` with `html`), with each backtick-quoted span as `<code>`: the words a sentence
    quotes as code read as code wherever the sentence lands."""
    flat = _flat(text, limit)
    plain = _html if html else _markdown
    out, at = [], 0
    for match in _SPAN.finditer(flat):
        out.append(plain(flat[at : match.start()]))
        out.append(f"<code>{_html(match[1])}</code>")
        at = match.end()
    out.append(plain(flat[at:]))
    return "".join(out)
