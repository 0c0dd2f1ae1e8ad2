"""Secrets kept out of what a span gives the report: the run's registered secrets, values of keys that name a
credential, and the shapes a credential has whoever registered it (`Bearer ...`, `sk-...`)."""

from __future__ import annotations

import json
import re
from typing import Any

from ragjudge import masking

MASK = "***"
_SECRET_KEY = re.compile(r"(?i)authori[sz]ation|api[_-]?key|token|password|passwd|secret|cookie|credential")
_SECRET_SHAPE = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}|\bsk-[A-Za-z0-9_-]{16,}")
_TOKEN_COUNT = re.compile(r"(?i)(input|output|prompt|completion|total|max)_?tokens?$|^tokens?$|token_count")


def secret_key(key: str) -> bool:
    """`api_key`, `Authorization`, ...; not a token count (`input_tokens`)."""
    return bool(_SECRET_KEY.search(key)) and not _TOKEN_COUNT.search(key)


def redact_text(text: str) -> str:
    """Registered secrets and credential shapes masked; JSON text has its credential-named keys' values masked."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) < 1_000_000:
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict | list):
            text = json.dumps(_redact_data(data, 0), ensure_ascii=False)
    return _SECRET_SHAPE.sub(lambda m: (m.group(1) + " " if m.group(1) else "") + MASK, masking.mask(text))


def _redact_data(node: Any, depth: int) -> Any:
    if depth > 32:
        return None
    if isinstance(node, dict):
        return {k: MASK if secret_key(str(k)) else _redact_data(v, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_redact_data(v, depth + 1) for v in node]
    return node
