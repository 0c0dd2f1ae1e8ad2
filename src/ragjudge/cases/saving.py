"""Cases written back to a file: appended as text, so what is already there stays as it was written.

`cases import-bad` and `cases generate` append to a case file. Re-dumping the whole file would lose its comments,
order and quoting, and a YAML 1.1 dumper reading it back would turn `expected: No` into `false`; instead the
new cases are spliced in as text where the file's list ends, and the result is read back through the
loader before it is written: the old items must come back as they were and the new ones as intended, or
nothing is written. `dedupe` writes its kept cases to a new file whole (`write_cases`). Every write goes
through `repofiles.atomic`: at once, never through a link, the mode kept, and only over the bytes that were read.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragjudge.cases.files import RawItem, decode, is_jsonl, items_of, parse_yaml, read_bytes
from ragjudge.config import safeyaml
from ragjudge.errors import CaseFileError, UsageError
from ragjudge.repofiles.atomic import ANY, Changed, check_writable, write_atomic

_LINE_END = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
_NOT_A_LIST_TIP = "keep the cases as a top-level list, or import into a new file and list both under `cases:`"


@dataclass(frozen=True)
class Addition:
    """A case to append, as written, and the comment to put above it (in YAML; JSONL has no comments)."""

    data: dict[str, Any]
    note: str


@dataclass(frozen=True)
class Target:
    """A case file opened to be appended to: its text as read and the items already in it."""

    path: Path
    text: str
    """The file's text, without its byte order mark (empty for a file that is not there yet)."""
    bom: bool
    """Whether the file starts with a UTF-8 byte order mark (kept when it is written back)."""
    items: tuple[RawItem, ...]
    document: safeyaml.Loaded | None
    """A YAML file's parsed document (None for JSONL or a blank file)."""
    raw: bytes | None = None
    """The file's bytes as read (None: there was no file): it is written only if it still holds them."""

    @property
    def newline(self) -> str:
        """The file's own line ending, for the lines appended to it."""
        return "\r\n" if "\r\n" in self.text else "\n"


def open_target(path: Path) -> Target:
    """Read `path` through the loader to append to it; a YAML file must be a list (or blank) to take more."""
    check_writable(path)  # a link or a FIFO is refused before anything is asked of a model
    if not path.exists():
        return Target(path, "", False, (), None)
    raw = read_bytes(path)
    text = decode(path, raw)
    bom = raw.startswith(codecs.BOM_UTF8)
    if not text.strip():
        return Target(path, text, bom, (), None, raw)
    if is_jsonl(path):
        return Target(path, text, bom, tuple(items_of(path, text)), None, raw)
    document = parse_yaml(path, text)
    if document.data is not None and not isinstance(document.data, list):
        raise UsageError(
            f"{path}: stubs are appended to a top-level YAML list, and this file is a {type(document.data).__name__}",
            tip=_NOT_A_LIST_TIP,
        )
    return Target(path, text, bom, tuple(items_of(path, text, document)), document, raw)


def append(target: Target, additions: Sequence[Addition]) -> None:
    """Write `target` back with `additions` after its items; refused (UsageError) rather than written wrong.

    A file changed since it was read (another program appended a case while the model worked) is read again and
    the additions appended to what it holds now, once, unless an id they bring is now taken: the other change and
    the paid-for cases are both kept. Changed again, it is refused (exit 2, nothing written)."""
    try:
        _append(target, additions)
    except Changed:
        again = open_target(target.path)
        ids = {str(item.data.get("id")) for item in again.items if isinstance(item.data, dict)}
        taken = [str(a.data["id"]) for a in additions if str(a.data.get("id")) in ids]
        if taken:
            raise Changed(
                f"{target.path}: changed since ragjudge read it, and now holds id {taken[0]!r} too; "
                "nothing was written",
                tip="another program wrote to it meanwhile: its change is kept; run the command again",
            ) from None
        _append(again, additions)


