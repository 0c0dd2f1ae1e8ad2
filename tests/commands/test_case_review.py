"""`ragjudge cases review`, driven through a pseudo-terminal as a person would: the decision is written back to
that case's line alone, and an approved case gates."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragjudge.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROMPT = b"[a]pprove / [e]dit / [r]eject / [s]kip / [q]uit: "
YAML = """# Cases generated from the knowledge base; a person reviews each before it gates.
- id: refund-time
  question: How long do refunds take?
  expected: [5 working days]
  golden_context_ids: [doc-refund-2]
  review: pending  # synthetic, 2026-12-05

# kept as it is
- id: parcel
  question: Where is my parcel?
  review: pending
- id: invoice
  question: Can I get an invoice?
"""


def review(path: Path, answers: list[str], editor: str | None = None, argv: list[str] | None = None) -> tuple[int, str]:
    """Run `ragjudge cases review PATH` on a pseudo-terminal, answering each prompt in turn; `editor` is the
    `EDITOR` the run sees (a command that edits the file named last)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        # from the folder, as a person would
        [sys.executable, "-m", "ragjudge", *(argv or ["cases", "review", path.name])],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=path.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "EDITOR": editor or "false", "VISUAL": ""},
    )
    os.close(follower)
    seen, pending = b"", list(answers)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if seen.rstrip().endswith(PROMPT.rstrip()) and pending:
                os.write(leader, (pending.pop(0) + "\n").encode())
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=10)
    os.close(leader)
    return code, seen.decode("utf-8", "replace").replace("\r\n", "\n")


def test_approve_one_and_skip_the_other_through_a_terminal(tmp_path: Path) -> None:
    path = tmp_path / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    code, screen = review(path, ["a", "s"])
    assert code == 0, screen
    assert "[1 of 2] refund-time (generated.yaml:2)" in screen
    assert "  expected: 5 working days" in screen and "  golden: doc-refund-2" in screen
    assert "generated.yaml: 1 approved, 0 rejected, 0 edited, 1 left pending" in screen
    # Only that case's review line changed: its spacing and comment, the other cases and comments stay.
    assert path.read_text(encoding="utf-8") == YAML.replace(
        "  review: pending  # synthetic", "  review: approved  # synthetic"
    )


def test_jsonl_lines_are_rewritten_one_by_one(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "question": "q1?", "review": "pending"},
        {"id": "b", "question": "q2?", "review": "pending"},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _ = review(path, ["r", "q"])
    assert code == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["review"] for line in lines] == ["rejected", "pending"]
    assert lines[1] == json.dumps(rows[1])


def test_nothing_pending_or_nothing_decided_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("- id: x\n  question: q?\n", encoding="utf-8")
    assert main(["cases", "review", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: no case is pending review\n"
    path.write_text(YAML, encoding="utf-8")
    code, screen = review(path, ["s", "s"])
    assert code == 0 and "nothing decided: the file is unchanged" in screen
    assert path.read_text(encoding="utf-8") == YAML


def test_stats_count_review_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(YAML, encoding="utf-8")
    assert main(["cases", "stats", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_review"] == {"pending": 2, "(unset)": 1}


def _sed(expression: str) -> str:
    return f"{sys.executable} -c \"import re,sys; p=sys.argv[1]; t=open(p).read(); open(p,'w').write({expression})\""


def test_edit_a_case_then_approve_it(tmp_path: Path) -> None:
    path = tmp_path / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    # The person fixes the reference in their editor, sees the case again, and approves it.
    editor = _sed("t.replace('5 working days', '5 to 7 working days')")
    code, screen = review(path, ["e", "a", "s"], editor)
    assert code == 0, screen
    assert screen.count("[1 of 2] refund-time") == 2 and "  expected: 5 to 7 working days" in screen
    assert "generated.yaml: 1 approved, 0 rejected, 1 edited, 1 left pending" in screen
    assert path.read_text(encoding="utf-8") == YAML.replace("[5 working days]", "[5 to 7 working days]").replace(
        "  review: pending  # synthetic", "  review: approved  # synthetic"
    )


def test_an_edit_that_is_not_a_case_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    editor = _sed("t.replace('question:', 'questoin:')")
    code, screen = review(path, ["e", "s", "s"], editor)
    assert code == 0, screen
    assert (
        "  edit set aside: the edited case:1: case 'refund-time': question: required field is missing; "
        "unknown field 'questoin'" in screen
    )
    assert path.read_text(encoding="utf-8") == YAML  # nothing decided, nothing edited
    code, screen = review(path, ["e", "q"], "no-such-editor-xyz")
    assert "  cannot start the editor 'no-such-editor-xyz' (No such file or directory): set EDITOR" in screen


def test_a_jsonl_case_is_edited_as_one_object_and_written_as_one_line(tmp_path: Path) -> None:
    rows = [{"id": "a", "question": "q1?", "review": "pending"}, {"id": "b", "question": "q2?", "review": "pending"}]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, screen = review(path, ["e", "r", "q"], _sed("t.replace('q1?', 'Is q1 clearer now?')"))
    assert code == 0, screen
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"id": "a", "question": "Is q1 clearer now?", "review": "rejected"}
    assert lines[1] == json.dumps(rows[1])


GENERATED = """# generated by gpt-4o-mini on 2026-12-05 from refund-policy; quote: within 14 days of the return
- id: syn-20261205-001
  question: How long do refunds take?
  expected: ["within 14 days\\n\\nof the return"]
  golden_context_ids: [refund-policy]
  source: synthetic
  review: pending
"""
POLICY = "Refunds are issued within 14 days of the return being received. The card is credited."


def test_a_generated_case_shows_its_quote_marked_in_its_passage(tmp_path: Path) -> None:
    path = tmp_path / "synthetic.yaml"
    path.write_text(GENERATED, encoding="utf-8")
    corpus = tmp_path / "kb.jsonl"
    corpus.write_text(json.dumps({"id": "refund-policy", "title": "Refunds", "text": POLICY}) + "\n", encoding="utf-8")
    leader = ["cases", "review", path.name, "--corpus", str(corpus)]
    code, screen = review(path, ["a"], argv=leader)
    assert code == 0, screen
    assert "  quote: within 14 days of the return\n" in screen
    assert "  expected: within 14 days of the return\n" in screen  # one line, however the point breaks
    assert (
        "  source (refund-policy): Refunds are issued »within 14 days of the return« being received. The card is "
        "credited.\n" in screen
    )
    # Without the corpus, the quote alone; a corpus without the document says so.
    path.write_text(GENERATED, encoding="utf-8")
    code, screen = review(path, ["s"])
    assert "  quote: within 14 days of the return\n" in screen and "  source (" not in screen
    corpus.write_text(json.dumps({"id": "other", "title": "Other", "text": POLICY}) + "\n", encoding="utf-8")
    code, screen = review(path, ["s"], argv=leader)
    assert "  source (refund-policy): the document is not in the corpus\n" in screen
