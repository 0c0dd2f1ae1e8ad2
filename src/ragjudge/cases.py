"""Case files: YAML (a list) or JSONL, validated at the edge into frozen `Case` values."""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ragjudge.config import safeyaml
from ragjudge.config.judge_config import CriterionConfig, check_criterion_name
from ragjudge.config.mistakes import recognise
from ragjudge.config.model import DEFAULT_MAX_CASE_FILE_BYTES
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


MAX_TURNS = 50
"""The most turns one conversation may have: each is a call and a judgement, in order."""


class _Asked(BaseModel):
    """The per-question fields of a case, as written: a single-question case's, or one turn's of a conversation."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

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

    @field_validator("question", check_fields=False)
    @classmethod
    def _question_present(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("question is empty")
        return value


class TurnModel(_Asked):
    """One turn of a conversation as written: the per-question fields of a case."""

    question: str


_NO_QUESTION = "a case needs a `question` (or `turns:`, a conversation's list of turns)"

# Per-question fields that, on a conversation, belong to one of its turns.
_PER_TURN_ONLY = ("expected", "golden_context_ids", "should_answer", "must_mention", "must_not_mention")


class CaseModel(_Asked):
    """One case as written in a case file (snake_case, or camelCase: `goldenContextIds`, `mustMention`, ...).

    A conversation has `turns:` instead of `question:`."""

    id: str | None = None
    question: str | None = None
    turns: list[TurnModel] | None = Field(None, min_length=1, max_length=MAX_TURNS)
    source: Literal["public", "human", "reflow", "synthetic"] | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _question_or_turns(self) -> CaseModel:
        if self.turns is None and self.question is None:
            raise ValueError(_NO_QUESTION)
        if self.turns is not None:
            if self.question is not None:
                raise ValueError("a case has either `question` or `turns`, not both: put the question in a turn")
            stray = [name for name in _PER_TURN_ONLY if name in self.model_fields_set]
            if stray:
                raise ValueError(
                    f"{', '.join(stray)}: on a conversation these belong to a turn (under `turns:`), "
                    "not to the whole case"
                )
        return self


@dataclass(frozen=True)
class Exchange:
    """One earlier turn of a conversation as it went in this run: what was asked and what the service answered."""

    question: str
    answer: str


@dataclass(frozen=True)
class Case:
    """A case ready to run."""

    id: str
    question: str
    expected: str | tuple[str, ...] | None
    """The reference answer: its points as written (a list), or one text ragjudge splits into points
    (`judge.reference.split_reference`)."""
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
    turns: tuple[Case, ...] = ()
    """A conversation's turns in order, each a case of its own (`turn` set); empty for one question."""
    turn: int = 0
    """This case's place in its conversation, from 1; 0 for a case that is one question."""
    history: tuple[Exchange, ...] = ()
    """The conversation so far, as this run asked and answered it (set when the turn is asked)."""
    conversation_id: str | None = None
    """What the service called the conversation in an earlier reply (`response.conversation_id`)."""

    @property
    def is_conversation(self) -> bool:
        return bool(self.turns)

    @property
    def conversation(self) -> str:
        """The conversation's case id, for a turn (its own id otherwise)."""
        return self.id.rsplit(TURN_SEPARATOR, 1)[0] if self.turn else self.id

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
            "id": self.conversation,
            "question": self.question,
            "expected": list(self.expected) if isinstance(self.expected, tuple) else self.expected,
            "golden_context_ids": list(self.golden_context_ids),
            "category": self.category,
            "should_answer": self.should_answer,
            "tags": list(self.tags),
            "source": self.source,
            "difficulty": self.difficulty,
        }


TURN_SEPARATOR = " turn "
"""A turn's own id is its conversation's id, this, and its number: `refund-chat turn 2` (event logs show it)."""


def template_variables(case: Case) -> dict[str, Any]:
    """What an endpoint template sees for one request: `question`, `case`, and the conversation so far.

    `messages` is the OpenAI-style list (earlier questions and the service's own answers, then this
    question); `history` is the same without this question; `ui_messages` is `messages` as the AI SDK's
    UIMessages (`{id, role, parts: [{type: "text", text}]}`); `turn` counts from 1 (1 for one question);
    `conversation_id` is what the service called the conversation last (None on a first turn)."""
    history: list[dict[str, str]] = []
    for exchange in case.history:
        history.append({"role": "user", "content": exchange.question})
        history.append({"role": "assistant", "content": exchange.answer})
    messages = [*history, {"role": "user", "content": case.question}]
    return {
        "question": case.question,
        "case": case.as_template_context(),
        "history": history,
        "messages": messages,
        "ui_messages": [
            {"id": f"{case.id}-{i}", "role": m["role"], "parts": [{"type": "text", "text": m["content"]}]}
            for i, m in enumerate(messages, 1)
        ],
        "turn": case.turn or 1,
        "conversation_id": case.conversation_id,
    }


