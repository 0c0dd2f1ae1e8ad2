"""`ragjudge run ... | head`: a stdout closed early does not change the gate's exit code, and the report and the
comment are still written. Run as a real subprocess whose stdout pipe is closed before it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragjudge
from tests.commands.test_run_end_to_end import write_config
from tests.fakes.rag import RagServer, answer

SRC = str(Path(ragjudge.__file__).resolve().parents[1])


@pytest.mark.parametrize(("cases", "code"), [(3, 0), (300, 1)])
def test_a_closed_stdout_keeps_the_exit_code_and_the_outputs(tmp_path: Path, cases: int, code: int) -> None:
    # 300 failing cases print about 30 kB, past the pipe's buffer: the write itself meets the closed pipe.
    # 3 passing ones print one line, met only when the output is flushed at exit.
    items = [{"id": f"case-{i:03d}", "question": f"q{i}?", "must_mention": ["needed"]} for i in range(cases)]
    text = "needed" if code == 0 else "something else entirely, not what the case asks for"
    with RagServer({f"q{i}?": answer(text, ["d1"], {"d1": text}) for i in range(cases)}) as rag:
        write_config(tmp_path, rag.url, items, case_rules={}, suite_rules={"pass_rate": ">= 1.0"})
        process = subprocess.Popen(
            [sys.executable, "-m", "ragjudge", "run", "--report", "r.json", "--comment-file", "c.md"],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": SRC, "RAG_TOKEN": "tok-123456"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # `| head` that has read enough, before the run prints anything
        stderr = process.stderr.read().decode("utf-8")
        process.wait(timeout=120)
    assert (process.returncode, stderr) == (code, "")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["verdict"] == ("pass" if code == 0 else "fail") and report["suite"]["cases"] == cases
    assert (tmp_path / "c.md").read_text(encoding="utf-8").strip()
