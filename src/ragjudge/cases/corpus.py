"""The knowledge base that `cases generate` asks about: documents with an id, a title and a text.

A corpus is one of:

* a JSONL file (`.jsonl`, `.ndjson`): one `{"id", "title", "text"}` object a line (other keys ignored);
* a JSON file (`.json`): a list of those objects, as the example service's corpus is;
* a folder: every `.md` and `.txt` file under it (hidden ones aside), its id the path relative to the folder,
  its title its first Markdown heading (else the file's name);
* `example`: the example service's own corpus (the one `ragjudge demo` answers from).

Reads are bounded (`MAX_CORPUS_BYTES` in all, `MAX_DOCUMENTS` documents) and go through `repofiles.bounded`: a
FIFO or other non-file is refused without waiting on it, and a folder's file that links outside the folder is
refused (its text would go to a third-party model). A document longer than `MAX_DOCUMENT_CHARS` is shown cut,
and says so. Bad input is a CaseFileError naming the file and the line.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ragjudge.cases.files import decode
from ragjudge.errors import CaseFileError
from ragjudge.repofiles.bounded import Bound, read_bounded
from ragjudge.safetext import clean_text

EXAMPLE = "example"
"""The `--corpus` value that names the example service's corpus."""
MAX_CORPUS_BYTES = 20_000_000
"""The most bytes read from a corpus, over all its files."""
MAX_DOCUMENTS = 5_000
"""The most documents in one corpus."""
MAX_DOCUMENT_CHARS = 20_000
"""A document is shown to the model up to this many characters (and its questions come from that part)."""
SUFFIXES = (".md", ".txt")
"""The files a corpus folder is made of."""
LINE_BREAK = re.compile("[\n\r\v\f\x85\u2028\u2029]")
"""What YAML or a reader takes for the end of a line."""
_TIP = 'one JSON object a line: {"id": "...", "title": "...", "text": "..."} (title optional)'


@dataclass(frozen=True)
class Document:
    """One document of the corpus, as the model is shown it."""

    id: str
    title: str
    text: str
    """The text, cut to `MAX_DOCUMENT_CHARS`."""
    length: int
    """The text's length in characters before the cut."""
    where: str
    """Where it was read: `file:line`, `file#n` or the file."""

    @property
    def cut(self) -> bool:
        """Whether the model is shown only the start of the text."""
        return self.length > len(self.text)


def load_corpus(spec: str) -> list[Document]:
    """The documents of `--corpus`: `example`, a folder, or a JSON / JSONL file."""
    if spec == EXAMPLE:
        path = Path(str(resources.files("ragjudge.examples").joinpath("corpus", "docs.json")))
        docs = _from_json(path, _text(path, MAX_CORPUS_BYTES))
    else:
        path = Path(spec)
        if path.is_dir():
            docs = _from_folder(path)
        elif not path.exists():
            raise CaseFileError(
                f"{path}: corpus not found",
                tip=f"pass a JSONL file, a folder of {' / '.join(SUFFIXES)} files, or `{EXAMPLE}`",
            )
        elif path.suffix.lower() in (".jsonl", ".ndjson"):
            docs = _from_jsonl(path, _text(path, MAX_CORPUS_BYTES))
        elif path.suffix.lower() == ".json":
            docs = _from_json(path, _text(path, MAX_CORPUS_BYTES))
        else:
            raise CaseFileError(
                f"{path}: a corpus file is JSONL (.jsonl) or JSON (.json), not {path.suffix or 'without a suffix'}",
                tip=f"pass the folder holding it to read {' / '.join(SUFFIXES)} files, or convert it: {_TIP}",
            )
    if not docs:
        raise CaseFileError(f"{spec}: the corpus has no documents", tip=_TIP)
    seen: dict[str, Document] = {}
    for doc in docs:
        if LINE_BREAK.search(doc.id):
            # Found now, before a model call is paid for: the id goes on one line of the case file (its comment).
            raise CaseFileError(
                f"{doc.where}: document id {doc.id!r} holds a line break",
                tip="an id is one line (a folder's document is named by its path: rename the file)",
            )
        if doc.id in seen:
            raise CaseFileError(
                f"{doc.where}: document id {doc.id!r} is also the id of {seen[doc.id].where}",
                tip="give every document its own id: the generated cases name it in golden_context_ids",
            )
        seen[doc.id] = doc
    return docs


