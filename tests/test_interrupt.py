"""SIGINT and SIGTERM sent to a real `ragjudge run`: it stops within 2 s, keeps what was done, and a rerun
pays for none of it again."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer, Raw, answer
from tests.judge.openai_helpers import KEY, PASSAGES, by_kind, kind_of

ENV_KEY = "RAGJUDGE_TEST_OPENAI_KEY"
QUESTIONS = [f"Question number {i}?" for i in range(10)]
FAST = {q: answer(f"Refunds take 5 working days ({i}).", ["p1"], PASSAGES) for i, q in enumerate(QUESTIONS)}
DONE_FIRST = 3
"""The endpoint answers the first three questions at once and hangs on the rest."""
KINDS = ("combined",)
"""The judge calls one answered case costs (judge.combined, the default: rubric and claims in one call)."""


def _config(tmp_path: Path, rag_url: str, judge_url: str) -> Path:
    cases = [{"id": f"c{i}", "question": q} for i, q in enumerate(QUESTIONS)]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    config = {
        "endpoint": {"url": rag_url, "timeout_s": 60, "retries": 0, "concurrency": 1},
        "cases": ["cases.yaml"],
        "judge": {
            "provider": "openai",
            "model": "gpt-4o-mini",
            "base_url": judge_url,
            "api_key": "${" + ENV_KEY + "}",
            "cache": "judge-cache",
            "concurrency": 2,
        },
        "gate": {"case": {"faithfulness": ">= 0.5"}, "suite": {"pass_rate": ">= 0.9"}},
    }
    path = tmp_path / "ragjudge.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _start(config: Path, out: Path) -> subprocess.Popen[str]:
    out.mkdir(exist_ok=True)
    outputs = ["--report", str(out / "report.json"), "--comment-file", str(out / "comment.md")]
    return _command(config.parent, "run", "--config", str(config), *outputs, "--log", str(out / "eval.jsonl"))


def _stop_when(
    process: subprocess.Popen[str], ready: Callable[[], bool], signum: signal.Signals, code: int
) -> tuple[str, str]:
    """Send `signum` once `ready()`: the command must end within 2 s, with `code`, without a traceback."""
    try:
        give_up = time.monotonic() + 60
        while not ready():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < give_up, "the command never got going"
            time.sleep(0.05)
        signalled = time.monotonic()
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=10)
        stopped_in = time.monotonic() - signalled
    finally:
        process.kill()
    assert stopped_in < 2.0
    assert process.returncode == code
    assert "Traceback" not in stderr
    return stdout, stderr


def _command(folder: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, ENV_KEY: KEY}
    return subprocess.Popen(
        [sys.executable, "-m", "ragjudge", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _judged_cases(log: Path) -> set[str]:
    """Cases whose judge replies are all in the log (each line is whole: flushed as written)."""
    if not log.exists():
        return set()
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    per_case: dict[str, int] = {}
    for line in lines:
        if line["type"] == "judge" and line.get("parsed") is not None:
            per_case[line["case_id"]] = per_case.get(line["case_id"], 0) + 1
    return {case for case, n in per_case.items() if n == len(KINDS)}


def _judged_since(fake: FakeOpenAI, first: int) -> list[str]:
    """`case|kind` for each judge call from the `first`-th on (the answer names its case)."""
    asked = []
    for body in fake.bodies[first:]:
        text = str(body["messages"][1]["content"])
        asked.extend(f"c{i}|{kind_of(body)}" for i in range(len(QUESTIONS)) if f"working days ({i})." in text)
    return asked


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"])
def test_a_signal_stops_the_run_keeps_what_was_done_and_a_rerun_pays_nothing_twice(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    hanging = {q: Raw(200, json.dumps(FAST[q]).encode(), delay_s=30) for q in QUESTIONS[DONE_FIRST:]}
    judge = FakeOpenAI(by_kind()).start()  # one judge URL for both runs: the cache is keyed on it
    with RagServer({**FAST, **hanging}) as rag:
        config = _config(tmp_path, rag.url, judge.base_url)
        out = tmp_path / "first"
        process = _start(config, out)

        def ready() -> bool:  # the first three cases judged, and the call that hangs under way
            return _judged_cases(out / "eval.jsonl") == {"c0", "c1", "c2"} and len(rag.seen) > DONE_FIRST

        stdout, stderr = _stop_when(process, ready, signum, code)
    first_calls = judge.call_count

    assert f"ragjudge: {signum.name}: stopping" in stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "error"
    assert report["interrupted"] == {
        "signal": signum.name,
        "cases_done": 3,
        "cases_total": 10,
        "reason": "interrupted after 3 of 10 cases",
    }
    assert report["warnings"][0] == (
        f"interrupted after 3 of 10 cases ({signum.name}): the report holds the finished cases only"
    )
    assert [c["id"] for c in report["cases"]] == ["c0", "c1", "c2"]
    assert all(c["status"] == "pass" for c in report["cases"])
    assert "interrupted after 3 of 10 cases" in (out / "comment.md").read_text(encoding="utf-8")
    assert "ragjudge: ERROR: Interrupted after 3 of 10 cases.\n  3/3 cases passed, 0 failed, 0 errored" in stdout
    log_text = (out / "eval.jsonl").read_text(encoding="utf-8")
    assert log_text.endswith("\n")
    assert all(json.loads(line) for line in log_text.splitlines())  # whole lines only
    assert len(rag.seen) == DONE_FIRST + 1  # no call started after the signal
    assert first_calls == DONE_FIRST * len(KINDS)

    try:
        with RagServer(FAST) as rag:
            config = _config(tmp_path, rag.url, judge.base_url)
            rerun = _start(config, tmp_path / "second")
            _, stderr = rerun.communicate(timeout=60)
        asked = _judged_since(judge, first_calls)
    finally:
        judge.stop()
    assert rerun.returncode == 0, stderr
    # The three judged cases come from the cache; only the seven others are paid for.
    assert sorted(asked) == sorted(f"c{i}|{k}" for i in range(DONE_FIRST, 10) for k in KINDS)
    second: dict[str, Any] = json.loads((tmp_path / "second" / "report.json").read_text(encoding="utf-8"))
    assert second["interrupted"] is None
    assert len(second["cases"]) == 10


# --- commands that cannot decide on part of their work: canary, calibrate -------------------------------
# Before every command ran under the stop switch, SIGINT left `canary` working through its whole queue
# (58 s for 120 calls of 1 s at concurrency 2) and SIGTERM killed it with no word.


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"])
def test_a_signal_stops_a_canary_without_a_decision(tmp_path: Path, signum: signal.Signals, code: int) -> None:
    hanging = {q: Raw(200, json.dumps(FAST[q]).encode(), delay_s=30) for q in QUESTIONS[DONE_FIRST:]}
    cases = [{"id": f"c{i}", "question": q} for i, q in enumerate(QUESTIONS)]
    (tmp_path / "sample.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    with RagServer({**FAST, **hanging}) as rag:
        config = {
            "endpoint": {"timeout_s": 60, "retries": 0, "concurrency": 1},
            "judge": {"provider": "offline"},
            "canary": {"sample": "sample.yaml", "treatment": rag.url, "control": rag.url,
                       "rules": {"p95_latency_ratio": "<= 1.5"}},
        }  # fmt: skip
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        process = _command(tmp_path, "canary", "--report", "report.json", "--comment-file", "comment.md")
        # Both arms of the three quick questions, then the treatment's call that hangs.
        _, stderr = _stop_when(process, lambda: len(rag.seen) > 2 * DONE_FIRST, signum, code)
        seen = len(rag.seen)
    assert stderr.splitlines()[-1] == (
        f"ragjudge: error: stopped by {signum.name} before the canary sample was done "
        f"(6 of 20 calls answered): nothing decided, nothing written"
    )
    assert not (tmp_path / "report.json").exists() and not (tmp_path / "comment.md").exists()
    assert seen == 2 * DONE_FIRST + 1  # no call started after the signal


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"])
def test_a_signal_stops_a_calibration_without_a_record(tmp_path: Path, signum: signal.Signals, code: int) -> None:
    from tests.judge.fake_evidence import other_judges

    def judge(body: dict[str, Any], call_index: int) -> Any:
        reply = other_judges(body, call_index)
        return reply if call_index < DONE_FIRST else dataclasses.replace(reply, delay_s=30)

    rows = [{"id": i, "human": 1, "question": "Q?", "answer": f"Refunds take {i} days.",
             "contexts": [f"Refunds take {i} days."]} for i in range(10)]  # fmt: skip
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with FakeOpenAI(judge) as fake:
        config = {"judge": {"provider": "openai", "base_url": fake.base_url, "api_key": "${" + ENV_KEY + "}",
                            "cache": None, "max_retries": 0, "concurrency": 1}}  # fmt: skip
        (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        process = _command(tmp_path, "calibrate", "--labels", "labels.jsonl", "--report", "report.json")
        _, stderr = _stop_when(process, lambda: fake.call_count > DONE_FIRST, signum, code)
        calls = fake.call_count
    assert stderr.splitlines()[-1] == (
        f"ragjudge: error: stopped by {signum.name} before the calibration was done: nothing decided, nothing written"
    )
    assert not (tmp_path / "report.json").exists()
    assert not (tmp_path / ".ragjudge" / "calibration.json").exists()
    assert calls == DONE_FIRST + 1  # no judge call started after the signal
