"""`ragjudge run` with most cases erroring: past `gate.max_error_rate` (default 0.5) the verdict is `error`, exit
3, and the report, the comment and stderr name the error that dominated (13 of 15 errored used to be `fail`,
exit 1, with a rejection accuracy from the 2 cases left)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands.test_run_end_to_end import load, run, write_config
from tests.fakes.rag import RagServer, Raw, answer

CASES = [{"id": f"c{i:02d}", "question": f"q{i}?"} for i in range(15)]


def _replies() -> dict[str, Any]:
    replies: dict[str, Any] = {f"q{i}?": Raw(200, b'{"result": "no answer key"}') for i in range(12)}
    replies["q12?"] = Raw(503, b"busy")
    replies["q13?"] = answer("fine", ["d1"], {"d1": "fine"})
    replies["q14?"] = answer("fine", ["d1"], {"d1": "fine"})
    return replies


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def _run(ws: Path, capsys: pytest.CaptureFixture[str], **gate: Any) -> tuple[Any, dict[str, Any]]:
    with RagServer(_replies()) as rag:
        write_config(ws, rag.url, CASES, case_rules={}, suite_rules={"pass_rate": ">= 0.1"})
        if gate:
            path = ws / "ragjudge.yml"
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            data["gate"].update(gate)
            path.write_text(yaml.safe_dump(data), encoding="utf-8")
        outcome = run(capsys, "run", "--report", "r.json", "--comment-file", "c.md")
    return outcome, load(ws / "r.json")


def test_13_of_15_errored_is_verdict_error_naming_the_error_that_dominated(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, report = _run(ws, capsys)
    errors = [c["failed_conditions"][0] for c in report["cases"] if c["status"] == "error"]
    assert len(errors) == 13
    top = errors[0]
    assert errors.count(top) == 12 and top.startswith("endpoint error: ")
    reason = (
        "13 of 15 cases errored (87%), over gate.max_error_rate 0.5: the verdict is error; the error that "
        f"dominated (12 of 13): {top}"
    )
    assert outcome.code == 3
    assert report["verdict"] == "error"
    assert report["error_reason"] == reason
    assert report["warnings"][0] == reason
    assert outcome.err == f"ragjudge: error: {reason}\n"
    comment = (ws / "c.md").read_text(encoding="utf-8")
    assert comment.startswith("## ⚠️ ragjudge: ERROR\n")
    assert "13 of 15 cases errored (87%), over gate.max\\_error\\_rate 0.5: the verdict is error" in comment


def test_a_larger_budget_lets_the_cases_left_decide(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcome, report = _run(ws, capsys, max_error_rate=0.9)
    assert (outcome.code, report["verdict"], report["error_reason"], outcome.err) == (0, "pass", None, "")
    assert report["suite"]["errored"] == 13


@pytest.mark.parametrize("value", [1.5, -0.1, "half"])
def test_a_budget_outside_0_to_1_is_exit_2_naming_the_key(
    ws: Path, capsys: pytest.CaptureFixture[str], value: Any
) -> None:
    write_config(ws, "http://127.0.0.1:9/ask", CASES, suite_rules={"pass_rate": ">= 0.1"})
    path = ws / "ragjudge.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["gate"]["max_error_rate"] = value
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    outcome = run(capsys, "run")
    assert outcome.code == 2
    assert "gate.max_error_rate" in outcome.err


def test_a_shard_over_the_budget_says_so_without_calling_it_the_run_s_error(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RagServer(_replies()) as rag:
        write_config(ws, rag.url, CASES, case_rules={}, suite_rules={"pass_rate": ">= 0.1"})
        outcome = run(capsys, "run", "--shard", "1/1", "--report", "s.json")
    report = load(ws / "s.json")
    assert outcome.code == 0  # a shard's step passes once its report is written
    assert report["verdict"] == "error"
    assert outcome.err == f"ragjudge: shard 1/1: {report['error_reason']} (`ragjudge merge` gates the whole set)\n"
