"""Decoding an endpoint's JSON reply: duplicate keys noticed, non-finite numbers found.

Python's `json` keeps the last of two equal keys without a word, and accepts
`NaN`, `Infinity` and `1e999` as floats. A reply whose `cost_usd` is NaN would make
every cost rule compare false in silence, so a non-finite number anywhere in the
reply is a case error naming its field; a duplicate key is a warning on the case
(which value counted is then the last one, as in most JSON parsers). Every string,
keys included, is made safe (`ragjudge.safetext`): a lone surrogate or a control
character costs nothing but a U+FFFD.

`loads_bounded` is the reader for every other JSON from outside (saved reports, a baseline, the
reply `probe` shows): nesting past `MAX_DEPTH` is refused with a sentence, never a RecursionError
in whatever walks the data next.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ragjudge.safetext import clean_data, clean_text, is_safe

MAX_WARNINGS = 5
MAX_DEPTH = 64
"""Nesting a report or a reply may have: ragjudge's own reports are under 10 deep."""


class TooDeep(ValueError):
    """JSON nested deeper than allowed."""


@dataclass(frozen=True)
class Decoded:
    data: Any
    duplicate_keys: tuple[str, ...]
    """Dotted paths of keys that appeared more than once in one object (at most `MAX_WARNINGS`)."""


class _Pairs(dict[str, Any]):
    """An object that remembers which of its keys were repeated."""

    repeated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Pairs:
    obj = _Pairs(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        obj.repeated = tuple(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return obj


def decode(text: str) -> Decoded:
    """`text` as JSON; raises `json.JSONDecodeError` (and `RecursionError` for absurd nesting)."""
    data = json.loads(text, object_pairs_hook=_object)
    duplicates: list[str] = []
    _collect(data, "", duplicates)
    if "\\" in text or not is_safe(text):  # an unsafe string is spelt with an escape, or is there as it is
        data = clean_data(data)
        duplicates = [clean_text(path) for path in duplicates]
    return Decoded(data, tuple(duplicates[:MAX_WARNINGS]))


def _collect(node: Any, path: str, out: list[str]) -> None:
    stack = [(node, path)]
    while stack and len(out) < MAX_WARNINGS:
        node, path = stack.pop()
        if isinstance(node, _Pairs):
            out.extend(f"{path}.{k}" if path else k for k in dict.fromkeys(node.repeated))
            # Reversed onto the stack, so that keys are reported in document order.
            stack.extend((v, f"{path}.{k}" if path else k) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{path}.{i}" if path else str(i)) for i, v in reversed(list(enumerate(node))))


def non_finite(node: Any) -> tuple[str, float] | None:
    """The dotted path and value of the first NaN or infinite number in `node`, if any."""
    stack: list[tuple[Any, str]] = [(node, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path or "(the reply)", node
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{path}.{i}" if path else str(i)) for i, v in reversed(list(enumerate(node))))
    return None


def non_finite_reason(node: Any) -> str | None:
    """Why a reply holding a NaN or an infinite number is not read, naming its field; None when it holds none."""
    bad = non_finite(node)
    if bad is None:
        return None
    path, value = bad
    shown = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return f'reply field "{path}" is not a finite number ({shown})'


def duplicate_warnings(decoded: Decoded) -> tuple[str, ...]:
    """The case's warning for each key a reply repeated."""
    return tuple(f'reply has duplicate key "{key}"; the last value was used' for key in decoded.duplicate_keys)


def loads_bounded(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """`text` as JSON, nested at most `max_depth` deep; raises `json.JSONDecodeError` or `TooDeep`."""
    try:
        data = json.loads(text)
    except RecursionError:  # the parser's own limit, far past ours
        raise TooDeep(f"nested more than {max_depth} deep") from None
    if depth_over(data, max_depth):
        raise TooDeep(f"nested more than {max_depth} deep")
    return data


def depth_over(node: Any, max_depth: int) -> bool:
    """Whether `node` nests lists and objects more than `max_depth` deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(node, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth >= max_depth:
                return True
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return False
