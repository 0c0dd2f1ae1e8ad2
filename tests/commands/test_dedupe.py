"""`ragjudge dedupe FILE [--out FILE]`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ragjudge.cases.caseset import load_cases
from ragjudge.cli import main


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def dedupe(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["dedupe", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_kept_and_dropped_and_keeps_the_first(tmp_path, capsys):
    path = write(
        tmp_path / "cases.yaml",
        "- id: a\n  question: How do I get a refund?\n  golden_context_ids: [doc-refund-1]\n"
        "- id: b\n  question: '  how do i GET a refund '\n"
        "- id: c\n  question: Where is my parcel?\n"
        "- id: d\n  question: How do I get a refund\n",
    )
    code, out, err = dedupe(capsys, str(path))

    assert (code, out, err) == (0, "kept=2 dropped=2\n", "")
    kept = yaml.safe_load((tmp_path / "cases.deduped.yaml").read_text(encoding="utf-8"))
    assert kept == [
        {"id": "a", "question": "How do I get a refund?", "golden_context_ids": ["doc-refund-1"]},
        {"id": "c", "question": "Where is my parcel?"},
    ]
    # The input is left as it was.
    assert "id: d" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "variant",
    [
        "退款 怎么办？",
        "退款怎么办?",
        "退款\u3000怎么办！",
        "退款，怎么办!",
        "退款、怎么办。",
        "退款；怎么办;",
        "退款：怎么办:",
        "退款,怎么办.",
        "  退款\t怎么办\n",
    ],
)
def test_whitespace_and_ascii_and_full_width_punctuation_are_ignored(tmp_path, capsys, variant):
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"id": "first", "question": "退款怎么办"}, ensure_ascii=False)
        + "\n"
        + json.dumps({"id": "dup", "question": variant}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    code, out, _ = dedupe(capsys, str(path))
    assert (code, out) == (0, "kept=1 dropped=1\n")
    lines = (tmp_path / "c.deduped.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["first"]


def test_case_is_ignored(tmp_path, capsys):
    path = write(tmp_path / "c.yaml", "- question: VAT Invoice\n- question: vat invoice\n- question: Vat  INVOICE?\n")
    assert dedupe(capsys, str(path))[:2] == (0, "kept=1 dropped=2\n")


def test_different_questions_are_all_kept(tmp_path, capsys):
    path = write(
        tmp_path / "c.yaml", "- question: 退款\n- question: 退货\n- question: refund 1\n- question: refund 2\n"
    )
    code, out, _ = dedupe(capsys, str(path))
    assert (code, out) == (0, "kept=4 dropped=0\n")
    assert len(yaml.safe_load((tmp_path / "c.deduped.yaml").read_text(encoding="utf-8"))) == 4


def test_out_option_and_jsonl_kept_verbatim(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    items = [
        {"id": "cs-1", "question": "发票怎么开？", "goldenContextIds": ["doc-inv-1"], "category": "发票"},
        {"id": "cs-2", "question": "发票 怎么开", "category": "发票"},
        {"id": "cs-3", "question": "今天天气怎么样？", "category": "超纲"},
    ]
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    out_path = tmp_path / "out" / "kept.jsonl"
    out_path.parent.mkdir()

    code, out, _ = dedupe(capsys, str(path), "--out", str(out_path))

    assert (code, out) == (0, "kept=2 dropped=1\n")
    text = out_path.read_text(encoding="utf-8")
    assert text == (
        '{"id": "cs-1", "question": "发票怎么开？", "goldenContextIds": ["doc-inv-1"], "category": "发票"}\n'
        '{"id": "cs-3", "question": "今天天气怎么样？", "category": "超纲"}\n'
    )
    assert not (tmp_path / "c.deduped.jsonl").exists()


def test_yaml_output_is_readable_unicode(tmp_path, capsys):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: 退款怎么办？\n- id: b\n  question: 退款怎么办\n")
    dedupe(capsys, str(path))
    text = (tmp_path / "c.deduped.yaml").read_text(encoding="utf-8")
    assert text == "- id: a\n  question: 退款怎么办？\n"


def test_case_without_a_question_exits_2(tmp_path, capsys):
    path = write(tmp_path / "c.yaml", "- id: a\n  question: q\n- id: b\n  expected: x\n")
    code, out, err = dedupe(capsys, str(path))
    assert code == 2
    assert out == ""
    tip = "Tip: every case needs a `question` (or `turns:`, each with one)\n"
    assert err == f"ragjudge: error: {path}:3: case has no question\n{tip}"
    assert not (tmp_path / "c.deduped.yaml").exists()


def test_file_that_is_not_utf8_exits_2(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_bytes("- question: caf\xe9\n".encode("latin-1"))
    code, _, err = dedupe(capsys, str(path))
    assert code == 2
    assert err.splitlines()[0] == f"ragjudge: error: {path}:1: not UTF-8 (invalid byte at offset 15)"
    assert "Traceback" not in err


def test_missing_file_exits_2(tmp_path, capsys):
    code, _, err = dedupe(capsys, str(tmp_path / "nope.yaml"))
    assert code == 2
    assert err.splitlines()[0] == f"ragjudge: error: {tmp_path / 'nope.yaml'}: file not found"


def test_no_file_argument_is_a_usage_error(capsys):
    code, _, err = dedupe(capsys)
    assert code == 2
    assert "ragjudge: error: the following arguments are required: file" in err


def test_conversations_are_duplicates_only_when_every_turn_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "- id: a\n  turns:\n    - question: 我想退货\n    - question: 那运费谁出？\n"
        "- id: b\n  turns:\n    - question: 我想退货！\n    - question: 那运费谁出\n"
        "- id: c\n  turns:\n    - question: 我想退货\n    - question: 发票呢？\n",
        encoding="utf-8",
    )
    assert main(["dedupe", str(path)]) == 0
    assert capsys.readouterr().out == "kept=2 dropped=1\n"
    kept = yaml.safe_load((tmp_path / "c.deduped.yaml").read_text(encoding="utf-8"))
    assert [c["id"] for c in kept] == ["a", "c"]


def test_yaml_1_2_texts_stay_texts_in_the_kept_cases(tmp_path, capsys):
    path = write(
        tmp_path / "c.yaml",
        "- id: a\n  question: Is it free?\n  expected: yes\n  category: on\n- id: b\n  question: is it free\n",
    )
    assert dedupe(capsys, str(path))[:2] == (0, "kept=1 dropped=1\n")
    (case,) = load_cases([tmp_path / "c.deduped.yaml"]).cases
    assert (case.expected, case.category) == ("yes", "on")
    assert yaml.safe_load((tmp_path / "c.deduped.yaml").read_text(encoding="utf-8"))[0]["expected"] == "yes"


def test_out_is_never_written_through_a_link(tmp_path, capsys):
    # Issue 40: dedupe writes through the one atomic writer; a planted `--out` link is refused.
    path = write(tmp_path / "cases.yaml", "- id: a\n  question: Q?\n- id: b\n  question: q?\n")
    outside = write(tmp_path / "outside.txt", "keep me\n")
    (tmp_path / "cases.deduped.yaml").symlink_to(outside)
    code, _, err = dedupe(capsys, str(path))
    assert code == 2
    assert f"cases.deduped.yaml: refused: a symbolic link (to {outside}); ragjudge writes only regular files" in err
    assert outside.read_text(encoding="utf-8") == "keep me\n"
