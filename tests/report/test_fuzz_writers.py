"""Fuzzing every output writer with lone surrogates and control characters: each writes valid output.

A report whose every text field (ids, questions, answers, passages, reasons, warnings, judge notes) holds
lone surrogates, C0 and C1 control characters, DEL and the non-characters U+FFFE/U+FFFF, mixed with plain
and non-BMP text, is written by each writer: the JSON report loads, the JUnit report parses as XML, the HTML
and the comment hold no raw control character, every GitHub output, the job summary, each annotation, the
stdout summary and each `--log` line is UTF-8 (JSON where it should be). `FUZZ_EXAMPLES` examples a run.
"""

from __future__ import annotations

import io
import json
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.fakes.reports import case, gate_report

from ragjudge import masking
from ragjudge.gate.eventlog import EventLog
from ragjudge.github.annotations import gate_annotations
from ragjudge.github.outputs import step_outputs, write_outputs
from ragjudge.github.summary import append_summary, gate_summary
from ragjudge.github.workflow_commands import command
from ragjudge.report.emit import Outputs, emit
from ragjudge.report.model import Report

FUZZ_EXAMPLES = 40
SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

_NASTY = ["\ud800", "\udfff", "\ud83d", "\ude00", "\x00", "\x07", "\x0b", "\x0c", "\x1b[31m", "\x7f", "\x85"]
_NASTY += ["\x9f", "\ufffe", "\uffff", "\r\n", "\t", "😀", "七天", "<&>", "]]>", '"', "%0A", "::error::x"]
TEXT = st.lists(st.one_of(st.sampled_from(_NASTY), st.text(max_size=5)), min_size=1, max_size=8).map("".join)
# What XML 1.0 and HTML must never carry raw, and what UTF-8 cannot encode.
_RAW_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _report(texts: list[str]) -> Report:
    def t(i: int) -> str:
        return texts[i % len(texts)]

    bad = case(f"id-{t(0)}", "error", (f"endpoint error: {t(1)}",))
    failed = case(f"id2-{t(2)}", "fail", (t(3),), faithfulness=0.5)
    for block in (bad, failed):
        block["question"] = t(4)
        block["category"] = t(5)
        block["trace"]["answer"] = t(6)
        block["trace"]["retrieved_ids"] = [t(7)]
        block["trace"]["passages"] = [{"id": t(7), "title": t(8), "text": t(9)}]
        block["trace"]["warnings"] = [t(10)]
        claim = {"claim": t(13), "supported": False, "evidence_id": t(7), "reason": t(1)}
        block["judge"] = {"reasoning": {"grounding": t(11)}, "notes": [t(12)], "claims": [claim]}
    return gate_report([bad, failed, case("ok", "pass")], warnings=(t(14),))


def _utf8(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # strict: a surrogate written with surrogatepass would fail here


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=15))
def test_every_writer_writes_valid_output(texts: list[str]) -> None:
    report = _report(texts)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        console = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
        stdout = masking.MaskedStream(console)
        saved, sys.stdout = sys.stdout, stdout  # type: ignore[assignment]
        try:
            code = emit(report, Outputs(out / "r.json", out / "c.md", None, out / "j.xml", out / "r.html"))
        finally:
            sys.stdout = saved
        console.flush()
        assert code == 1
        assert not _RAW_UNSAFE.search(console.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]

        data: dict[str, Any] = json.loads(_utf8(out / "r.json"))
        assert [c["status"] for c in data["cases"]] == ["error", "fail", "pass"]
        for name in ("c.md", "r.html", "j.xml"):
            assert not _RAW_UNSAFE.search(_utf8(out / name)), name
        root = ET.fromstring(_utf8(out / "j.xml"))
        assert len(root.findall(".//testcase")) >= 3
        assert "<html" in _utf8(out / "r.html")

        write_outputs(out / "outputs", step_outputs(data, False, "r.json", ""))
        assert not _RAW_UNSAFE.search(_utf8(out / "outputs").replace("\n", ""))
        append_summary(out / "summary.md", gate_summary(report, "r.json"))
        assert not _RAW_UNSAFE.search(_utf8(out / "summary.md"))
        for note in gate_annotations(report):
            line = command(note.kind, note.message, {"title": note.title})
            assert "\n" not in line and "\r" not in line and not _RAW_UNSAFE.search(line)
            line.encode("utf-8")

        log = EventLog(out / "log.jsonl")
        for text in texts:
            log.write("endpoint", text, {"body": text, text: [text]})
        log.close()
        lines = _utf8(out / "log.jsonl").splitlines()
        assert len(lines) == len(texts)
        assert all(isinstance(json.loads(line), dict) for line in lines)
