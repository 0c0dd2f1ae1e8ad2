"""The house, read from the source: no circles between packages, no reaches into another module's private
names, and no two modules of one name unless they are the same kind of thing in parallel folders.

The graph is computed from every import statement in src/ragjudge (those inside functions and under
TYPE_CHECKING included: a late import is still a dependency), at the level of the package's rooms: a
subpackage (`gate`, `judge`, ...) or a module at the root (`cli`, `cases`, ...).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ragjudge"

# Parallel folders whose modules are the same kind of thing, so they may share a name.
PARALLEL = {
    "model.py": {"config", "report"},  # the pydantic models at the edges: the config file, the JSON report
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> Iterator[tuple[str, str | None]]:
    """(module imported, name imported from it or None) for every import of a ragjudge module in `path`."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target == "ragjudge" or target.startswith("ragjudge."):
                for alias in node.names:
                    yield target, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "ragjudge" or alias.name.startswith("ragjudge."):
                    yield alias.name, None


def room(module: str) -> str:
    """`ragjudge.gate.suite` -> `gate`; `ragjudge.cli` -> `cli`; `ragjudge` -> `ragjudge` (its face)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ragjudge"


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "examples" not in p.parts)


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sources():
        source = room(module_name(path))
        for target, name in imports(path):
            into = room(target)
            if into == "ragjudge" and name is not None and (PACKAGE / f"{name}.py").exists():
                into = name  # `from ragjudge import masking` imports the module masking
            if (PACKAGE / f"{name}").is_dir() and into == "ragjudge":
                into = str(name)
            if into != source:
                graph.setdefault(source, set()).add(into)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_find_cycle_finds_a_cycle_and_only_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_circles_between_the_packages_rooms() -> None:
    graph = package_graph()
    assert {"gate", "judge", "endpoint", "report", "config"} <= set(graph), "the graph was not read"
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_no_module_imports_another_modules_private_names() -> None:
    reaches = [
        f"{module_name(path)} imports {name} from {target}"
        for path in sources()
        for target, name in imports(path)
        if name is not None and name.startswith("_") and not name.startswith("__") and target != module_name(path)
    ]
    assert reaches == []


def test_no_two_modules_share_a_name_unless_parallel() -> None:
    names = Counter(p.name for p in sources() if p.name != "__init__.py")
    clashes = {}
    for name, count in names.items():
        if count < 2:
            continue
        folders = {p.parent.name for p in sources() if p.name == name}
        if folders != PARALLEL.get(name):
            clashes[name] = sorted(folders)
    assert clashes == {}


def test_the_root_holds_only_cross_cutting_modules() -> None:
    root = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert root == ["cli", "errors", "interrupt", "masking", "outpaths", "rules", "safetext"]


def test_the_judge_never_imports_the_endpoint_client() -> None:
    # What the two share (reading Retry-After, showing a URL) lives in `transport`; the judge has no use for
    # the endpoint's HTTP client, its template engine or its pool.
    reaches = [
        module_name(path)
        for path in sources()
        if module_name(path).startswith("ragjudge.judge")
        for target, _ in imports(path)
        if target == "ragjudge.endpoint.client"
    ]
    assert reaches == []


def test_every_file_the_docs_architecture_page_names_exists() -> None:
    section = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", section))
    folders = set(re.findall(r"^  ([a-z_]+)/ ", section, flags=re.M))
    assert len(named) > 20 and len(folders) > 10, "the section was not read"
    assert sorted(n for n in named if not n.startswith("tests/") and not (PACKAGE / n).is_file()) == []
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file() and p.name != "examples"}
    assert folders == subpackages


MAX_MODULE_LINES = 400
"""A module is read in one sitting: past this, it is doing more than one job."""


def test_no_module_is_over_the_line_limit() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_every_command_is_tested_under_tests_commands() -> None:
    tests = PACKAGE.parents[1] / "tests" / "commands"
    commands = sorted(p.stem for p in (PACKAGE / "commands").glob("*.py") if p.stem != "__init__")
    untested = [c for c in commands if not any(tests.glob(f"test_{c}*.py"))]
    assert untested == []
