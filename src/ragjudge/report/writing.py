"""Writing a report (a gate's or a canary's) to its file: whole or not at all, a case at a time, never a secret."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from ragjudge import masking
from ragjudge.safetext import clean_data

ReportT = TypeVar("ReportT", bound=BaseModel)


def redact(report: ReportT, secrets: Sequence[str] = ()) -> ReportT:
    """The report with every secret replaced by `***` in every text value (e.g. a token echoed in an answer).

    `secrets` are registered (`ragjudge.masking`) beside those already known.
    """
    masking.register(*secrets)
    if not masking.secrets():
        return report
    # Serialising is fast (pydantic-core); walking and re-validating every value is not. Only a report that
    # holds a secret (in any form the mask knows) pays for the walk.
    text = report.model_dump_json()
    if masking.mask(text) == text:
        return report
    return type(report).model_validate(masking.mask_data(report.model_dump()))


def write_report(report: BaseModel, path: Path) -> None:
    """Written whole or not at all: a reader never sees half a report; never a secret, even JSON-escaped.

    Text is made safe where it enters; a lone surrogate that came in some other way is replaced here rather
    than abort the write (JSON cannot carry it in UTF-8).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        _write_chunks(report, tmp)
    except PydanticSerializationError:
        _write_chunks(type(report).model_validate(clean_data(report.model_dump())), tmp)
    tmp.replace(path)


def _write_chunks(report: BaseModel, tmp: Path) -> None:
    with tmp.open("w", encoding="utf-8") as out:
        for chunk in json_chunks(report):
            out.write(masking.mask(chunk))


def json_chunks(model: BaseModel) -> Iterator[str]:
    """`model.model_dump_json(indent=2)` and a newline, a field or a list item at a time: a report of many
    cases is never one string in memory."""
    names = [*type(model).model_fields, *(model.model_extra or {})]
    yield "{\n"
    for i, name in enumerate(names):
        end = ",\n" if i < len(names) - 1 else "\n"
        value = getattr(model, name)
        if isinstance(value, list) and value and all(isinstance(item, BaseModel) for item in value):
            yield f"  {json.dumps(name)}: [\n"
            for j, item in enumerate(value):
                text = item.model_dump_json(indent=2).replace("\n", "\n    ")
                yield f"    {text}{',' if j < len(value) - 1 else ''}\n"
            yield f"  ]{end}"
        else:
            # '{\n  "name": value\n}' -> '  "name": value'
            yield model.model_dump_json(include={name}, indent=2)[2:-2] + end
    yield "}\n"
