"""`ragjudge serve` as a process: start, usage errors, and the stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from ragjudge.cli import main
from tests.canary.files import write_config, write_sample
from tests.fakes.arms import ArmServer


def start(config: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """`python -m ragjudge serve --port 0` and the URL it printed (bounded wait)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ragjudge", "serve", "--config", str(config), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # the first line, printed once the socket listens
    assert line.startswith("ragjudge serve: listening on http://127.0.0.1:"), line + process.stderr.read()
    return process, line.strip().rsplit(" ", 1)[1]


def small_config(tmp_path: Path, treatment: str, control: str, **canary: Any) -> Path:
    settings = {
        "sample": str(write_sample(tmp_path / "sample.yaml", 20)),
        "treatment": treatment,
        "control": control,
        "rules": {"p95_latency_ratio": "<= 1.5"},
        **canary,
    }
    return write_config(tmp_path / "ragjudge.yml", settings)


def test_sigterm_stops_within_2_s_and_marks_running_analyses_interrupted(tmp_path: Path) -> None:
    # Arms that take 5 s per request, with an endpoint timeout of 10 s: the analysis is mid-flight.
    with ArmServer("treatment", delay_s=5) as t, ArmServer("control", delay_s=5) as c:
        process, url = start(
            small_config(tmp_path, t.ask_url, c.ask_url),
            "--token-env",
            "SERVE_TOKEN",
            env={"SERVE_TOKEN": "tok-123456"},
        )
        try:
            reply = requests.post(
                f"{url}/v1/analyses", json={"name": "rag"}, headers={"Authorization": "Bearer tok-123456"}, timeout=5
            )
            assert reply.status_code == 202
            time.sleep(0.3)
            sent = time.monotonic()
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=5)
            took = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=5)
        assert process.stderr is not None
        log = [json.loads(line) for line in process.stderr.read().splitlines()]
    assert code == 0
    assert took < 2.0, f"took {took:.2f} s"
    finished = [e for e in log if e["event"] == "analysis_finished"]
    assert [(e["id"], e["status"], e["error"]) for e in finished] == [("rag-1", "error", "interrupted")]
    assert log[-1]["event"] == "stopped"
    assert log[-1]["interrupted"] == ["rag-1"]
    assert all("tok-123456" not in json.dumps(e) for e in log)


def test_serve_answers_as_a_process(tmp_path: Path) -> None:
    with ArmServer("treatment", delay_s=0.01) as t, ArmServer("control", delay_s=0.01) as c:
        process, url = start(small_config(tmp_path, t.ask_url, c.ask_url, min_requests=5, bootstrap=100))
        try:
            assert requests.get(f"{url}/healthz", timeout=5).json() == {"status": "ok"}
            assert requests.post(f"{url}/v1/analyses", json={"name": "rag"}, timeout=5).status_code == 202
            deadline = time.monotonic() + 30
            while (view := requests.get(f"{url}/v1/analyses/rag", timeout=5).json())["status"] == "running":
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert view["status"] == "done"
            assert view["verdict"] in ("promote", "inconclusive")
            assert len(t.journal) == len(c.journal) == 20
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=5) == 0


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (
            ["--token-env", "RAGJUDGE_TEST_UNSET_VAR"],
            {},
            "--token-env RAGJUDGE_TEST_UNSET_VAR: the variable is not set or empty",
        ),
        (["--port", "70000"], {}, "--port 70000: a port is 0 to 65535"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], env: dict[str, str], message: str
) -> None:
    config = small_config(tmp_path, "http://t.example/ask", "http://c.example/ask")
    code = main(["serve", "--config", str(config), *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert f"ragjudge: error: {message}" in err


def test_config_errors_are_found_at_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(
        tmp_path / "ragjudge.yml", {"rules": {"p95_latency_ratio": "<= 1.5"}}, serve={"max_concurent": 3}
    )
    assert main(["serve", "--config", str(config)]) == 2
    assert "unknown key 'serve.max_concurent'" in capsys.readouterr().err
    config = write_config(tmp_path / "ragjudge.yml", {"rules": {"p95_latency_ratio": "<= 1.5"}})
    assert main(["serve", "--config", str(config)]) == 2
    assert "ragjudge: error: canary.sample is not set" in capsys.readouterr().err
    config = write_config(
        tmp_path / "ragjudge.yml", {"sample": "missing.yaml", "rules": {"p95_latency_ratio": "<= 1.5"}}
    )
    assert main(["serve", "--config", str(config)]) == 2
    assert f"canary.sample: {tmp_path / 'missing.yaml'} not found" in capsys.readouterr().err


def test_port_in_use_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = small_config(tmp_path, "http://t.example/ask", "http://c.example/ask")
    with ArmServer("busy") as busy:
        port = busy.url.rsplit(":", 1)[1]
        code = main(["serve", "--config", str(config), "--port", port])
    assert code == 2
    assert f"ragjudge: error: cannot listen on 127.0.0.1:{port}: " in capsys.readouterr().err
