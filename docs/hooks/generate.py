"""MkDocs hook: the docs' generated parts, made from the code at build time.

A page holds a marker, `<!-- generated: NAME -->` (or `<!-- generated: NAME "ARGUMENT" -->`), where the part
goes; `on_page_markdown` replaces it. The parts: the report contract, the canary report and the config (each
walked from its top pydantic model), the metric tables (from the metric registry), the trace conventions (from
their registry), and parts of README.md.
An unknown marker, or one that cannot be made, fails the build.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import contract_tables  # mkdocs puts this folder on the path while it loads the hook
import metric_tables
import readme_parts
import trace_tables

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r'<!-- generated: ([a-z-]+)(?: "([^"]*)")? -->')


def _ours(module_name: str, name: str) -> Any:
    """`name` from this checkout's module `module_name`, whatever else is installed: the docs describe the code
    beside them (an editable install of another checkout would otherwise answer for a module missing here)."""
    src = ROOT / "src"
    sys.path.insert(0, str(src))
    try:
        module = importlib.import_module(module_name)
    finally:
        sys.path.remove(str(src))
    if not Path(module.__file__ or "").resolve().is_relative_to(src):
        raise RuntimeError(f"the docs need {module_name} from this checkout ({src}), not {module.__file__}")
    return getattr(module, name)


def failure_table(shapes: Any) -> str:
    """The common failure shapes every stream reader knows (`endpoint/failures.py`): name, shape, case error."""
    rows = ["| name | the shape | the case error opens |", "|---|---|---|"]
    for shape in shapes:
        rows.append(f"| `{shape.name}` | {shape.what} | `{shape.markers[0].reason}: <its message>` |")
    return "\n".join(rows)


PARTS: dict[str, Callable[[str], str]] = {
    "report-contract": lambda _: contract_tables.render(_ours("ragjudge.report.model", "Report"), anchor="report"),
    "canary-report": lambda _: contract_tables.render(
        _ours("ragjudge.canary.report", "CanaryReport"), anchor="canary-report"
    ),
    "config": lambda _: contract_tables.render(_ours("ragjudge.config.model", "Config"), anchor="config"),
    "metrics": lambda _: metric_tables.render(_ours("ragjudge.metrics", "SPECS")),
    "failure-shapes": lambda _: failure_table(_ours("ragjudge.endpoint.failures", "SHAPES")),
    "trace-conventions": lambda _: trace_tables.render(_ours("ragjudge.traces.conventions", "CONVENTIONS")),
    "readme-intro": lambda _: readme_parts.intro(ROOT / "README.md"),
    "readme-section": lambda title: readme_parts.section(ROOT / "README.md", title),
}
"""Each marker's name and what makes its part (given the marker's argument, "" when it has none)."""


def expand(markdown: str) -> str:
    """`markdown` with every marker replaced by its part."""

    def part(match: re.Match[str]) -> str:
        name, argument = match.group(1), match.group(2) or ""
        if name not in PARTS:
            raise ValueError(f"unknown docs marker {match.group(0)}: the markers are {', '.join(PARTS)}")
        return PARTS[name](argument)

    return MARKER.sub(part, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown)
