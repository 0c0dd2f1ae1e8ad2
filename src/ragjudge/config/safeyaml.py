"""YAML loading with limits: alias bombs, recursive anchors and deep nesting are refused cheaply.

PyYAML's safe loader shares aliased nodes, so a "billion laughs" document is
small once parsed, but everything that walks it afterwards (variable
substitution, validation) expands every alias: a 518-byte config ran for 90 s
past 1 GB. The document is composed into nodes first (cheap), its expanded size
counted with memoisation (linear in the distinct nodes), and only then built
into Python objects. Composing is recursive, so nesting depth is bounded as it
goes, well before Python's own recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DEPTH = 100
"""Nesting levels of mappings and lists; real configs and case files use fewer than 10."""
MAX_ALIAS_EXPANSION = 100_000
"""Nodes that aliases may add once expanded; a legitimate `<<: *defaults` adds a handful."""


class YamlLimitError(Exception):
    """The document is over a limit; `line` is 1-based, or None when it is the whole document."""

    def __init__(
        self, message: str, line: int | None = None, *, too_deep: bool = False, tip: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.too_deep = too_deep
        """Refused for its nesting (callers word that one the same way as a RecursionError)."""
        self.tip = tip
        """What to do, when the refusal has its own fix (else the caller's)."""


@dataclass(frozen=True)
class Loaded:
    """A parsed document and its root node (for line numbers)."""

    data: Any
    node: Node | None


class _Limited(yaml.SafeLoader):
    """Composes with a bound on nesting depth; mixed into whichever safe loader the caller uses."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        alias = self.check_event(yaml.AliasEvent)
        if not alias:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise YamlLimitError(f"nested deeper than {MAX_DEPTH} levels", mark.line + 1, too_deep=True)
        try:
            node: Node | None = super().compose_node(parent, index)
            assert node is not None  # compose_node is only called where a node starts
            return node
        finally:
            if not alias:
                self._depth -= 1


_LOADERS: dict[type[yaml.SafeLoader], type[_Limited]] = {}


def _loader(base: type[yaml.SafeLoader]) -> type[_Limited]:
    if base not in _LOADERS:
        # The limits first in the MRO, then the caller's resolvers (e.g. YAML 1.2 booleans for case files).
        _LOADERS[base] = type(f"Limited{base.__name__}", (_Limited, base), {})
    return _LOADERS[base]


def load(text: str, base: type[yaml.SafeLoader] = yaml.SafeLoader) -> Loaded:
    """Parse one YAML document within the limits; raises `yaml.YAMLError` or `YamlLimitError`.

    `base` is a `SafeLoader` subclass whose resolvers and constructors are used (never an unsafe loader).
    """
    loader = _loader(base)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Loaded(None, None)
        _check_expansion(node)
        _check_keys(node)
        return Loaded(loader.construct_document(node), node)
    finally:
        loader.dispose()


def _check_expansion(root: Node) -> None:
    """Count the nodes the document has once every alias is expanded; refuse cycles and bombs."""
    distinct: set[int] = set()
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    # Iterative post-order walk: the memo makes shared (aliased) nodes cost once.
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlLimitError("an anchor refers to itself (a recursive alias)", node.start_mark.line + 1)
        distinct.add(key)
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise YamlLimitError("an anchor refers to itself (a recursive alias)", child.start_mark.line + 1)
            if id(child) not in sizes:
                stack.append((child, False))
    added = sizes[id(root)] - len(distinct)
    if added > MAX_ALIAS_EXPANSION:
        raise YamlLimitError(f"aliases expand to over {MAX_ALIAS_EXPANSION:,} extra values (a YAML alias bomb?)", None)


def _check_keys(root: Node) -> None:
    """Refuse a mapping that writes one key twice: YAML keeps the last without a word, so a config with `gate:`
    twice silently dropped the first block's rules (JSONL lines already refuse it). A merge (`<<: *base`) that a
    key then overrides is not a repeat: only keys written in the mapping itself count."""
    seen_nodes: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if not isinstance(key, ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                    continue
                line = key.start_mark.line + 1
                if (key.tag, key.value) in first:
                    raise YamlLimitError(
                        f"key {key.value!r} is given twice in one mapping (first at line "
                        f"{first[(key.tag, key.value)]}); YAML would keep the last without a word",
                        line,
                        tip="give each key once: merge the two blocks into one",
                    )
                first[(key.tag, key.value)] = line
        stack.extend(_children(node))


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []
