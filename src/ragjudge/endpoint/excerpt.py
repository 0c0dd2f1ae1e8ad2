"""The server's explanation, quoted: an error reply's first characters, with the config's secrets masked.

A reason, a log line and `ragjudge probe` quote a failing reply through here, so a token the service echoes
back (in its error, or a header the config sent) is never shown.
"""

from __future__ import annotations

import json

from ragjudge import masking
from ragjudge.safetext import clean_text

EXCERPT_CHARS = 300
"""How much of an error reply's body a reason quotes."""


def header_secrets(headers: dict[str, str]) -> tuple[str, ...]:
    """Header values long enough to be tokens, and the token alone of "Bearer <token>"."""
    found = [v for v in headers.values() if len(v) >= 6]
    for value in list(found):
        found.extend(part for part in value.split()[1:] if len(part) >= 6)
    return tuple(sorted(set(found), key=len, reverse=True))


def mask(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` through the one masking facility (`ragjudge.masking`), `secrets` registered beside the rest."""
    masking.register(*secrets)
    return masking.mask(text)


def error_excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """The server's explanation: a JSON body's `detail`/`message`/`error` when it has one, else its text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # nested 100,000 deep: shown as the text it is (found by fuzzing)
        data = None
    picked_text = None
    if isinstance(data, dict):
        key = next((k for k in ("detail", "message", "error") if k in data), None)
        picked = {key: data[key]} if key is not None else data
        try:
            picked_text = json.dumps(picked, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, ValueError):
            picked_text = None
    text = clean_text(picked_text if picked_text is not None else " ".join(text.split()))
    if text in ("{}", "[]", '""', "null"):
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"
