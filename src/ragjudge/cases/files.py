"""Reading a case file into raw items: the one loader every reader of case files goes through.

A case file is JSONL by its name (`.jsonl`, `.ndjson`) and a YAML list otherwise (or a mapping with a
`cases:` list). YAML is read with YAML 1.2 rules, so `expected: No`, `question: Yes` and `category: on`
stay text, and within `config.safeyaml`'s limits (alias bombs, recursive anchors, deep nesting). Every
error names the file and, where there is one, the line; all are `CaseFileError` (exit 2).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragjudge.config import safeyaml
from ragjudge.config.model import DEFAULT_MAX_CASE_FILE_BYTES
from ragjudge.errors import CaseFileError
from ragjudge.repofiles.bounded import Bound, read_bounded
from ragjudge.safetext import clean_data

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
"""File name endings read as JSON Lines; every other case file is read as YAML."""

TOO_DEEP = "nested too deeply to read (lists or mappings hundreds of levels deep)"
TOO_DEEP_TIP = "a case is a flat mapping of fields; check how the file was generated"


def is_jsonl(path: Path) -> bool:
    return path.suffix.lower() in JSONL_SUFFIXES


@dataclass(frozen=True)
class RawItem:
    """One item of a case file before validation, with where it stood."""

    data: Any
    index: int
    line: int | None


class _Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. `expected: No`, `question: Yes` and `category: on` stay text."""


_BOOL = "tag:yaml.org,2002:bool"
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def read_items(
    path: Path, max_bytes: int = DEFAULT_MAX_CASE_FILE_BYTES, config_folder: Path | None = None
) -> list[RawItem]:
    """Read a YAML list or JSONL file into raw items, with line numbers.

    `config_folder`: the folder of the config file whose `cases:` named `path`, to tell a path written
    relative to the working directory."""
    return items_of(path, decode(path, read_bytes(path, max_bytes, config_folder)))


def read_bytes(path: Path, max_bytes: int = DEFAULT_MAX_CASE_FILE_BYTES, config_folder: Path | None = None) -> bytes:
    """The file's bytes, refused past `max_bytes`; a missing, unreadable or non-regular file is a CaseFileError."""
    bound = Bound(
        max_bytes,
        f"over {max_bytes:,} bytes, the limit for a case file",
        tip="split the file, or raise max_case_file_bytes in ragjudge.yml",
        missing_tip=None if path.exists() else _not_found_tip(path, config_folder),
    )
    return read_bounded(path, bound)


def decode(path: Path, raw: bytes) -> str:
    """The file's text: UTF-8, a byte order mark dropped, line endings as they are."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CaseFileError(
            f"{path}:{line}: not UTF-8 (invalid byte at offset {exc.start})", tip="re-save the file as UTF-8"
        ) from None


def items_of(path: Path, text: str, document: safeyaml.Loaded | None = None) -> list[RawItem]:
    """The raw items of `path`'s text (`document`: the YAML already parsed by `parse_yaml`, if it was)."""
    try:
        if is_jsonl(path):
            items = _read_jsonl(path, text)
        else:
            items = _yaml_items(path, text, document if document is not None else parse_yaml(path, text))
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


def parse_yaml(path: Path, text: str) -> safeyaml.Loaded:
    """`path`'s text parsed as one YAML 1.2 document within the limits, with its root node (for positions)."""
    try:
        return safeyaml.load(text, _Yaml12Loader)
    except safeyaml.YamlLimitError as exc:
        if exc.too_deep:
            raise CaseFileError(f"{path}: {TOO_DEEP}", tip=TOO_DEEP_TIP) from None
        where = f":{exc.line}" if exc.line else ""
        raise CaseFileError(
            f"{path}{where}: refused: {exc.message}", tip=exc.tip or "write the cases out plainly"
        ) from None
    except yaml.YAMLError as exc:
        if _looks_like_json_lines(text):
            raise _json_lines_in_yaml(path) from None
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise CaseFileError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None


def _yaml_items(path: Path, text: str, loaded: safeyaml.Loaded) -> list[RawItem]:
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
