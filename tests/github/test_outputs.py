"""$GITHUB_OUTPUT: heredoc format with a random delimiter, parsed back as the runner does."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.github.outputs import OUTPUT_NAMES, format_outputs, step_outputs, write_outputs
from tests.github.runner import parse_outputs


def test_multiline_values_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=1\n", encoding="utf-8")
    values = {"one": "x", "ids": "a\nb\nc", "empty": "", "tricky": "EOF\nname=evil\nx<<y"}

    write_outputs(path, values)

    assert parse_outputs(path.read_text(encoding="utf-8")) == {"earlier": "1", **values}


def test_delimiters_are_random_per_value() -> None:
    text = format_outputs({"a": "1", "b": "2"})
    heads = [line for line in text.splitlines() if "<<" in line]
    assert len({h.split("<<")[1] for h in heads}) == 2
    assert all(h.split("<<")[1].startswith("ghadelimiter_") for h in heads)


def test_no_output_file_outside_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github_output"))  # the path given wins, even when None
    write_outputs(None, {"a": "1"})  # nothing to write to, and no error
    assert list(tmp_path.iterdir()) == []  # and nothing written anywhere instead


def test_step_outputs_from_a_gate_report() -> None:
    data = {
        "verdict": "fail",
        "suite": {
            "failed": 2,
            "errored": 1,
            "pass_rate": 0.123456,
            "faithfulness": None,
            "rejection_accuracy": 1.0,
            "p95_latency_ms": 1234.5678,
        },
        "cases": [{"id": "a", "status": "pass"}, {"id": "b", "status": "fail"}, {"id": "c", "status": "error"}],
    }
    values = step_outputs(data, False, "out/report.json", "https://x/1")
    assert tuple(values) == OUTPUT_NAMES
    assert values == {
        "verdict": "fail",
        "passed": "false",
        "report": "out/report.json",
        "failed-cases": "2",
        "errored-cases": "1",
        "failed-case-ids": "b\nc",
        "pass-rate": "0.1235",
        "faithfulness": "",
        "rejection-accuracy": "1.0",
        "p95-latency-ms": "1234.6",
        "comment-url": "https://x/1",
    }


@pytest.mark.parametrize("data", [None, {"kind": "canary", "verdict": "promote"}])
def test_step_outputs_without_a_gate_report(data: dict[str, str] | None) -> None:
    values = step_outputs(data, data is not None, "r.json", "")
    assert values["verdict"] == ("promote" if data else "error")
    assert values["passed"] == ("true" if data else "false")
    assert values["failed-cases"] == values["pass-rate"] == values["failed-case-ids"] == ""


def test_an_id_holding_line_breaks_stays_one_id_in_failed_case_ids() -> None:
    # Issue 40 item 15: ids were joined raw; `x\n::add-mask::...` became several ids, and a later step echoing the
    # output would replay them as workflow commands. A report read back may come from anywhere: escaped here too.
    cases = [
        {"id": "a\n::warning::pwned", "status": "fail"},
        {"id": "b\r\u2028c", "status": "error"},
        {"id": "d", "status": "fail"},
    ]
    values = step_outputs({"verdict": "fail", "suite": {}, "cases": cases}, False, "r.json", "")
    assert values["failed-case-ids"].split("\n") == ["a\\n::warning::pwned", "b\\r\\u2028c", "d"]
