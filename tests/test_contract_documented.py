"""Every field of the JSON reports (`report/model.py` and its blocks' modules, `canary/report.py`) and of
ragjudge.yml (`config/model.py`) says what it means.

A field is documented by an attribute docstring (a string literal on the line after it, read here from the
source with `ast`: nothing changes at runtime) or by pydantic's `Field(description=...)`. A field added without
either fails here, named as `Class.field`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

import ragjudge.config
from ragjudge.canary import report as canary_report
from ragjudge.config import canary_config, endpoint_config, gate_config, judge_config, serve_config, traces_config
from ragjudge.config import model as config_model
from ragjudge.config import protocol as config_protocol
from ragjudge.report import (
    case_block,
    comparison_block,
    headline_block,
    judge_block,
    provenance_block,
    spans_block,
    suite_block,
    trace_block,
)
from ragjudge.report import model as report_model

REPORTS = [
    report_model,
    headline_block,
    suite_block,
    case_block,
    trace_block,
    judge_block,
    comparison_block,
    provenance_block,
    spans_block,
]
"""The gate's report: the top level and each module of blocks."""
CONFIG_SECTIONS = [
    config_model,
    endpoint_config,
    judge_config,
    gate_config,
    canary_config,
    serve_config,
    traces_config,
]
"""ragjudge.yml, a module per section: `test_every_config_model_is_a_contract` holds that none is left out."""
CONTRACTS = [*REPORTS, canary_report, *CONFIG_SECTIONS, config_protocol]
FEWEST_FIELDS = {
    report_model: 20,
    headline_block: 8,
    suite_block: 20,
    case_block: 40,
    trace_block: 20,
    judge_block: 40,
    comparison_block: 30,
    provenance_block: 20,
    canary_report: 40,
    config_protocol: 30,
    spans_block: 15,
    **dict.fromkeys(CONFIG_SECTIONS, 5),
}
"""How many fields the walk must find in each module at least (50 unless named): fewer means it missed models."""


def attribute_docstrings(source: str) -> dict[str, dict[str, str]]:
    """Per class of `source`: its annotated fields, each with the string literal that follows it ("" if none)."""
    classes: dict[str, dict[str, str]] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        fields: dict[str, str] = {}
        for stmt, after in zip(node.body, [*node.body[1:], None], strict=True):
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            doc = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = after.value.value if isinstance(after.value.value, str) else ""
            fields[stmt.target.id] = doc.strip()
        classes[node.name] = fields
    return classes


@cache
def _module_docstrings(module_name: str) -> dict[str, dict[str, str]]:
    return attribute_docstrings(inspect.getsource(sys.modules[module_name]))


def models(module: ModuleType) -> list[type[BaseModel]]:
    """The pydantic models defined in `module` (not those it imports)."""
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__
    ]


def docstring_of(model: type[BaseModel], field: str) -> str:
    """The attribute docstring of `field` in the class of `model`'s MRO that declares it ("" if none)."""
    for klass in model.__mro__:
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        declared = _module_docstrings(klass.__module__).get(klass.__name__, {})
        if field in declared:
            return declared[field]
    return ""


def undocumented(module: ModuleType) -> list[str]:
    missing = []
    for model in models(module):
        for name, info in model.model_fields.items():
            if (info.description or "").strip() or docstring_of(model, name):
                continue
            missing.append(f"{model.__name__}.{name}")
    return missing


@pytest.mark.parametrize("module", CONTRACTS, ids=lambda m: m.__name__)
def test_every_field_is_documented(module: ModuleType) -> None:
    missing = undocumented(module)
    assert not missing, (
        f"{module.__name__}: fields without a docstring or Field(description=...): {', '.join(missing)}. "
        "Say what each means, its unit, when it is null or empty, and the values it takes."
    )


@pytest.mark.parametrize("module", CONTRACTS, ids=lambda m: m.__name__)
def test_the_walk_sees_the_models(module: ModuleType) -> None:
    # A walk that found no model would pass vacuously.
    fields = sum(len(m.model_fields) for m in models(module))
    assert fields >= FEWEST_FIELDS.get(module, 50), f"{module.__name__}: only {fields} fields found"


def test_every_config_model_is_a_contract() -> None:
    # The sections of ragjudge.yml together: a model in a config module left out of CONTRACTS is never checked.
    found = []
    for info in pkgutil.iter_modules(ragjudge.config.__path__):
        module = importlib.import_module(f"ragjudge.config.{info.name}")
        if any(m.model_fields for m in models(module)):
            found.append(module)
    assert sorted(m.__name__ for m in found) == sorted(m.__name__ for m in [*CONFIG_SECTIONS, config_protocol])
    assert sum(len(m.model_fields) for module in CONFIG_SECTIONS for m in models(module)) >= 110


def test_every_module_of_report_blocks_is_walked() -> None:
    # A new module of blocks left out of REPORTS would go undocumented without a failure.
    package = Path(report_model.__file__).parent
    with_fields = []
    for path in sorted(package.glob("[!_]*.py")):
        module = importlib.import_module(f"ragjudge.report.{path.stem}")
        if any(m.model_fields for m in models(module)):
            with_fields.append(module.__name__)
    assert with_fields == sorted(m.__name__ for m in REPORTS)


def test_a_field_without_a_docstring_is_found() -> None:
    source = '''
class Block:
    documented: int
    """What it means."""
    bare: str = ""
    empty: int = 0
    ""
    last: bool
'''
    assert attribute_docstrings(source) == {
        "Block": {"documented": "What it means.", "bare": "", "empty": "", "last": ""}
    }
