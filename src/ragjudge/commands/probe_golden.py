"""`ragjudge probe`'s check that the probed case's `golden_context_ids` can match the passage ids read.

A reply that maps but whose passage ids never equal a golden id (Haystack's content hashes) or that carries no
passages at all (a LangServe chain whose output type is inferred drops `context`) fails context_recall in every
case of a run; probe says so before the gate runs, with where in the reply the golden ids do appear.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragjudge.cases.case import Case
    from ragjudge.config.endpoint_config import ResponseMapping
    from ragjudge.endpoint.trace import Trace

MAX_NODES = 20_000
"""The walk looking for golden ids stops after this many values (a reply is untrusted)."""
MAX_DEPTH = 16


def _found(data: Any, wanted: set[str]) -> list[str]:
    """Paths of the strings or numbers in `data` equal to one of `wanted` (every list item, breadth first)."""
    paths: list[str] = []
    level: list[tuple[str, Any]] = [("", data)]
    visited = 0
    for _ in range(MAX_DEPTH):
        nxt: list[tuple[str, Any]] = []
        for where, node in level:
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            for key, value in items:
                visited += 1
                if visited > MAX_NODES:
                    return paths
                path = f"{where}.{key}" if where else str(key)
                if isinstance(value, str | int) and not isinstance(value, bool) and str(value) in wanted:
                    paths.append(path)
                elif isinstance(value, dict | list):
                    nxt.append((path, value))
        level = nxt
    return paths


def _inside_passage(path: str, retrieved: str) -> str | None:
    """`meta.doc_id` for `<retrieved>.3.meta.doc_id`; None when the path is not inside a passage."""
    prefix = f"{retrieved}." if retrieved else ""
    if not path.startswith(prefix):
        return None
    index, _, rest = path[len(prefix) :].partition(".")
    return rest if index.isdigit() and rest else None


def _ids(values: tuple[str, ...] | list[str], limit: int = 3) -> str:
    shown = [v if len(v) <= 20 else v[:19] + "…" for v in values[:limit]]
    return ", ".join(shown) + (f" and {len(values) - limit} more" if len(values) > limit else "")


def golden_warnings(case: Case, trace: Trace, data: Any, mapping: ResponseMapping) -> list[str]:
    """Warnings when no golden id of `case` is among the passage ids; empty when one is, or there are none."""
    from ragjudge.endpoint.reply import locate

    golden = tuple(case.golden_context_ids)
    if not golden or set(golden) & set(trace.retrieved_ids):
        return []
    _, retrieved = locate(data, mapping, "retrieved")
    where = _found(data, set(golden))
    relative = sorted({r for r in (_inside_passage(p, retrieved) for p in where) if r})
    if relative:
        at = f"the golden ids are at {relative[0]} inside each passage: map endpoint.response.retrieved_id: "
        at += relative[0]
    elif where:
        at = f"the golden ids appear at {', '.join(where[:3])}: map the passage list and its id there"
    else:
        at = "the reply holds no golden id anywhere: check the ids in your cases against your documents' ids"
    if trace.passages_unknown:
        # As a run reads it: unknown, never a failed recall (a rule on it makes the case an error).
        return [
            f"case {case.id} has golden_context_ids ({_ids(golden)}) but the service exposes no passages "
            "(endpoint.response.retrieved is not mapped and the reply has none), so context_recall is unknown and a "
            "rule on it makes the case an error: map endpoint.response.retrieved to the passage list (a LangServe "
            f"chain whose output type is inferred leaves `context` out of the reply: return the documents); {at}"
        ]
    if not trace.passages:
        return [
            f"case {case.id} has golden_context_ids ({_ids(golden)}) but the reply carries no passages, so "
            "context_recall fails: map endpoint.response.retrieved to the passage list (a LangServe chain whose "
            f"output type is inferred leaves `context` out of the reply: return the documents); {at}"
        ]
    return [
        f"none of case {case.id}'s golden_context_ids ({_ids(golden)}) is among the passage ids read "
        f"({_ids(list(trace.retrieved_ids))}), so context_recall is 0; {at}"
    ]
