"""Dotted paths into a decoded JSON reply: following one (`dig`), setting one (`put`), finding one by a key's
name (`find_named`), and saying in words what was found where a path stops (`describe`).

A path's parts are object keys or list indexes (`data.items.0.text`; a negative index counts from the end).
A path that leads nowhere gives `MISSING`, never None: null is a value a reply can hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MISSING: Any = object()
"""What `dig` gives for a path that leads nowhere."""
MAX_PUT_INDEX = 10_000
"""The largest list index `put` makes room for: `answer: a.400000000` would fill a list with 400 million nulls
(3 GB) before the reader could look; a reply's mapped paths never index that deep."""


def _step(node: Any, part: str) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
        return node[int(part)]
    return MISSING


def dig(data: Any, path: str) -> Any:
    """Follow a dotted path (`data.items.0.text`); `MISSING` when it leads nowhere."""
    node = data
    for part in path.split("."):
        node = _step(node, part)
        if node is MISSING:
            return MISSING
    return node


def is_missing(value: Any) -> bool:
    return value is MISSING


def put(target: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at a dotted path, making what is on the way in the reply's own shapes: a number steps into a
    list (`choices.0.message.content` builds `{"choices": [{"message": ...}]}`), any other part into an object."""
    parts = path.split(".")
    node: Any = target
    for part, following in zip(parts, [*parts[1:], None], strict=True):
        index = int(part) if part.isdigit() and isinstance(node, list) else None
        if index is None and isinstance(node, list):
            return  # a name inside a list another path made: nothing the reader could find there
        if index is not None and index > MAX_PUT_INDEX:
            return  # nowhere a reader could reach either: the value is not put, so the path finds nothing
        if following is None:
            if index is not None:
                node.extend([None] * (index + 1 - len(node)))
                node[index] = value
            else:
                node[part] = value
            return
        fresh: Any = [] if following.isdigit() else {}
        if index is not None:
            node.extend([None] * (index + 1 - len(node)))
            if not isinstance(node[index], dict | list):
                node[index] = fresh
            node = node[index]
        else:
            if not isinstance(node.get(part), dict | list):
                node[part] = fresh
            node = node[part]


def deepest(data: Any, path: str) -> tuple[str, Any]:
    """The longest prefix of `path` that resolves, and what is there ("" is the reply itself)."""
    node, reached = data, ""
    for part in path.split("."):
        nxt = _step(node, part)
        if nxt is MISSING:
            break
        node, reached = nxt, f"{reached}.{part}" if reached else part
    return reached, node


def describe(node: Any) -> str:
    """What a JSON value is, in words, with the keys of an object: never its Python repr."""
    if isinstance(node, dict):
        keys = [str(k) for k in node]
        shown = ", ".join(keys[:12]) + (f" and {len(keys) - 12} more" if len(keys) > 12 else "")
        return f"an object with keys {shown}" if keys else "an empty object"
    if isinstance(node, list):
        kinds = sorted({_kind(item) for item in node})
        of = f" of {kinds[0]}s" if len(kinds) == 1 else ""
        return f"a list of {len(node)} item{'s' if len(node) != 1 else ''}{of}" if node else "an empty list"
    if node is None:
        return "null"
    if isinstance(node, bool):
        return f"the boolean {'true' if node else 'false'}"
    if isinstance(node, int | float):
        return f"the number {node:g}"
    return "a string"


def _kind(node: Any) -> str:
    if isinstance(node, dict):
        return "object"
    if isinstance(node, list):
        return "list"
    if isinstance(node, bool):
        return "boolean"
    if isinstance(node, int | float):
        return "number"
    return "null" if node is None else "string"


def scalar_text(value: Any) -> str | None:
    """Text from a string or a number; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return None


def find_named(node: Any, names: Sequence[str], path: str = "", depth: int = 4) -> str | None:
    """The path to the first key called one of `names` holding a string or number (breadth first)."""
    level: list[tuple[str, Any]] = [(path, node)]
    for _ in range(depth):
        nxt: list[tuple[str, Any]] = []
        for where, item in level:
            if isinstance(item, list) and item:
                nxt.append((f"{where}.0" if where else "0", item[0]))
            if not isinstance(item, dict):
                continue
            for name in names:
                if name in item and scalar_text(item[name]) is not None:
                    return f"{where}.{name}" if where else name
            nxt.extend((f"{where}.{k}" if where else str(k), v) for k, v in item.items())
        level = nxt
    return None