def _text(path: Path, budget: int, folder: Path | None = None) -> str:
    """A corpus file's text within what is left of the corpus's bytes; in a folder, a file whose real location
    is outside it (a checked-in link to `../../.ssh/id_rsa`) is refused: its text would be sent to the model."""
    bound = Bound(
        budget,
        f"the corpus is over {MAX_CORPUS_BYTES:,} bytes, the most `cases generate` reads",
        tip="generate from a part of the knowledge base at a time",
        missing="corpus file not found",
    )
    return decode(path, read_bounded(path, bound, inside=folder))


def _document(data: Any, where: str) -> Document:
    if not isinstance(data, dict):
        raise CaseFileError(f"{where}: expected a JSON object, found {type(data).__name__}", tip=_TIP)
    doc_id = data.get("id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str) or not doc_id.strip():
        problem = "is missing" if doc_id is None else "must be a non-empty text"
        raise CaseFileError(f"{where}: field 'id' {problem}", tip=_TIP)
    text, title = data.get("text"), data.get("title", "")
    if not isinstance(text, str):
        problem = "is missing" if text is None else f"must be text, not {type(text).__name__}"
        raise CaseFileError(f"{where}: field 'text' {problem}", tip=_TIP)
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise CaseFileError(f"{where}: field 'title' must be text, not {type(title).__name__}", tip=_TIP)
    return _made(clean_text(doc_id.strip()), clean_text(title), clean_text(text), where)


def _made(doc_id: str, title: str, text: str, where: str) -> Document:
    return Document(doc_id, title.strip(), text[:MAX_DOCUMENT_CHARS], len(text), where)


def _room(docs: list[Document], where: str) -> None:
    if len(docs) >= MAX_DOCUMENTS:
        raise CaseFileError(
            f"{where}: over {MAX_DOCUMENTS:,} documents, the most one `cases generate` reads",
            tip="generate from a part of the knowledge base at a time",
        )


def _from_jsonl(path: Path, text: str) -> list[Document]:
    docs: list[Document] = []
    # Lines end at LF (CRLF too): `splitlines` would also cut at a U+2028 that JSON allows inside a string.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"{where}: not JSON ({exc.msg} at column {exc.colno})", tip=_TIP) from None
        except RecursionError:
            raise CaseFileError(f"{where}: nested too deeply to read", tip=_TIP) from None
        _room(docs, where)
        docs.append(_document(data, where))
    return docs


def _from_json(path: Path, text: str) -> list[Document]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseFileError(f"{path}:{exc.lineno}: not JSON ({exc.msg})", tip="a JSON list of documents") from None
    except RecursionError:
        raise CaseFileError(f"{path}: nested too deeply to read", tip="a JSON list of documents") from None
    if not isinstance(data, list):
        raise CaseFileError(
            f"{path}: expected a JSON list of documents, found {type(data).__name__}",
            tip='[{"id": "...", "title": "...", "text": "..."}, ...]',
        )
    docs: list[Document] = []
    for k, item in enumerate(data, 1):
        _room(docs, f"{path}#{k}")
        docs.append(_document(item, f"{path}#{k}"))
    return docs


def _from_folder(folder: Path) -> list[Document]:
    files: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files.extend(Path(root) / n for n in sorted(names) if n.lower().endswith(SUFFIXES) and not n.startswith("."))
    files.sort(key=lambda p: p.relative_to(folder).as_posix())
    budget = MAX_CORPUS_BYTES
    docs: list[Document] = []
    for path in files:
        _room(docs, str(path))
        text = _text(path, budget, folder)
        budget -= len(text.encode("utf-8"))
        doc_id = path.relative_to(folder).as_posix()
        docs.append(_made(clean_text(doc_id), _title(text) or path.stem, clean_text(text), str(path)))
    return docs


def _title(text: str) -> str:
    """A Markdown file's first heading (`# Title`), if it has one among its first lines."""
    for line in text.splitlines()[:20]:
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""
