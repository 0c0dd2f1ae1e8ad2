"""Text from outside made safe to keep and to write: no lone surrogates, no control characters.

JSON may spell any UTF-16 code unit (`"\\ud800"`), and Python keeps a lone one as a
code point that no UTF-8 writer accepts: one such reply used to abort the whole run
when the report was serialised. Control characters (NUL, ESC, the C1 range) are
valid JSON but not valid XML, parse errors in HTML, and terminal escapes on a
console. So every text that enters from outside (endpoint replies, plain or
streamed; judge replies; case, label and trace files; saved reports read back)
passes through `clean_data` where it is read, and every writer passes its text
through `clean_text` once more before it writes.

Each unsafe code point becomes U+FFFD (the replacement character), so the reader
sees that something was there; tab, LF and CR are kept. A surrogate pair split in
two (two stream deltas) is joined into its character first.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"

_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_safe(text: str) -> bool:
    """True when `text` holds nothing `clean_text` would replace."""
    return _UNSAFE.search(text) is None


def clean_text(text: str) -> str:
    """`text` with each lone surrogate and control character (but tab, LF, CR) replaced by U+FFFD."""
    if _UNSAFE.search(text) is None:
        return text
    if _SURROGATE.search(text) is not None:
        # Through UTF-16: a high and a low surrogate side by side become their character, a lone one U+FFFD.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _UNSAFE.sub(REPLACEMENT, text)


def clean_data(node: Any) -> Any:
    """Decoded JSON (or YAML) with every string, keys included, through `clean_text`.

    Objects and lists are cleaned in place (they were just decoded, nobody else holds them) without
    recursion, so nesting as deep as the decoder allowed costs no stack. Returns the cleaned value.
    """
    if isinstance(node, str):
        return clean_text(node)
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(isinstance(k, str) and _UNSAFE.search(k) for k in item):
                pairs = [(clean_text(k) if isinstance(k, str) else k, v) for k, v in item.items()]
                item.clear()
                item.update(pairs)
            for key, value in item.items():
                if isinstance(value, str):
                    if _UNSAFE.search(value):
                        item[key] = clean_text(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            for i, value in enumerate(item):
                if isinstance(value, str):
                    if _UNSAFE.search(value):
                        item[i] = clean_text(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
    return node
