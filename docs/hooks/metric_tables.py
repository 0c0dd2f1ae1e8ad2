"""The metric tables of the docs, one per scope, read from the metric registry (`ragjudge.metrics.SPECS`).

A metric's spec says its scopes, unit, direction, what it needs to have a value and what it is; the tables
only lay that out, so a metric added to the registry is documented without touching the docs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from contract_tables import cell

SCOPES = {
    "case": "Per case: `gate.case`",
    "suite": "The suite: `gate.suite`",
    "regression": "Against main: `gate.regression`",
    "canary": "The canary: `canary.rules`",
}
"""Each scope a metric may have, in the order the tables appear, with its table's heading."""

_BETTER = {"higher": "higher", "lower": "lower", "": "neither"}


def render(specs: Iterable[Any], *, level: int = 3) -> str:
    """A heading of `level` and a table per scope, each listing the specs of that scope in registry order."""
    specs = list(specs)
    unknown = sorted({scope for spec in specs for scope in spec.scopes} - SCOPES.keys())
    if unknown:
        raise ValueError(f"metric scopes the docs have no table for: {', '.join(unknown)}")
    out = []
    for scope, title in SCOPES.items():
        rows = [spec for spec in specs if scope in spec.scopes]
        if not rows:
            continue
        out.append(f"{'#' * level} {title}\n")
        out.append("| metric | unit | better when | needs | what it is |\n|---|---|---|---|---|")
        for spec in rows:
            cells = [
                f"`{spec.name}`",
                spec.unit or "",
                _BETTER[spec.direction],
                ", ".join(spec.needs),
                spec.description,
            ]
            out.append("| " + " | ".join(cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out)
