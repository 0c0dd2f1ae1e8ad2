"""HTTP header names and values from the config, checked at load.

`requests` encodes header values as latin-1 and refuses CR/LF only when it sends,
so a bad value used to end as an internal UnicodeEncodeError mid-run. Checked
here, it is exit 2 naming the header. Values are never quoted: they may be secrets.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

# RFC 9110 `token`: the characters a field name may hold.
_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def header_problem(name: str, value: str) -> str | None:
    """Why `name: value` cannot be sent, or None when it can."""
    if not _NAME.fullmatch(name):
        return f"header {name!r}: the name must be letters, digits and !#$%&'*+-.^_`|~ only"
    if "\r" in value or "\n" in value:
        return f"header {name!r}: the value contains a line break (CR or LF)"
    if "\0" in value:
        return f"header {name!r}: the value contains a NUL character"
    for position, char in enumerate(value):
        if ord(char) > 0xFF:
            return (
                f"header {name!r}: the value has a character outside latin-1 at position {position + 1} "
                "(HTTP header values are latin-1; percent-encode or base64 it)"
            )
    return None


def check_headers(headers: dict[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        problem = header_problem(name, value)
        if problem is not None:
            raise ValueError(problem)
    return headers


Headers = Annotated[dict[str, str], AfterValidator(check_headers)]
"""A header mapping checked at load."""