class Dialogue:
    """A conversation as it goes in one run: each turn is asked with the turns before it, as they were answered,
    and with the conversation id the service gave last (`run`, `probe` and `canary` all step through it)."""

    def __init__(self) -> None:
        self.history: list[Exchange] = []
        self.conversation_id: str | None = None

    def ask(self, turn: Case) -> Case:
        """The turn as it is to be asked now."""
        return replace(turn, history=tuple(self.history), conversation_id=self.conversation_id)

    def answered(self, asked: Case, answer: str, conversation_id: str | None) -> None:
        """What the service answered `asked` (and what it called the conversation, if it said)."""
        self.history.append(Exchange(asked.question, answer))
        self.conversation_id = conversation_id or self.conversation_id


def rehearsal(case: Case) -> list[Case]:
    """The requests to render before any call: the case, or each turn of a conversation as it will be asked
    (with the earlier questions, and empty answers standing in for the service's)."""
    if not case.turns:
        return [case]
    return [
        replace(turn, history=tuple(Exchange(t.question, "") for t in case.turns[: turn.turn - 1]))
        for turn in case.turns
    ]


def questions_key(questions: Sequence[str]) -> str:
    """What two cases share when one duplicates the other: their questions (one, or a conversation's every
    question), normalised."""
    return "\x1f".join(normalize_question(q) for q in questions)


def dedupe_key(case: Case) -> str:
    return questions_key([t.question for t in case.turns] if case.turns else [case.question])


TOO_DEEP = "nested too deeply to read (lists or mappings hundreds of levels deep)"
TOO_DEEP_TIP = "a case is a flat mapping of fields; check how the file was generated"


@dataclass(frozen=True)
class RawItem:
    """One item of a case file before validation, with where it stood."""

    data: Any
    index: int
    line: int | None


def read_items(
    path: Path, max_bytes: int = DEFAULT_MAX_CASE_FILE_BYTES, config_folder: Path | None = None
) -> list[RawItem]:
    """Read a YAML list or JSONL file into raw items, with line numbers.

    `config_folder`: the folder of the config file whose `cases:` named `path`, to tell a path written
    relative to the working directory."""
    try:
        raw = _read_capped(path, max_bytes)
    except FileNotFoundError:
        raise CaseFileError(f"{path}: file not found", tip=_not_found_tip(path, config_folder)) from None
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


def _not_found_tip(path: Path, config_folder: Path | None) -> str:
    if config_folder is not None and path.is_relative_to(config_folder):
        written = path.relative_to(config_folder)
        there = Path.cwd() / written
        if there.is_file() and there.resolve() != path.resolve():
            fixed = Path(os.path.relpath(there.resolve(), config_folder.resolve()))
            return (
                f"`cases:` paths are relative to the config file's folder ({config_folder}), not the working "
                f"directory: write {fixed.as_posix()}"
            )
    return "check the path in `cases:` or --cases"


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


class _RepeatedKey(ValueError):
    """A JSON object that gives one key twice."""


def _keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) < len(pairs):
        raise _RepeatedKey
    return obj


class _Marked(dict[str, Any]):
    repeated: str | None = None


