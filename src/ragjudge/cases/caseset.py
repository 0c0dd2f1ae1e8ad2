"""The case set: a case file's raw items validated into `Case` values, ids unique across every file.

A bad case is a `CaseFileError` (exit 2) naming the file, the line, the case (by id, else by position) and
the field, with a tip when the mistake is a known one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragjudge.cases.case import Case
from ragjudge.cases.conversations import conversation
from ragjudge.cases.duplicates import duplicate_warnings
from ragjudge.cases.files import TOO_DEEP, TOO_DEEP_TIP, RawItem, read_items
from ragjudge.cases.schema import NO_QUESTION, CaseModel
from ragjudge.cases.scope import expects_answer, looks_out_of_scope
from ragjudge.cases.tools import ToolConditions
from ragjudge.config.mistakes import recognise
from ragjudge.config.model import DEFAULT_MAX_CASE_FILE_BYTES
from ragjudge.errors import CaseFileError


@dataclass(frozen=True)
class CaseSet:
    """The cases to run, and the warnings found while loading them."""

    cases: tuple[Case, ...]
    warnings: tuple[str, ...]


def load_cases(
    paths: Sequence[Path], max_bytes: int = DEFAULT_MAX_CASE_FILE_BYTES, config_folder: Path | None = None
) -> CaseSet:
    """Load and validate every case file; ids must be unique across all of them.

    `config_folder`: given when the paths are a config file's `cases:`, resolved against that folder."""
    if not paths:
        raise CaseFileError("no case files given", tip="set `cases:` in ragjudge.yml or pass --cases FILE")
    # Read one file at a time: a bad case in the first is reported before the second is opened.
    return validate((path, read_items(path, max_bytes, config_folder)) for path in paths)


def validate(files: Iterable[tuple[Path, Sequence[RawItem]]]) -> CaseSet:
    """The raw items of one or more files (each with its path) validated into a case set."""
    cases: list[Case] = []
    warnings: list[str] = []
    seen_ids: dict[str, str] = {}
    paths: list[Path] = []
    for path, items in files:
        paths.append(path)
        for item in items:
            try:
                case = to_case(path, item)
            except RecursionError:
                raise CaseFileError(f"{_where(path, item)}: {TOO_DEEP}", tip=TOO_DEEP_TIP) from None
            if _scope_unstated(item.data) and looks_out_of_scope(case.category):
                warnings.append(
                    f"case {case.id!r} ({case.origin}): category {case.category!r} looks like out-of-scope but is "
                    "not a recognised spelling, so the case is expected to be answered; write out_of_scope "
                    "(or set should_answer: false)"
                )
            if case.id in seen_ids:
                raise CaseFileError(
                    f"{_where(path, item, case.id)}: duplicate id (first used at {seen_ids[case.id]})",
                    tip="give every case its own id",
                )
            seen_ids[case.id] = case.origin
            cases.append(case)
    if not cases:
        names = ", ".join(str(p) for p in paths)
        raise CaseFileError(f"{names}: the case set is empty", tip="add at least one case with a question")
    return CaseSet(tuple(cases), tuple(warnings + duplicate_warnings(cases)))


def _scope_unstated(data: Any) -> bool:
    """True when the case leaves should_answer to its category (`should_answer` wins when given)."""
    return isinstance(data, dict) and data.get("should_answer", data.get("shouldAnswer")) is None


def _where(path: Path, item: RawItem, case_id: Any = None) -> str:
    loc = f"{path}:{item.line}" if item.line else str(path)
    name = f"case {str(case_id)!r}" if case_id not in (None, "") else f"case #{item.index + 1}"
    return f"{loc}: {name}"


def _field_name(loc: Sequence[int | str]) -> str:
    """`turns.1.question` reads `turn 2: question`: people count turns from 1."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int) and i > 0 and loc[i - 1] == "turns":
            parts[-1] = f"turn {part + 1}:"
        else:
            parts.append(str(part))
    return ".".join(parts).replace(":.", ": ") or "(case)"


def to_case(path: Path, item: RawItem) -> Case:
    """One raw item of `path` validated into a `Case`; a bad one is a CaseFileError naming the file and case."""
    data = item.data
    case_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(data, dict):
        raise CaseFileError(f"{_where(path, item)}: expected a mapping of fields, found {type(data).__name__}")
    try:
        model = CaseModel.model_validate(data)
    except ValidationError as exc:
        raise _invalid(path, item, case_id, data, exc) from None
    should_answer = expects_answer(model.should_answer, model.category)
    origin = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
    case_id = model.id if model.id else f"{path.stem}-{item.index + 1}"
    file, line = str(path), item.line or None
    if model.turns is not None:
        return conversation(model, model.turns, case_id, origin, (file, line))
    assert model.question is not None  # the model's own check: a question or turns
    return Case(
        id=case_id,
        question=model.question,
        expected=tuple(model.expected) if isinstance(model.expected, list) else model.expected,
        golden_context_ids=tuple(model.golden_context_ids),
        category=model.category,
        should_answer=should_answer,
        must_mention=tuple(model.must_mention),
        must_not_mention=tuple(model.must_not_mention),
        source=model.source,
        difficulty=model.difficulty,
        tags=tuple(model.tags),
        origin=origin,
        criteria=tuple(model.criteria) if isinstance(model.criteria, list) else (),
        inline_criteria=tuple(model.criteria.items()) if isinstance(model.criteria, dict) else (),
        review=model.review,
        file=file,
        line=line,
        tools=ToolConditions.of(model.tools),
    )


def _invalid(path: Path, item: RawItem, case_id: Any, data: dict[str, Any], exc: ValidationError) -> CaseFileError:
    """What is wrong with a case, every field at once, with the tip of the first mistake recognised."""
    # Said first, and also when other fields are wrong (the model's own check runs only on valid fields).
    no_question = "question" not in data and "turns" not in data
    problems = ["question: required field is missing"] if no_question else []
    tip = None
    for err in exc.errors(include_url=False):
        if err["type"] == "value_error" and str(err["ctx"]["error"]) == NO_QUESTION:
            continue
        field = _field_name(err["loc"])
        mistake = recognise(err["loc"], err["type"], err.get("input"), echo=True)
        if mistake is not None:
            problems.append(f"{field}: {mistake.problem}")
            tip = tip or mistake.tip
        elif err["type"] == "extra_forbidden":
            problems.append(f"unknown field {field!r}")
        elif err["type"] == "missing":
            problems.append(f"{field}: required field is missing")
        elif err["type"] == "value_error":
            problems.append(f"{field}: {err['ctx']['error']}")
        else:
            problems.append(f"{field}: {err['msg']}")
    return CaseFileError(
        f"{_where(path, item, case_id)}: " + "; ".join(problems),
        tip=tip
        or "fields are id, question, expected, golden_context_ids, category, should_answer, "
        "must_mention, must_not_mention, source, difficulty, tags, criteria, review; a conversation has turns "
        "(a list, each turn with question, expected, golden_context_ids, must_mention, ...) for question",
    )