def _append(target: Target, additions: Sequence[Addition]) -> None:
    expected = [item.data for item in target.items] + [a.data for a in additions]
    for text in _candidates(target, additions):
        if _reads_as(target.path, text, expected):
            write_atomic(target.path, (codecs.BOM_UTF8 if target.bom else b"") + text.encode("utf-8"), target.raw)
            return
    raise UsageError(
        f"{target.path}: the new cases cannot be appended to this file's list without rewriting it",
        tip="write the cases as a block list (each case starting with `- `), or import into a new file and "
        "list both under `cases:`",
    )


def write_cases(path: Path, items: Sequence[Any], jsonl: bool) -> None:
    """Cases written to a new file whole: one JSON object a line, or a YAML list."""
    if jsonl:
        text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in items)
    else:
        text = yaml.safe_dump(list(items), allow_unicode=True, sort_keys=False)
    write_atomic(path, text.encode("utf-8"), ANY)


def _reads_as(path: Path, text: str, expected: list[Any]) -> bool:
    try:
        return [item.data for item in items_of(path, text)] == expected
    except CaseFileError:
        return False


def _candidates(target: Target, additions: Sequence[Addition]) -> Iterator[str]:
    """The file with `additions` spliced in, most natural layout first; the first that reads back right wins."""
    text, newline = target.text, target.newline
    if is_jsonl(target.path):
        yield _ended(text, newline) + "".join(json.dumps(a.data, ensure_ascii=False) + newline for a in additions)
        return
    node = target.document.node if target.document is not None else None
    if isinstance(node, yaml.SequenceNode) and node.flow_style:
        for ascii_only in (False, True):
            yield _into_flow(text, node, additions, newline, ascii_only)
        return
    if isinstance(node, yaml.SequenceNode):
        # Where the list ends (before a `...` that closes the document), at the column its items start at; without
        # the blank line first when that line would join the last case's text (a block scalar kept with `|+`).
        at = node.end_mark.index
        for indent in dict.fromkeys((_dash_column(text, node), node.start_mark.column, 0)):
            yield _into_block(text, at, additions, newline, indent)
            yield _into_block(text, at, additions, newline, indent, gap=False)
        return
    yield _into_block(text, len(text), additions, newline, 0)


def _ended(text: str, newline: str) -> str:
    return text if not text or text.endswith("\n") else text + newline


def _into_block(
    text: str, at: int, additions: Sequence[Addition], newline: str, indent: int, *, gap: bool = True
) -> str:
    head, tail = _ended(text[:at], newline), text[at:]
    lines: list[str] = []
    for addition in additions:
        # A note of several lines, each a comment: split wherever YAML sees a line end, not only at LF.
        lines.extend(f"# {part}" for part in _LINE_END.split(addition.note))
        dumped = yaml.safe_dump([addition.data], allow_unicode=True, sort_keys=False, width=1000)
        lines.extend(dumped.removesuffix("\n").split("\n"))
    block = "".join((" " * indent + line if line else line) + newline for line in lines)
    return head + (newline if gap and head.strip() else "") + block + tail


def _into_flow(
    text: str, node: yaml.SequenceNode, additions: Sequence[Addition], newline: str, ascii_only: bool
) -> str:
    close = node.end_mark.index - 1  # the closing `]`
    between = text[node.value[-1].end_mark.index : close] if node.value else ""
    written_comma = any("," in line.split("#", 1)[0] for line in between.split("\n"))
    comma = "," if node.value and not written_comma else ""
    entries = [
        "".join(f"# {part}{newline}" for part in _LINE_END.split(a.note)) + json.dumps(a.data, ensure_ascii=ascii_only)
        for a in additions
    ]
    return text[:close] + comma + newline + ("," + newline).join(entries) + newline + text[close:]


def _dash_column(text: str, node: yaml.SequenceNode) -> int:
    """The column of the `-` before a block list's first item (its start mark is a tag's or anchor's, if any)."""
    if not node.value:
        return node.start_mark.column
    dash = text.rfind("-", 0, node.value[0].start_mark.index)
    return dash - (text.rfind("\n", 0, dash) + 1) if dash >= 0 else node.start_mark.column
