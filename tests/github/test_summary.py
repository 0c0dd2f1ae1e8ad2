"""The job summary: every failing case, under 1 MiB, appended."""

from __future__ import annotations

from pathlib import Path

from ragjudge.github.summary import MAX_SUMMARY_BYTES, append_summary, cap_bytes, gate_summary, text_summary
from ragjudge.report.markdown import COMMENT_LIMIT, render_comment
from tests.fakes.reports import case, gate_report


def many_failures(n: int, width: int = 200) -> list[dict[str, object]]:
    return [case(f"case-{i:04d}", conditions=(f"missing required detail: {'x' * width} {i}",)) for i in range(n)]


def test_lists_every_failing_case_where_the_comment_stops() -> None:
    r = gate_report(many_failures(600))

    comment = render_comment(r, None, report_path="r.json")
    summary = gate_summary(r, "r.json", ["PR comment updated: https://example/1"])

    assert len(comment) <= COMMENT_LIMIT and "case-0599" not in comment
    assert all(f"case-{i:04d}" in summary for i in range(600))
    assert len(summary.encode("utf-8")) <= MAX_SUMMARY_BYTES
    assert summary.rstrip().endswith("- PR comment updated: https://example/1")
    assert "<code>r.json</code>" in summary


def test_stays_under_one_mib_with_multibyte_text() -> None:
    r = gate_report([case(f"案例-{i:05d}", conditions=("缺少必要细节：" + "退款" * 150,)) for i in range(1500)])

    summary = gate_summary(r, "r.json")

    assert len(summary.encode("utf-8")) <= MAX_SUMMARY_BYTES
    assert "案例-00000" in summary


def test_small_budget_still_fits() -> None:
    summary = gate_summary(gate_report(many_failures(50)), "r.json", budget=5_000)
    assert len(summary.encode("utf-8")) <= 5_000


def test_cap_bytes_never_splits_a_character() -> None:
    text = cap_bytes("é" * 1000, 501)
    assert len(text.encode("utf-8")) <= 501 and "truncated" in text
    text.encode("utf-8").decode("utf-8")
    assert cap_bytes("short", 100) == "short"


def test_text_summary_for_other_modes() -> None:
    assert text_summary("## canary: promote\n", "c.json").startswith("## canary: promote\n")


def test_append(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("# earlier step\n", encoding="utf-8")
    append_summary(path, "ours\n")
    append_summary(None, "nowhere")
    assert path.read_text(encoding="utf-8") == "# earlier step\nours\n"