def _marked(pairs: list[tuple[str, Any]]) -> _Marked:
    obj = _Marked(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        obj.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return obj


def _repeated_key(line: str) -> str:
    """The dotted path of a key given twice in one object of `line` (a line `_keys_once` refused)."""
    stack: list[tuple[Any, str]] = [(json.loads(line, object_pairs_hook=_marked), "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Marked) and node.repeated is not None:
            return f"{path}.{node.repeated}" if path else node.repeated
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else k) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{path}.{i}" if path else str(i)) for i, v in reversed(list(enumerate(node))))
    raise AssertionError("a line _keys_once refused has a repeated key")


def _read_jsonl(path: Path, text: str) -> list[RawItem]:
    items: list[RawItem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            # `json` keeps the last of two equal keys in silence: a label `{"human": 0, ..., "human": 1}` would
            # say the opposite of what its writer read first.
            data = json.loads(line, object_pairs_hook=_keys_once)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"{path}:{lineno}: invalid JSON: {exc.msg}") from None
        except _RepeatedKey:
            raise CaseFileError(
                f"{path}:{lineno}: key {_repeated_key(line)!r} is given twice in one object (a JSON reader keeps "
                "the last without a word)",
                tip="give each key once",
            ) from None
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
        if _looks_like_json_lines(text):
            raise _json_lines_in_yaml(path) from None
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
        if isinstance(data, dict) and _looks_like_json_lines(text):
            raise _json_lines_in_yaml(path)
        raise CaseFileError(
            f"{path}: expected a list of cases, found {type(data).__name__}",
            tip="start each case with `- ` (a YAML list item), or list them under `cases:`",
        )
    lines = [n.start_mark.line + 1 for n in node.value] if isinstance(node, yaml.SequenceNode) else []
    return [RawItem(d, i, lines[i] if i < len(lines) else None) for i, d in enumerate(data)]


def _looks_like_json_lines(text: str) -> bool:
    """Every non-blank line one JSON object: JSONL content, whatever the file is called."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return bool(lines) and all(isinstance(json.loads(line), dict) for line in lines)
    except json.JSONDecodeError:
        return False


def _json_lines_in_yaml(path: Path) -> CaseFileError:
    return CaseFileError(
        f"{path}: JSON Lines content (one JSON object per line) in a file named {path.suffix}",
        tip=f"rename it to {path.with_suffix('.jsonl').name}: a case file is read as JSONL by its name "
        "(.jsonl, .ndjson), as a YAML list otherwise",
    )


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
        # Said first, and also when other fields are wrong (the model's own check runs only on valid fields).
        no_question = "question" not in data and "turns" not in data
        problems = ["question: required field is missing"] if no_question else []
        tip = None
        for err in exc.errors(include_url=False):
            if err["type"] == "value_error" and str(err["ctx"]["error"]) == _NO_QUESTION:
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
        raise CaseFileError(
            f"{_where(path, item, case_id)}: " + "; ".join(problems),
            tip=tip
            or "fields are id, question, expected, golden_context_ids, category, should_answer, "
            "must_mention, must_not_mention, source, difficulty, tags, criteria; a conversation has turns "
            "(a list, each turn with question, expected, golden_context_ids, must_mention, ...) for question",
        ) from None
    should_answer = expects_answer(model.should_answer, model.category)
    origin = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
    case_id = model.id if model.id else f"{path.stem}-{item.index + 1}"
    if model.turns is not None:
        return _conversation(model, model.turns, case_id, origin)
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
    )


def _criteria(criteria: list[str] | dict[str, CriterionConfig]) -> dict[str, Any]:
    return {
        "criteria": tuple(criteria) if isinstance(criteria, list) else (),
        "inline_criteria": tuple(criteria.items()) if isinstance(criteria, dict) else (),
    }


def _conversation(model: CaseModel, turns: Sequence[TurnModel], case_id: str, origin: str) -> Case:
    """A conversation: the case-level fields apply to every turn; a turn's own category or should_answer wins."""
    built = []
    shared = _criteria(model.criteria)
    for number, turn in enumerate(turns, start=1):
        category = turn.category if turn.category is not None else model.category
        own = _criteria(turn.criteria)
        built.append(
            Case(
                id=f"{case_id}{TURN_SEPARATOR}{number}",
                question=turn.question,
                expected=tuple(turn.expected) if isinstance(turn.expected, list) else turn.expected,
                golden_context_ids=tuple(turn.golden_context_ids),
                category=category,
                should_answer=expects_answer(turn.should_answer, category),
                must_mention=tuple(turn.must_mention),
                must_not_mention=tuple(turn.must_not_mention),
                source=model.source,
                difficulty=model.difficulty,
                tags=tuple(model.tags),
                origin=f"{origin} turn {number}",
                criteria=tuple(dict.fromkeys((*shared["criteria"], *own["criteria"]))),
                inline_criteria=(*shared["inline_criteria"], *own["inline_criteria"]),
                turn=number,
            )
        )
    return Case(
        id=case_id,
        question=built[0].question,
        expected=None,
        golden_context_ids=(),
        category=model.category,
        should_answer=all(t.should_answer for t in built),
        must_mention=(),
        must_not_mention=(),
        source=model.source,
        difficulty=model.difficulty,
        tags=tuple(model.tags),
        origin=origin,
        turns=tuple(built),
    )


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
    cases: list[Case] = []
    warnings: list[str] = []
    seen_ids: dict[str, str] = {}
    for path in paths:
        for item in read_items(path, max_bytes, config_folder):
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
        key = dedupe_key(case)
        if key in first:
            warnings.append(
                f"case {case.id!r} ({case.origin}) duplicates the question of case {first[key].id!r} "
                "after normalisation; run `ragjudge dedupe` to drop it"
            )
        else:
            first[key] = case
    return warnings
