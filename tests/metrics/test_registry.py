"""The metric registry is the one home of every metric: no other module spells a metric's name, and every
spec is whole (a scope, a description, a way to be made for a suite metric, a figure for a ratio)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ragjudge.metrics import names, registry
from ragjudge.metrics.spec import Computed, Mean, MetricSpec, Percentile, Total, reason_number, table_number

PACKAGE = Path(registry.__file__).resolve().parents[1]
HOME = PACKAGE / "metrics"
NAMES = frozenset(
    value for key, value in vars(names).items() if key.isupper() and not key.endswith(("_PREFIX", "_SUFFIX"))
) | {f"{names.JUDGE_PREFIX}{d}" for d in registry.JUDGE_DIMENSIONS}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # A docstring, or an attribute's docstring: a string statement of its own.
            found |= {id(s.value) for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
    return found


def spelled_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of every string literal of `source` that is a metric's name, docstrings aside."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in NAMES and id(node) not in docs
    ]


_QUOTED = re.compile(r"""["']([A-Za-z0-9_.]+)["']""")


def test_no_module_outside_the_registry_spells_a_metric_name() -> None:
    spelled = [
        f"{path.relative_to(PACKAGE)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if HOME not in path.parents
        for line, name in spelled_names(path.read_text(encoding="utf-8"))
    ]
    assert not spelled, "use ragjudge.metrics.names or the metric's spec: " + "; ".join(spelled)


def test_no_template_spells_a_metric_name() -> None:
    spelled = [
        f"{path.relative_to(PACKAGE)}: {m.group(1)}"
        for path in sorted(PACKAGE.rglob("*.j2"))
        for m in _QUOTED.finditer(path.read_text(encoding="utf-8"))
        if m.group(1) in NAMES
    ]
    assert not spelled, "templates get the names from the registry: " + "; ".join(spelled)


def test_the_scan_finds_a_spelled_name_and_skips_docstrings() -> None:
    source = '"""About p95_latency_ms."""\nX = "p95_latency_ms"\nclass A:\n    y: int\n    """faithfulness"""\n'
    assert spelled_names(source) == [(2, "p95_latency_ms")]


def test_every_spec_is_whole() -> None:
    seen: set[str] = set()
    for spec in registry.SPECS:
        assert spec.name not in seen, spec.name
        seen.add(spec.name)
        assert spec.scopes and spec.description.endswith("."), spec.name
        if "suite" in spec.scopes:
            assert spec.over_cases is not None, f"{spec.name}: a suite metric says how the cases make it"
        if isinstance(spec.over_cases, Percentile | Mean | Total):
            made_of = registry.lookup(spec.over_cases.of, "case")
            assert made_of is not None, f"{spec.name} is made of {spec.over_cases.of}, which is no case metric"
        if spec.compares is not None:
            assert registry.lookup(spec.compares, "suite") is not None, f"{spec.name} compares no suite figure"


@pytest.mark.parametrize("spec", registry.SPECS, ids=lambda s: s.name)
def test_a_spec_is_found_under_its_own_name_or_a_member(spec: MetricSpec) -> None:
    name = spec.name.replace("<dimension>", registry.JUDGE_DIMENSIONS[0]).replace("<name>", "asks_for_order")
    for scope in spec.scopes:
        assert registry.lookup(name, scope) is spec


@pytest.mark.parametrize(
    ("name", "scope", "member"),
    [
        ("criteria.asks_mean", "suite", "asks"),
        ("criteria.asks_mean", "case", "asks_mean"),
        ("criteria.asks_delta", "regression", "asks"),
        ("judge.tone", "case", "tone"),
        ("judge.tone_delta", "regression", "tone"),
        ("pass_rate", "suite", None),
    ],
)
def test_a_family_names_its_member_as_the_scope_reads_it(name: str, scope: str, member: str | None) -> None:
    assert registry.member(name, scope) == member  # type: ignore[arg-type]


def test_unknown_names_and_scopes_are_none() -> None:
    assert registry.lookup("judge.accuracy") is None
    assert registry.lookup("p95_latency_ms", "case") is None
    assert registry.lookup("context_recall", "suite") is None
    with pytest.raises(KeyError):
        registry.spec("recall")


def test_what_a_metric_reads_follows_its_figures_down_to_the_case() -> None:
    assert registry.reads(names.P95_LATENCY_RATIO) == {
        names.P95_LATENCY_RATIO,
        names.P95_LATENCY_MS,
        names.LATENCY_MS,
    }
    assert registry.reads(names.PASS_RATE) == {names.PASS_RATE}
    assert registry.compared("criteria.asks_delta") == "criteria.asks"
    assert registry.compared(names.NEWLY_FAILING) is None


@pytest.mark.parametrize(
    ("name", "value", "reason", "table"),
    [
        ("p95_latency_ms", 3012.4, "3012", "3012"),
        ("faithfulness", 0.5, "0.500", "0.500"),  # a fraction reads the same in a reason and a table
        ("pass_rate_delta", -0.04, "-0.040", "-0.040"),
        ("newly_failing", 2.0, "2", "2"),
        ("judge.tone", 4.0, "4", "4.00"),
        ("criteria.x", 3.5, "3.50", "3.50"),
        ("cost_usd", 0.01234, "0.0123", "$0.0123"),
        ("p95_latency_ratio", 1.234, "1.23", "1.234"),
    ],
)
def test_a_value_is_written_by_its_unit(name: str, value: float, reason: str, table: str) -> None:
    spec = registry.spec(name)
    assert reason_number(spec, value) == reason
    assert table_number(spec, value) == table


def test_computed_suite_metrics_are_the_suites_own() -> None:
    computed = {s.name for s in registry.SPECS if isinstance(s.over_cases, Computed)}
    assert computed == {
        names.COST_USD,
        names.JUDGE_COST_USD,
        names.PASS_RATE,
        names.REJECTION_ACCURACY,
        names.TOOL_CONDITION_ACCURACY,
        names.JUDGE_ERROR_RATE,
        names.ENDPOINT_ERROR_RATE,
        "criteria.<name>_mean",
    }
