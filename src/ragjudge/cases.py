"""Case files: YAML (a list) or JSONL, validated at the edge into frozen `Case` values."""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragjudge.config import safeyaml
from ragjudge.config.model import DEFAULT_MAX_CASE_FILE_BYTES, CriterionConfig, check_criterion_name
from ragjudge.errors import CaseFileError
from ragjudge.safetext import clean_data

OUT_OF_SCOPE_CATEGORIES = frozenset({"out of scope", "oos", "超纲", "超出范围"})
"""Categories meaning "should be declined", compared after `category_key` (case, `-`, `_` and spaces folded)."""

# Words that make a category look like an out-of-scope one; an unrecognised such category is warned about.
_SCOPE_HINTS = ("scope", "oos", "超纲", "超出", "范围", "offtopic", "outofdomain")


def category_key(category: str) -> str:
    """`Out-Of-Scope`, `out_of_scope` and ` out  of scope ` all become `out of scope`."""
    return " ".join(re.split(r"[\s_\-]+", category.strip().lower())).strip()


def is_out_of_scope(category: str | None) -> bool:
    return category is not None and category_key(category) in OUT_OF_SCOPE_CATEGORIES


def expects_answer(should_answer: bool | None, category: str | None) -> bool:
    """`should_answer` when it is given, else what the category says: an out-of-scope case is to be declined."""
    return should_answer if should_answer is not None else not is_out_of_scope(category)


def looks_out_of_scope(category: str | None) -> bool:
    """A category a person probably meant as out-of-scope, though it is not one of the recognised spellings."""
    if category is None or is_out_of_scope(category):
        return False
    compact = category_key(category).replace(" ", "")
    return any(hint in compact for hint in _SCOPE_HINTS)


