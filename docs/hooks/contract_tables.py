"""A public contract's fields as Markdown tables, walked from its top pydantic model.

Each model reachable from the top one (through its fields' annotations: a model, a list or mapping of
models, an optional one) becomes one table under a heading that names where it sits (`cases[].trace`). A
field's meaning is its `Field(description=...)` or its attribute docstring, read from the source with `ast`:
pydantic exposes attribute docstrings only with `use_attribute_docstrings=True`, which the models do not set.
Walking from the top model, not a module, keeps this right however the models are split into modules.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined


@dataclass(frozen=True)
class Block:
    """One model of the contract and where it sits in the document."""

    model: type[BaseModel]
    paths: tuple[str, ...]
    """Every place the model sits (`rules[]`, `comparison.rules[]`), first found first."""


def blocks(top: type[BaseModel]) -> list[Block]:
    """Every model reachable from `top`, in reading order (depth first, fields in declaration order)."""
    found: dict[type[BaseModel], list[str]] = {}

    def visit(model: type[BaseModel], path: str) -> None:
        if model in found:
            found[model].append(path)
            return
        found[model] = [path]
        for name, info in model.model_fields.items():
            for child, suffix in _nested(info.annotation):
                visit(child, f"{path}.{name}{suffix}" if path else f"{name}{suffix}")

    visit(top, "")
    return [Block(model, tuple(paths)) for model, paths in found.items()]


def _nested(annotation: Any, suffix: str = "") -> list[tuple[type[BaseModel], str]]:
    """The models inside an annotation, each with what its path adds: `[]` for a list item, `.*` for a value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, suffix)]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _nested(args[0], suffix)
    if origin in (list, tuple, set, frozenset):
        return [n for arg in args if arg is not Ellipsis for n in _nested(arg, suffix + "[]")]
    if origin is dict:
        return _nested(args[1], suffix + ".*") if len(args) == 2 else []
    if origin in (Union, types.UnionType):
        return [n for arg in args for n in _nested(arg, suffix)]
    return []


def render(top: type[BaseModel], *, anchor: str, level: int = 3) -> str:
    """The contract under `top` as Markdown: a heading of `level` and a table per model."""
    out = []
    for block in blocks(top):
        where = f"`{block.paths[0]}`" if block.paths[0] else "The top level"
        out.append(f"{'#' * level} {where} ({block.model.__name__}) {{#{_anchor(anchor, block.model)}}}\n")
        doc = block.model.__dict__.get("__doc__")
        if doc:
            out.append(inspect.cleandoc(doc) + "\n")
        if len(block.paths) > 1:
            out.append("Also at " + ", ".join(f"`{p}`" for p in block.paths[1:]) + ".\n")
        out.append("| field | type | default | meaning |\n|---|---|---|---|")
        for name, info in block.model.model_fields.items():
            cells = [_key(name, info), _type(info.annotation, anchor), _default(info), meaning(block.model, name)]
            out.append("| " + " | ".join(cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out)


def _anchor(prefix: str, model: type[BaseModel]) -> str:
    return f"{prefix}-{model.__name__.lower()}"


def _key(name: str, info: FieldInfo) -> str:
    key = f"`{name}`"
    if isinstance(info.validation_alias, AliasChoices):
        others = [c for c in info.validation_alias.choices if isinstance(c, str) and c != name]
        if others:
            key += " (also read as " + ", ".join(f"`{o}`" for o in others) + ")"
    return key


_NAMES = {str: "text", int: "integer", float: "number", bool: "boolean", Path: "path", type(None): "null", Any: "any"}


def _type(annotation: Any, anchor: str) -> str:
    """How a JSON or YAML reader sees the type: `number or null`, `list of [RuleBlock](#...)`."""
    if annotation in _NAMES:
        return _NAMES[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{_anchor(anchor, annotation)})"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type(args[0], anchor)
    if origin is Literal:
        return " or ".join(f"`{json.dumps(a, ensure_ascii=False)}`" for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join(_type(a, anchor) for a in args)
    if origin in (list, tuple, set, frozenset):
        items = [a for a in args if a is not Ellipsis]
        return "list of " + (" and ".join(_type(a, anchor) for a in items) if items else "any")
    if origin is dict:
        return f"mapping of {_type(args[0], anchor)} to {_type(args[1], anchor)}" if len(args) == 2 else "mapping"
    return f"`{getattr(annotation, '__name__', annotation)}`"


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return ""
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return "its defaults"
    if isinstance(value, str) and value and "`" not in value:
        return f"`{value}`"
    return f"`{json.dumps(value, ensure_ascii=False, default=str)}`"


def meaning(model: type[BaseModel], name: str) -> str:
    """A field's description, else the attribute docstring of the class in `model`'s MRO that declares it."""
    info = model.model_fields[name]
    if info.description and info.description.strip():
        return info.description.strip()
    for klass in model.__mro__:
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        declared = _docstrings(klass.__module__).get(klass.__name__, {})
        if declared.get(name):
            return declared[name]
    return ""


@cache
def _docstrings(module_name: str) -> dict[str, dict[str, str]]:
    """Per class of a module: its annotated fields, each with the string literal that follows it."""
    classes: dict[str, dict[str, str]] = {}
    for node in ast.walk(ast.parse(inspect.getsource(sys.modules[module_name]))):
        if not isinstance(node, ast.ClassDef):
            continue
        fields = classes.setdefault(node.name, {})
        for stmt, after in zip(node.body, [*node.body[1:], None], strict=True):
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                fields[stmt.target.id] = inspect.cleandoc(after.value.value)
    return classes


def cell(text: str) -> str:
    """One table cell: one line, and a `|` outside code that does not end the cell (inside code, Python-Markdown's
    tables already read it as text, and a backslash there would show)."""
    parts = re.split(r"(`+[^`]*?`+)", re.sub(r"\s+", " ", text).strip())
    return "".join(part if part.startswith("`") else part.replace("|", "\\|") for part in parts)
