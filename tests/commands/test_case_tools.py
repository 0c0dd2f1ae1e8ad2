"""`ragjudge cases stats` and `ragjudge cases import-bad`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cases.caseset import load_cases
from ragjudge.cli import main
from ragjudge.commands.case_tools import stats

CASES_YAML = """\
# Our anchors. This comment must survive an import.
- id: r1
  question: 退货需要多久？
  category: 退款
  source: human
  difficulty: easy
- id: r2
  question: How long do refunds take?
  category: 退款
  source: public
  difficulty: medium
- id: r3
  question: "  how long do refunds take "
  category: 退款
  source: synthetic
- id: o1
  question: 今天天气怎么样？
  category: 超纲
  source: human
  difficulty: hard
- id: o2
  question: Who won the football game?
  category: refunds
  should_answer: false
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(CASES_YAML, encoding="utf-8")
    return path


def _bad(tmp_path: Path, *rows: Any) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows))
    return path


# --- stats ----------------------------------------------------------------------------------------


def test_stats_counts_categories_sources_difficulties_duplicates_and_out_of_scope(cases_file: Path) -> None:
    figures = stats(load_cases([cases_file]).cases)
    assert figures["cases"] == 5
    assert figures["by_category"] == {"退款": 3, "超纲": 1, "refunds": 1}
    assert figures["by_source"] == {"human": 2, "public": 1, "synthetic": 1, "(unset)": 1}
    assert figures["by_difficulty"] == {"easy": 1, "medium": 1, "hard": 1, "(unset)": 2}
    assert figures["duplicates"] == [{"id": "r3", "duplicates": "r2", "question": "  how long do refunds take "}]
    # 超纲 by category, and should_answer: false by flag.
    assert (figures["out_of_scope"], figures["out_of_scope_share"]) == (2, 0.4)


def test_stats_prints_a_readable_summary(cases_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "cases", "stats", str(cases_file))
    assert code == 0
    assert out.splitlines() == [
        "cases: 5 in 1 file(s)",
        "by category: 退款 3 · 超纲 1 · refunds 1",
        "by source: human 2 · public 1 · synthetic 1 · (unset) 1",
        "by difficulty: (unset) 2 · easy 1 · medium 1 · hard 1",
        "by review: (unset) 5",
        "duplicates: 1 (same question as an earlier case after normalisation)",
        "  r3 duplicates r2:   how long do refunds take ",
        "out of scope: 2 of 5 (40.0%)",
    ]


def test_stats_json_over_several_files(tmp_path: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    more = tmp_path / "more.jsonl"
    more.write_text(
        json.dumps({"id": "j1", "question": "退货需要多久?", "source": "reflow"}, ensure_ascii=False) + "\n"
    )
    code, out, _ = _run(capsys, "cases", "stats", str(cases_file), str(more), "--json")
    data = json.loads(out)
    assert code == 0 and data["cases"] == 6 and data["by_source"]["reflow"] == 1
    assert [d["id"] for d in data["duplicates"]] == ["r3", "j1"]  # full-width ？ and ASCII ? normalise alike


def test_stats_on_a_bad_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("- id: a\n  question: q\n  difficulty: extreme\n", encoding="utf-8")
    code, _, err = _run(capsys, "cases", "stats", str(path))
    assert code == 2 and f"{path}:1: case 'a': difficulty" in err


def test_cases_without_a_tool_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "cases")[0] == 2


# --- import-bad -----------------------------------------------------------------------------------


