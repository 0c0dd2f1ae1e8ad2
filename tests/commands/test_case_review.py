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
from collections.abc import Callable
from pathlib import Path

import pytest

from ragjudge.cases.caseset import load_cases
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


def review(
    path: Path,
    answers: list[str],
    editor: str | None = None,
    argv: list[str] | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> tuple[int, str]:
    """Run `ragjudge cases review PATH` on a pseudo-terminal, answering each prompt in turn; `editor` is the
    `EDITOR` the run sees (a command that edits the file named last); `meanwhile` runs before the first answer
    (another program at work on the files while the person reads)."""
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
                if meanwhile is not None and len(pending) == len(answers):
                    meanwhile()
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


def test_a_planted_link_is_never_written_through_and_the_mode_is_kept(tmp_path: Path) -> None:
    # Issue 40 item 1: a PR can carry `.generated.reviewed.yaml -> a file outside the repository`; the old fixed
    # temporary name was opened following links, and the write turned a 0600 file into 0644.
    repo, outside = tmp_path / "repo", tmp_path / "outside.txt"
    repo.mkdir()
    outside.write_text("keep me\n", encoding="utf-8")
    path = repo / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    path.chmod(0o600)
    for name in (".generated.reviewed.yaml", ".generated.yaml.tmp", "generated.yaml.tmp"):
        (repo / name).symlink_to(outside)
    code, screen = review(path, ["a", "s"])
    assert code == 0, screen
    assert outside.read_text(encoding="utf-8") == "keep me\n"
    assert not path.is_symlink() and (path.stat().st_mode & 0o777) == 0o600
    assert path.read_text(encoding="utf-8") == YAML.replace(
        "review: pending  # synthetic", "review: approved  # synthetic"
    )
    assert sorted(p.name for p in repo.iterdir()) == [
        ".generated.reviewed.yaml",
        ".generated.yaml.tmp",
        "generated.yaml",
        "generated.yaml.tmp",
    ]


def test_a_case_file_that_is_a_link_is_not_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(YAML, encoding="utf-8")
    path = tmp_path / "generated.yaml"
    path.symlink_to(real)
    code, screen = review(path, ["a", "s"])
    assert code == 2, screen
    assert (
        f"ragjudge: error: generated.yaml: refused: a symbolic link (to {real}); ragjudge writes only regular files"
        in screen
    )
    assert "[1 of 2]" not in screen  # refused before the person spends time on it
    assert path.is_symlink() and real.read_text(encoding="utf-8") == YAML


def test_a_change_made_while_the_person_reads_is_kept(tmp_path: Path) -> None:
    # Issue 40 item 5: a case appended while `cases review` waited for an answer was gone after `a`.
    path = tmp_path / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    appended = YAML + "- id: added-meanwhile\n  question: Is this kept?\n"

    def another_writer() -> None:
        path.write_text(appended, encoding="utf-8")

    code, screen = review(path, ["a", "s"], meanwhile=another_writer)
    assert code == 2, screen
    assert "ragjudge: error: generated.yaml: changed since ragjudge read it; nothing was written" in screen
    assert (
        "Tip: another program wrote to it meanwhile: its change is kept; run the command again; this review "
        "(1 approved, 0 rejected, 0 edited, 1 left pending) was not saved" in screen
    )
    assert path.read_text(encoding="utf-8") == appended
    assert [p.name for p in tmp_path.iterdir()] == ["generated.yaml"]  # no temporary file left behind


# A double-quoted question over several lines (one of its lines reads `review: pending`), as a dumper writes it.
TRICKY = """- id: trick
  question: "How long…?\nreview: pending\nand why?"
  expected: [five days]
  review: pending
"""


def test_the_decision_goes_to_the_cases_review_key_not_a_line_of_its_question(tmp_path: Path) -> None:
    # Issue 40 item 6: the question's own `review: pending` line took the decision; the case stayed pending.
    path = tmp_path / "generated.yaml"
    path.write_text(TRICKY, encoding="utf-8")
    code, screen = review(path, ["r"])
    assert code == 0, screen
    assert "generated.yaml: 0 approved, 1 rejected, 0 edited, 0 left pending" in screen
    assert path.read_text(encoding="utf-8") == TRICKY.replace("  review: pending\n", "  review: rejected\n")
    [case] = load_cases([path]).cases
    assert case.review == "rejected" and case.question == "How long…? review: pending and why?"


def test_a_quoted_pending_value_takes_the_decision(tmp_path: Path) -> None:
    path = tmp_path / "generated.yaml"
    path.write_text("cases:\n  - id: q\n    question: Why?\n    review: 'pending'   # to check\n", encoding="utf-8")
    code, screen = review(path, ["a"])
    assert code == 0, screen
    assert (
        path.read_text(encoding="utf-8") == "cases:\n  - id: q\n    question: Why?\n    review: approved   # to check\n"
    )


def test_an_editor_that_cannot_be_split_keeps_the_decisions_made(tmp_path: Path) -> None:
    # Issue 40 item 7: `EDITOR="vi '"` was an internal error, and every decision before it was lost.
    path = tmp_path / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    code, screen = review(path, ["a", "e", "s"], editor="vi '")
    assert code == 0, screen
    assert '  cannot start the editor "vi \'" (No closing quotation): set EDITOR' in screen
    assert screen.count("[2 of 2] parcel") == 2  # shown again to decide
    assert "Traceback" not in screen
    assert path.read_text(encoding="utf-8") == YAML.replace(
        "review: pending  # synthetic", "review: approved  # synthetic"
    )


def test_an_edit_that_changes_the_id_or_drops_the_review_key_still_takes_the_decision(tmp_path: Path) -> None:
    path = tmp_path / "generated.yaml"
    path.write_text(YAML, encoding="utf-8")
    # The person renames the first case and deletes its review line, then approves; the second is rejected.
    editor = _sed(
        "t.replace('id: refund-time', 'id: refund-days').replace('  review: pending  # synthetic, 2026-12-05\\\\n', '')"
    )
    code, screen = review(path, ["e", "a", "r"], editor)
    assert code == 0, screen
    assert "generated.yaml: 1 approved, 1 rejected, 1 edited, 0 left pending" in screen
    cases = {c.id: c.review for c in load_cases([path]).cases}
    assert cases == {"refund-days": "approved", "parcel": "rejected", "invoice": None}
    text = path.read_text(encoding="utf-8")
    assert "# synthetic" not in text  # the edit dropped that line: the decision got a line of its own
    assert text.startswith(
        "# Cases generated from the knowledge base; a person reviews each before it gates.\n- id: refund-days\n"
        "  question: How long do refunds take?\n  expected: [5 working days]\n  golden_context_ids: [doc-refund-2]\n"
        "  review: approved\n\n# kept as it is\n"
    )
