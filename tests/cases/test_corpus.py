"""Reading a corpus for `cases generate`: JSONL, JSON, a folder, the example service's; bounded, every error
naming the file and the line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragjudge.cases import corpus
from ragjudge.cases.corpus import EXAMPLE, load_corpus
from ragjudge.errors import CaseFileError
from tests.cases.corpora import TWELVE, write_jsonl


def test_jsonl_documents_in_order_with_where_they_stood(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "kb.jsonl", TWELVE)
    docs = load_corpus(str(path))
    assert [d.id for d in docs] == [d["id"] for d in TWELVE]
    assert (docs[0].title, docs[0].text, docs[0].where) == ("Refunds", TWELVE[0]["text"], f"{path}:1")
    assert docs[-1].where == f"{path}:12"


def test_a_numeric_id_is_text_and_a_title_may_be_missing(tmp_path: Path) -> None:
    path = tmp_path / "kb.ndjson"
    path.write_text('{"id": 7, "text": "seven", "extra": true}\n\n{"id": "b", "title": null, "text": "b"}\n')
    docs = load_corpus(str(path))
    assert [(d.id, d.title, d.where) for d in docs] == [("7", "", f"{path}:1"), ("b", "", f"{path}:3")]


def test_a_folder_of_markdown_and_text_files(tmp_path: Path) -> None:
    (tmp_path / "kb" / "refunds").mkdir(parents=True)
    (tmp_path / "kb" / ".git").mkdir()
    (tmp_path / "kb" / "refunds" / "timing.md").write_text("# Refund timing\n\nRefunds take a day.\n")
    (tmp_path / "kb" / "shipping.txt").write_text("Parcels leave in two days.\n")
    (tmp_path / "kb" / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "kb" / ".git" / "notes.md").write_text("not a document")
    docs = load_corpus(str(tmp_path / "kb"))
    assert [(d.id, d.title) for d in docs] == [("refunds/timing.md", "Refund timing"), ("shipping.txt", "shipping")]
    assert docs[0].text == "# Refund timing\n\nRefunds take a day.\n"


def test_the_example_services_corpus() -> None:
    docs = load_corpus(EXAMPLE)
    assert len(docs) == 21
    assert (docs[0].id, docs[0].title) == ("doc-refund-1", "7天无理由退货")


def test_a_json_list(tmp_path: Path) -> None:
    path = tmp_path / "kb.json"
    path.write_text(json.dumps([{"id": "a", "text": "A."}, {"id": "b", "text": "B."}]))
    assert [(d.id, d.where) for d in load_corpus(str(path))] == [("a", f"{path}#1"), ("b", f"{path}#2")]
    path.write_text('{"id": "a"}')
    with pytest.raises(CaseFileError, match=r"kb.json: expected a JSON list of documents, found dict$"):
        load_corpus(str(path))


def test_a_long_document_is_shown_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_DOCUMENT_CHARS", 10)
    docs = load_corpus(str(write_jsonl(tmp_path / "kb.jsonl", [{"id": "a", "text": "x" * 25}])))
    assert (docs[0].text, docs[0].length, docs[0].cut) == ("x" * 10, 25, True)


def test_bounds_and_bad_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_jsonl(tmp_path / "kb.jsonl", TWELVE)
    monkeypatch.setattr(corpus, "MAX_DOCUMENTS", 5)
    with pytest.raises(CaseFileError, match=r"kb.jsonl:6: over 5 documents, the most one `cases generate` reads$"):
        load_corpus(str(path))
    monkeypatch.setattr(corpus, "MAX_CORPUS_BYTES", 100)
    with pytest.raises(CaseFileError, match=r"kb.jsonl: the corpus is over 100 bytes"):
        load_corpus(str(path))
    (tmp_path / "kb.csv").write_text("id,text\n")
    with pytest.raises(CaseFileError, match=r"kb.csv: a corpus file is JSONL \(.jsonl\) or JSON \(.json\), not .csv$"):
        load_corpus(str(tmp_path / "kb.csv"))
    (tmp_path / "bad.jsonl").write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff"}\n')
    with pytest.raises(CaseFileError, match=r"bad.jsonl:2: not UTF-8"):
        load_corpus(str(tmp_path / "bad.jsonl"))


def test_a_folder_document_linking_outside_the_folder_is_refused(tmp_path: Path) -> None:
    # Issue 40 item 3: `kb/notes.md -> ../outside/secret.txt` put the secret in the model's prompt.
    kb, outside = tmp_path / "kb", tmp_path / "outside"
    kb.mkdir()
    outside.mkdir()
    (kb / "a.md").write_text("# A\n\nInside the folder.\n", encoding="utf-8")
    (kb / "alias.md").symlink_to("a.md")
    (outside / "secret.txt").write_text("sk-secret\n", encoding="utf-8")
    assert [d.id for d in load_corpus(str(kb))] == ["a.md", "alias.md"]  # a link inside the folder is read
    (kb / "notes.md").symlink_to(Path("..") / "outside" / "secret.txt")
    with pytest.raises(CaseFileError) as caught:
        load_corpus(str(kb))
    assert caught.value.message == f"{kb / 'notes.md'}: refused: it links outside {kb} (to {outside / 'secret.txt'})"


def test_a_fifo_named_like_a_document_is_refused_not_waited_on(tmp_path: Path) -> None:
    # Issue 40 item 4: `kb/pipe.md` as a FIFO held `cases generate` forever.
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("text\n", encoding="utf-8")
    os.mkfifo(kb / "pipe.md")
    with pytest.raises(CaseFileError) as caught:
        load_corpus(str(kb))
    assert caught.value.message == f"{kb / 'pipe.md'}: refused: a FIFO (named pipe), not a file"


@pytest.mark.parametrize("brk", ["\r", "\u2028", "\n", "\u2029"])
def test_a_document_id_holding_a_line_break_is_refused_before_any_call(tmp_path: Path, brk: str) -> None:
    # Issue 40 item 9: such an id was found only when the cases were written, after the model calls were paid for.
    path = write_jsonl(tmp_path / "kb.jsonl", [{"id": "ok", "text": "t"}, {"id": f"a{brk}b", "text": "t"}])
    with pytest.raises(CaseFileError) as caught:
        load_corpus(str(path))
    assert caught.value.message == f"{path}:2: document id {'a' + brk + 'b'!r} holds a line break"