def test_import_appends_stubs_and_drops_duplicates(
    tmp_path: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _bad(
        tmp_path,
        {"question": "HOW LONG do refunds take？", "answer": "Forever."},  # duplicates r2 after normalisation
        {
            "question": "Can I return a gift?",
            "answer": "No, never.",
            "expected": "Gifts go back with the item.",
            "timestamp": "2026-11-20T10:00:00Z",
            "category": "退款",
        },
        {"question": "发票怎么开？", "answer": "不知道"},
        {"question": "发票 怎么开", "answer": "again"},  # duplicates the one before it
    )
    code, out, _ = _run(capsys, "cases", "import-bad", str(bad), "--into", str(cases_file), "--date", "2026-11-29")
    assert code == 0
    assert out.splitlines()[0] == (
        f"imported=2 from 2 question(s) in 2 cluster(s) dropped=2 (duplicates of existing questions) into {cases_file}"
    )
    text = cases_file.read_text(encoding="utf-8")
    assert text.startswith("# Our anchors. This comment must survive an import.\n")
    assert "# production answer (bad): No, never.\n" in text and "# production answer (bad): 不知道\n" in text
    loaded = load_cases([cases_file]).cases
    assert [c.id for c in loaded] == ["r1", "r2", "r3", "o1", "o2", "reflow-20261129-001", "reflow-20261129-002"]
    gift, invoice = loaded[-2:]
    assert (gift.question, gift.expected, gift.category) == (
        "Can I return a gift?",
        "Gifts go back with the item.",
        "退款",
    )
    assert gift.source == invoice.source == "reflow"
    assert gift.review == invoice.review == "pending"  # a person confirms each before it gates
    assert gift.tags == invoice.tags == ("reflow-2026-11-29",)
    assert invoice.expected is None and invoice.question == "发票怎么开？"


def test_a_second_import_gets_fresh_ids_and_skips_what_it_already_added(
    tmp_path: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _bad(tmp_path, {"question": "Where is my parcel?", "answer": "In space."})
    _run(capsys, "cases", "import-bad", str(first), "--into", str(cases_file), "--date", "2026-11-29")
    again = _bad(tmp_path, {"question": "where is my parcel", "answer": "x"}, {"question": "New one?", "answer": "y"})
    code, out, _ = _run(capsys, "cases", "import-bad", str(again), "--into", str(cases_file), "--date", "2026-11-29")
    assert code == 0 and "imported=1 from 1 question(s) in 1 cluster(s) dropped=1" in out
    ids = [c.id for c in load_cases([cases_file]).cases]
    assert ids[-2:] == ["reflow-20261129-001", "reflow-20261129-002"]


def test_import_into_a_new_yaml_or_jsonl_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _bad(tmp_path, {"question": "Q one?", "answer": "a"}, {"question": "Q two?", "answer": "b"})
    for name in ("new.yaml", "new.jsonl"):
        target = tmp_path / "sub" / name
        code, _, _ = _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-01-02")
        cases = load_cases([target]).cases
        assert code == 0 and [c.question for c in cases] == ["Q one?", "Q two?"]
        assert all(c.source == "reflow" and c.tags == ("reflow-2026-01-02",) for c in cases)
    lines = (tmp_path / "sub" / "new.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"id": "reflow-20260102-001", "question": "Q one?", "source": "reflow",
                                    "tags": ["reflow-2026-01-02"], "review": "pending"}  # fmt: skip


def test_the_date_defaults_to_today(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from datetime import date

    bad = _bad(tmp_path, {"question": "Q?", "answer": "a"})
    _run(capsys, "cases", "import-bad", str(bad), "--into", str(tmp_path / "c.yaml"))
    (case,) = load_cases([tmp_path / "c.yaml"]).cases
    assert case.tags == (f"reflow-{date.today().isoformat()}",)


def test_an_indented_list_takes_the_stubs_at_its_own_indent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "indented.yaml"
    target.write_text("  - id: a\n    question: Old?\n", encoding="utf-8")
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    assert _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-11-29")[0] == 0
    assert [c.id for c in load_cases([target]).cases] == ["a", "reflow-20261129-001"]
    assert target.read_text(encoding="utf-8").startswith("  - id: a\n    question: Old?\n\n  # production answer")


# What a person wrote in the file stays as written: YAML 1.2 texts (No, on, yes), a comment, keys in their own
# order, their own quoting and spacing.
WRITTEN = """\
# Refunds, written by hand. Keep this comment.
- question: Is shipping free?
  expected: No
  id: ship-1   # the id after the question, on purpose
  category: on
  tags: [ 'x', "y" ]
- {id: ship-2, question: "Yes?", expected: yes, should_answer: true}
"""


# Where the stubs go: after the list, at its indent, and before a `...` that ends the document. Each layout
# below used to make import-bad re-dump the whole file with YAML 1.1 (`expected: No` came back as false).
LAYOUTS = {
    "block": (WRITTEN, "", "\n# production answer (bad): Yes.\n"),
    "indented": ("".join("  " + line if line else line for line in WRITTEN.splitlines(True)), "", "\n  # production"),
    "ended": (WRITTEN, "...\n", "\n# production answer (bad): Yes.\n"),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_an_import_keeps_the_old_part_byte_for_byte_and_its_yaml_1_2_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    written, end, then = LAYOUTS[layout]
    target = tmp_path / "cases.yaml"
    target.write_bytes((written + end).encode())
    bad = _bad(
        tmp_path,
        {"question": "Is it on?", "answer": "Yes.", "expected": "No", "category": "on"},
        {"question": "Can I pay later?", "answer": "no", "expected": "yes", "category": "off"},
    )
    code, out, _ = _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-11-29")
    imported = (
        f"imported=2 from 2 question(s) in 2 cluster(s) dropped=0 (duplicates of existing questions) into {target}"
    )
    assert (code, out.splitlines()[0]) == (0, imported)
    assert target.read_bytes().startswith((written + then).encode())
    indent = b"  " if layout == "indented" else b""
    assert target.read_bytes().endswith(
        indent + b"  - reflow-2026-11-29\n" + indent + b"  review: pending\n" + end.encode()
    )
    one, two, on, later = load_cases([target]).cases
    assert (one.id, one.expected, one.category, one.tags) == ("ship-1", "No", "on", ("x", "y"))
    assert (two.question, two.expected) == ("Yes?", "yes")
    assert (on.id, on.question, on.expected, on.category) == ("reflow-20261129-001", "Is it on?", "No", "on")
    assert (later.id, later.expected, later.category) == ("reflow-20261129-002", "yes", "off")
    assert on.source == later.source == "reflow"


def test_crlf_line_endings_and_a_byte_order_mark_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "cases.yaml"
    old = b"\xef\xbb\xbf# mine\r\n- id: a\r\n  question: Old?\r\n  expected: No\r\n"
    target.write_bytes(old)
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    assert _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-11-29")[0] == 0
    data = target.read_bytes()
    assert data.startswith(old + b"\r\n# production answer (bad): x\r\n- id: reflow-20261129-001\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert [c.expected for c in load_cases([target]).cases] == ["No", None]


def test_expected_yes_in_the_target_stays_the_text_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "cases.yaml"
    target.write_text("- id: a\n  question: Is it free?\n  expected: yes\n", encoding="utf-8")
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    assert _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-11-29")[0] == 0
    assert target.read_text(encoding="utf-8").startswith("- id: a\n  question: Is it free?\n  expected: yes\n\n")
    assert [c.expected for c in load_cases([target]).cases] == ["yes", None]


def test_a_flow_list_takes_the_stubs_inside_its_brackets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "flow.yaml"
    target.write_text('[{id: a, question: "Old?", expected: No}]\n', encoding="utf-8")
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    assert _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-11-29")[0] == 0
    assert target.read_text(encoding="utf-8").startswith('[{id: a, question: "Old?", expected: No},\n')
    old, new = load_cases([target]).cases
    assert (old.expected, new.id) == ("No", "reflow-20261129-001")


def test_a_target_with_only_comments_takes_the_stubs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "c.yaml"
    target.write_text("# cases from production go here\n", encoding="utf-8")
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    assert _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-11-29")[0] == 0
    assert target.read_text(encoding="utf-8").startswith("# cases from production go here\n\n# production answer")
    assert [c.id for c in load_cases([target]).cases] == ["reflow-20261129-001"]


def test_an_invalid_target_is_exit_2_and_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "c.yaml"
    target.write_text("- id: a\n  question: [unclosed\n", encoding="utf-8")
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    code, _, err = _run(capsys, "cases", "import-bad", str(bad), "--into", str(target))
    assert code == 2 and f"{target}:3: invalid YAML" in err
    assert target.read_text(encoding="utf-8") == "- id: a\n  question: [unclosed\n"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"answer": "x"}, ":2: field 'question': required field is missing"),
        ({"question": " ", "answer": "x"}, ":2: field 'question': is empty"),
        ({"question": "Q?"}, ":2: field 'answer': required field is missing"),
        ({"question": "Q?", "answer": 3}, ":2: field 'answer': Input should be a valid string"),
        ("[1]", ":2: expected a JSON object, found list"),
    ],
)
def test_a_bad_import_file_is_exit_2_naming_the_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: Any, message: str
) -> None:
    bad = _bad(tmp_path, {"question": "Fine?", "answer": "ok"}, row)
    code, _, err = _run(capsys, "cases", "import-bad", str(bad), "--into", str(tmp_path / "c.yaml"))
    assert code == 2 and f"{bad}{message}" in err
    assert not (tmp_path / "c.yaml").exists()


