"""`${VAR}` and `${VAR:-fallback}` substitution over a parsed YAML tree.

Substitution happens after YAML parsing so that a value containing quotes or
colons cannot change the document's structure. A value substituted into a key
that carries credentials (a URL, a header, a body, a key) is registered as a
secret (`ragjudge.masking`), so no output ever shows it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ragjudge import masking
from ragjudge.errors import ConfigError

SECRET_KEYS = frozenset({"url", "body", "api_key", "base_url", "treatment", "control"})
"""Keys whose substituted values are secrets; anything under a `headers` mapping is one too."""

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def substitute(tree: Any, source: str, env: Mapping[str, str] | None = None) -> Any:
    """Return `tree` with every `${VAR}` in its strings replaced from `env`.

    Keys and list items whose value ends up empty (or null) are dropped, so an
    optional key set to `${VAR:-}` means "unset" and its default applies.
    """
    environ = os.environ if env is None else env
    return _walk(tree, (), source, environ)


def _walk(node: Any, path: tuple[str, ...], source: str, env: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            new = _walk(value, (*path, str(key)), source, env)
            # A literal null stays: `judge.cache: null` means no cache. Only a value substitution emptied is unset.
            if new == "":
                continue
            if new is None and not _nullable(path, key):
                continue
            out[key] = new
        return out
    if isinstance(node, list):
        items = (_walk(item, (*path, str(i)), source, env) for i, item in enumerate(node))
        return [item for item in items if item is not None and item != ""]
    if isinstance(node, str):
        return _replace(node, path, source, env)
    return node


NULLABLE = frozenset({("judge", "cache")})
"""Keys whose null says something (no cache) rather than "unset": the only ones a literal null reaches the config
with; elsewhere a null key is dropped and its default applies, as it always was."""


def _nullable(path: tuple[str, ...], key: object) -> bool:
    return (*path, str(key)) in NULLABLE


def _replace(text: str, path: tuple[str, ...], source: str, env: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name, fallback = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and fallback is not None):
            if fallback is not None:
                return fallback
            where = ".".join(path) or "(top level)"
            raise ConfigError(
                f"{source}: {where}: environment variable {name} is not set",
                tip=f"export {name}=..., or write ${{{name}:-default}} to give a fallback",
            )
        if _carries_secrets(path):
            masking.register(value)
        return value

    return _REF.sub(one, text)


def _carries_secrets(path: tuple[str, ...]) -> bool:
    return "headers" in path[:-1] or bool(path and path[-1] in SECRET_KEYS)
