"""The bias items file of `ragjudge calibrate --position-bias/--length-bias`: one claim and its passages a line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ragjudge.cases.files import read_items
from ragjudge.errors import CaseFileError
from ragjudge.judge.bias import BiasItem

ITEMS_TIP = 'one JSON object a line: {"id": "...", "claim": "...", "passages": ["text", ...]}'


class BiasItemModel(BaseModel):
    """One line of a bias items file."""

    model_config = ConfigDict(extra="forbid")

    id: str
    claim: str
    passages: list[str]

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("claim")
    @classmethod
    def _claim(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("claim is empty")
        return value

    @field_validator("passages")
    @classmethod
    def _passages(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("needs at least one passage")
        if any(not p.strip() for p in value):
            raise ValueError("a passage is empty")
        return value


def load_bias_items(path: Path) -> list[BiasItem]:
    """Read and validate a bias items file; errors name `file:line` and the field."""
    out: list[BiasItem] = []
    seen: set[str] = set()
    for item in read_items(path):
        where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
        if not isinstance(item.data, dict):
            raise CaseFileError(f"{where}: expected a JSON object, found {type(item.data).__name__}", tip=ITEMS_TIP)
        try:
            model = BiasItemModel.model_validate(item.data)
        except ValidationError as exc:
            parts = []
            for err in exc.errors(include_input=False, include_url=False):
                field = ".".join(str(p) for p in err["loc"])
                if err["type"] == "extra_forbidden":
                    parts.append(f"unknown field {field!r}")
                else:
                    parts.append(f"field {field!r}: {str(err['msg']).removeprefix('Value error, ')}")
            raise CaseFileError(f"{where}: " + "; ".join(parts), tip=ITEMS_TIP) from None
        if model.id in seen:
            raise CaseFileError(f"{where}: duplicate id {model.id!r}")
        seen.add(model.id)
        out.append(BiasItem(model.id, model.claim, tuple(model.passages)))
    if not out:
        raise CaseFileError(f"{path}: no items", tip=ITEMS_TIP)
    return out
