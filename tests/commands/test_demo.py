"""`ragjudge demo`: the bundled example service, its cases and the offline judge, with no API key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragjudge.cli import main
from ragjudge.commands import demo


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAG_URL", raising=False)
    return tmp_path


def test_the_demo_runs_the_example_and_prints_the_verdict_and_the_comment(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["demo", "--report", "demo.json"])
    out, err = capsys.readouterr()
    report = json.loads((ws / "demo.json").read_text(encoding="utf-8"))
    suite = report["suite"]
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("ragjudge demo: example RAG service at http://127.0.0.1:")
    assert lines[0].endswith("/ask, offline lexical judge, no API key needed")
    assert lines[2] == (
        f"verdict: {report['verdict'].upper()} ({suite['passed']}/{suite['cases']} passed, {suite['failed']} failed, "
        f"{suite['errored']} errored)"
    )
    assert lines[4] == "----- PR comment (Markdown) -----"
    assert lines[-1] == "----- end of comment -----"
    assert report["judge_info"]["provider"] == "offline" and suite["cases"] > 0


def test_strict_exits_with_the_gates_code(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The example with a suite rule it cannot meet: the gate fails, and only --strict says so in the exit code.
    folder = ws / "examples"
    shutil.copytree(demo.examples_dir(), folder, ignore=shutil.ignore_patterns("__pycache__", "deploy"))
    config = folder / "ragjudge.yml"
    config.write_text(
        config.read_text(encoding="utf-8").replace('pass_rate: ">= 0.85"', 'pass_rate: ">= 1.0"'), encoding="utf-8"
    )
    monkeypatch.setattr(demo, "examples_dir", lambda: folder)
    assert main(["demo"]) == 0
    assert "verdict: FAIL (" in capsys.readouterr().out
    assert main(["demo", "--strict"]) == 1


def test_a_report_path_that_cannot_be_written_is_exit_2_before_the_demo_runs(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "taken").mkdir()
    assert main(["demo", "--report", "taken"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("ragjudge: error: --report")