def test_a_mapping_target_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "c.yaml"
    target.write_text(yaml.safe_dump({"cases": [{"id": "a", "question": "Q?"}]}), encoding="utf-8")
    bad = _bad(tmp_path, {"question": "New?", "answer": "x"})
    code, _, err = _run(capsys, "cases", "import-bad", str(bad), "--into", str(target))
    assert code == 2 and "stubs are appended to a top-level YAML list, and this file is a dict" in err


def test_a_bad_date_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _bad(tmp_path, {"question": "Q?", "answer": "a"})
    assert _run(capsys, "cases", "import-bad", str(bad), "--into", str(tmp_path / "c.yaml"), "--date", "29/11")[0] == 2


def test_similar_bad_questions_are_one_candidate_with_its_members(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _bad(
        tmp_path,
        {"question": "How long do refunds take?", "answer": "Forever."},
        {"question": "Where is my parcel?", "answer": "Lost."},
        {"question": "how long does a refund take", "answer": "Ages."},
        {"question": "退款要多久？", "answer": "不知道"},
        {"question": "Refund: how long?", "answer": "Hm."},
        {"question": "退款需要多久", "answer": "很久"},
        {"question": "How do I reset my password?", "answer": "No idea."},
    )
    target = tmp_path / "reflow.yaml"
    code, out, _ = _run(capsys, "cases", "import-bad", str(bad), "--into", str(target), "--date", "2026-12-05")
    assert code == 0
    assert out.splitlines()[0].startswith("imported=4 from 7 question(s) in 4 cluster(s) dropped=0")
    cases = load_cases([target]).cases
    assert [c.question for c in cases] == [
        "How long do refunds take?",
        "Where is my parcel?",
        "退款要多久？",
        "How do I reset my password?",
    ]
    assert all(c.source == "reflow" and c.review == "pending" for c in cases)
    text = target.read_text(encoding="utf-8")
    assert (
        "# cluster of 3 similar production questions: How long do refunds take? | how long does a refund take | "
        "Refund: how long?\n# production answer (bad): Forever.\n"
    ) in text
    assert "# cluster of 2 similar production questions: 退款要多久？ | 退款需要多久\n" in text


def test_import_goes_through_the_one_writer(
    tmp_path: Path, cases_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 40: every write into the repository keeps the file's mode and never writes through a link.
    bad = _bad(tmp_path, {"question": "Q one?", "answer": "a"})
    cases_file.chmod(0o600)
    code, _, _ = _run(capsys, "cases", "import-bad", str(bad), "--into", str(cases_file), "--date", "2026-01-02")
    assert code == 0 and (cases_file.stat().st_mode & 0o777) == 0o600
    assert cases_file.read_text(encoding="utf-8").startswith(CASES_YAML)
    outside = tmp_path / "outside.yaml"
    outside.write_text(CASES_YAML, encoding="utf-8")
    link = tmp_path / "linked.yaml"
    link.symlink_to(outside)
    code, _, err = _run(capsys, "cases", "import-bad", str(bad), "--into", str(link), "--date", "2026-01-02")
    assert code == 2
    assert (
        f"ragjudge: error: {link}: refused: a symbolic link (to {outside}); ragjudge writes only regular files" in err
    )
    assert outside.read_text(encoding="utf-8") == CASES_YAML and link.is_symlink()