class _Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. `expected: No`, `question: Yes` and `category: on` stay text."""


_BOOL = "tag:yaml.org,2002:bool"
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def load_yaml12(text: str) -> Any:
    """Parse YAML text with YAML 1.2 booleans."""
    return yaml.load(text, Loader=_Yaml12Loader)  # a SafeLoader subclass: no arbitrary objects


# Removed before comparing questions: whitespace, ASCII punctuation, full-width forms (！？，：；...),
# CJK punctuation (。、「」《》...) and the typographic quotes and dashes people paste in.
_PUNCT = re.compile(
    "[\\s" + re.escape(string.punctuation) + "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
    "\u3000-\u303f\u2010-\u2027\u00b7]+"
)


def normalize_question(question: str) -> str:
    """The key two questions share when they are duplicates of each other."""
    return _PUNCT.sub("", question.lower())


def check_expected(value: str | list[str] | None) -> str | list[str] | None:
    """A reference answer as written (a text, or a list of its points); ValueError for an empty list or point.

    Case files and calibration labels both read `expected` through it, so the judge is shown a reference the
    same way whichever brought it."""
    if isinstance(value, list):
        if not value:
            raise ValueError("an empty list has no reference points: leave `expected` out, or list the points")
        if any(not point.strip() for point in value):
            raise ValueError("a reference point is empty")
    return value


class CaseModel(BaseModel):
    """One case as written in a case file (snake_case, or camelCase: `goldenContextIds`, `mustMention`, ...)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str | None = None
    question: str
    expected: str | list[str] | None = None
    golden_context_ids: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("golden_context_ids", "goldenContextIds")
    )
    category: str | None = None
    should_answer: bool | None = Field(None, validation_alias=AliasChoices("should_answer", "shouldAnswer"))
    must_mention: list[str] = Field(default_factory=list, validation_alias=AliasChoices("must_mention", "mustMention"))
    must_not_mention: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("must_not_mention", "mustNotMention")
    )
    source: Literal["public", "human", "reflow", "synthetic"] | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None
    tags: list[str] = Field(default_factory=list)
    criteria: list[str] | dict[str, CriterionConfig] = Field(default_factory=list)

    @field_validator("expected")
    @classmethod
    def _points(cls, value: str | list[str] | None) -> str | list[str] | None:
        return check_expected(value)

    @field_validator("criteria")
    @classmethod
    def _criterion_names(cls, value: list[str] | dict[str, CriterionConfig]) -> list[str] | dict[str, CriterionConfig]:
        for name in value:
            problem = check_criterion_name(name)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("question")
    @classmethod
    def _question_present(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty")
        return value


@dataclass(frozen=True)
class Case:
    """A case ready to run."""

    id: str
    question: str
    expected: str | tuple[str, ...] | None
    """The reference answer: its points as written (a list), or one text the judge splits into points."""
    golden_context_ids: tuple[str, ...]
    category: str | None
    should_answer: bool
    must_mention: tuple[str, ...]
    must_not_mention: tuple[str, ...]
    source: str | None
    difficulty: str | None
    tags: tuple[str, ...]
    origin: str
    """Where the case came from: `file:line` (or `file#index`)."""
    criteria: tuple[str, ...] = ()
    """Criteria of `judge.criteria` this case adds by name."""
    inline_criteria: tuple[tuple[str, CriterionConfig], ...] = ()
    """Criteria this case defines itself, by name."""

    @property
    def reference_points(self) -> tuple[str, ...] | None:
        """The reference's points as written when `expected` is a list; None for a text or no reference."""
        return self.expected if isinstance(self.expected, tuple) else None

    @property
    def has_reference(self) -> bool:
        return bool(self.expected.strip()) if isinstance(self.expected, str) else self.expected is not None

    def as_template_context(self) -> dict[str, Any]:
        """The `case` variable seen by the endpoint body template."""
        return {
            "id": self.id,
            "question": self.question,
            "expected": list(self.expected) if isinstance(self.expected, tuple) else self.expected,
            "golden_context_ids": list(self.golden_context_ids),
            "category": self.category,
            "should_answer": self.should_answer,
            "tags": list(self.tags),
            "source": self.source,
            "difficulty": self.difficulty,
        }


TOO_DEEP = "nested too deeply to read (lists or mappings hundreds of levels deep)"
TOO_DEEP_TIP = "a case is a flat mapping of fields; check how the file was generated"


@dataclass(frozen=True)
class RawItem:
    """One item of a case file before validation, with where it stood."""

    data: Any
    index: int
    line: int | None


def read_items(path: Path, max_bytes: int = DEFAULT_MAX_CASE_FILE_BYTES) -> list[RawItem]:
    """Read a YAML list or JSONL file into raw items, with line numbers."""
    try:
        raw = _read_capped(path, max_bytes)
    except FileNotFoundError:
        raise CaseFileError(f"{path}: file not found", tip="check the path in `cases:` or --cases") from None
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CaseFileError(
            f"{path}:{line}: not UTF-8 (invalid byte at offset {exc.start})", tip="re-save the file as UTF-8"
        ) from None
    try:
        items = _read_jsonl(path, text) if path.suffix.lower() in {".jsonl", ".ndjson"} else _read_yaml(path, text)
    except RecursionError:
        raise CaseFileError(f"{path}: {TOO_DEEP}", tip=TOO_DEEP_TIP) from None
    # A question, id or label spelt with a lone surrogate or a control character is kept as U+FFFD.
    return [RawItem(clean_data(item.data), item.index, item.line) for item in items]


def _read_capped(path: Path, max_bytes: int) -> bytes:
    # A regular file's size says it at once; anything else (a pipe, /dev/zero) is read at most one byte
    # past the cap. Either way a 1 GB file costs nothing to refuse.
    with path.open("rb") as handle:
        too_big = os.fstat(handle.fileno()).st_size > max_bytes
        raw = b"" if too_big else handle.read(max_bytes + 1)
    if too_big or len(raw) > max_bytes:
        raise CaseFileError(
            f"{path}: over {max_bytes:,} bytes, the limit for a case file",
            tip="split the file, or raise max_case_file_bytes in ragjudge.yml",
        )
    return raw


def _read_jsonl(path: Path, text: str) -> list[RawItem]:
    items: list[RawItem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"{path}:{lineno}: invalid JSON: {exc.msg}") from None
        items.append(RawItem(data, len(items), lineno))
    return items


def _read_yaml(path: Path, text: str) -> list[RawItem]:
    try:
        loaded = safeyaml.load(text, _Yaml12Loader)
    except safeyaml.YamlLimitError as exc:
        if exc.too_deep:
            raise CaseFileError(f"{path}: {TOO_DEEP}", tip=TOO_DEEP_TIP) from None
        where = f":{exc.line}" if exc.line else ""
        raise CaseFileError(f"{path}{where}: refused: {exc.message}", tip="write the cases out plainly") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise CaseFileError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    data, node = loaded.data, loaded.node
    if data is None:
        return []
    if isinstance(data, dict) and isinstance(data.get("cases"), list):
        # Also accept {cases: [...]}, a common way to add a header to the file.
        data = data["cases"]
        node = next(v for k, v in node.value if k.value == "cases")  # type: ignore[union-attr]
    if not isinstance(data, list):
        raise CaseFileError(f"{path}: expected a list of cases, found {type(data).__name__}")
    lines = [n.start_mark.line + 1 for n in node.value] if isinstance(node, yaml.SequenceNode) else []
    return [RawItem(d, i, lines[i] if i < len(lines) else None) for i, d in enumerate(data)]


def _where(path: Path, item: RawItem, case_id: Any = None) -> str:
    loc = f"{path}:{item.line}" if item.line else str(path)
    name = f"case {str(case_id)!r}" if case_id not in (None, "") else f"case #{item.index + 1}"
    return f"{loc}: {name}"


def to_case(path: Path, item: RawItem) -> Case:
    """One raw item of `path` validated into a `Case`; a bad one is a CaseFileError naming the file and case."""
    data = item.data
    case_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(data, dict):
        raise CaseFileError(f"{_where(path, item)}: expected a mapping of fields, found {type(data).__name__}")
    try:
        model = CaseModel.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(p) for p in err["loc"]) or "(case)"
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown field {field!r}")
            elif err["type"] == "missing":
                problems.append(f"{field}: required field is missing")
            elif err["type"] == "value_error":
                problems.append(f"{field}: {err['ctx']['error']}")
            else:
                problems.append(f"{field}: {err['msg']}")
        raise CaseFileError(
            f"{_where(path, item, case_id)}: " + "; ".join(problems),
            tip="fields are id, question, expected, golden_context_ids, category, should_answer, "
            "must_mention, must_not_mention, source, difficulty, tags, criteria",
        ) from None
    should_answer = expects_answer(model.should_answer, model.category)
    origin = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
    return Case(
        id=model.id if model.id else f"{path.stem}-{item.index + 1}",
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
    )


@dataclass(frozen=True)
class CaseSet:
    """The cases to run, and the warnings found while loading them."""

    cases: tuple[Case, ...]
    warnings: tuple[str, ...]


def load_cases(paths: Sequence[Path], max_bytes: int = DEFAULT_MAX_CASE_FILE_BYTES) -> CaseSet:
    """Load and validate every case file; ids must be unique across all of them."""
    if not paths:
        raise CaseFileError("no case files given", tip="set `cases:` in ragjudge.yml or pass --cases FILE")
    cases: list[Case] = []
    warnings: list[str] = []
    seen_ids: dict[str, str] = {}
    for path in paths:
        for item in read_items(path, max_bytes):
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


def duplicate_warnings(cases: Iterable[Case]) -> list[str]:
    first: dict[str, Case] = {}
    warnings = []
    for case in cases:
        key = normalize_question(case.question)
        if key in first:
            warnings.append(
                f"case {case.id!r} ({case.origin}) duplicates the question of case {first[key].id!r} "
                "after normalisation; run `ragjudge dedupe` to drop it"
            )
        else:
            first[key] = case
    return warnings
