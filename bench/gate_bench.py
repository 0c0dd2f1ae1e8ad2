"""The gate benchmark: `ragjudge run` as users run it, against loopback services with fixed latencies.

    python bench/gate_bench.py --cases 400 --endpoint-ms 50 --judge-ms 100 --concurrency 16
        [--judge-429-rate 0.1] [--warm] [--offline]

The RAG service and the OpenAI-compatible judge (bench/loopback.py) run in a process of their own; ragjudge
runs as a subprocess with a ragjudge.yml, `--report`, `--comment-file` and `--log`, like a CI job. Printed:
wall time; the floor `N*E/C + calls*J/C` (endpoint and judge work done one after the other at full
concurrency) and the pipelined floor `max(N*E/C, calls*J/C)`; wall over each; CPU ms per case (user + sys of
the ragjudge process, from the OS); judge calls and tokens per case; peak RSS; and the time from the process
start to the first endpoint request (the service records when it arrived).

`--warm` runs the gate once to fill the judge cache, then measures a second run on the same cache.
`--offline` uses the offline judge (no judge calls). Nothing here asserts a time: it prints them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from loopback import launch

QUESTIONS = [
    "How long do I have to return headphones I bought last week?",
    "When will my refund arrive after I send the item back?",
    "我想退我上周买的耳机，怎么操作？",
    "How do I get an invoice for my order?",
]


def write_inputs(folder: Path, args: argparse.Namespace, urls: dict[str, str]) -> Path:
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for i in range(args.cases):
            case = {"id": f"c{i}", "question": f"{QUESTIONS[i % len(QUESTIONS)]} (#{i})", "must_mention": ["7 days"]}
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    if args.offline:
        judge = "judge:\n  provider: offline\n"
    else:
        judge = (
            "judge:\n"
            "  provider: openai\n"
            "  model: bench-judge\n"
            f"  base_url: {urls['judge']}\n"
            "  api_key: ${BENCH_JUDGE_KEY}\n"
            f"  concurrency: {args.concurrency}\n"
            "  cache: cache\n"
        )
    config = folder / "ragjudge.yml"
    config.write_text(
        "endpoint:\n"
        f"  url: {urls['rag']}\n"
        f"  concurrency: {args.concurrency}\n"
        f"{judge}"
        "cases: [cases.jsonl]\n"
        "gate:\n"
        '  suite: {pass_rate: ">= 0.9"}\n',
        encoding="utf-8",
    )
    return config


def stats(urls: dict[str, str], reset: bool = False) -> dict[str, Any]:
    request = urllib.request.Request(urls["stats"], data=b"{}" if reset else None, method="POST" if reset else "GET")
    with urllib.request.urlopen(request, timeout=10) as reply:
        data: dict[str, Any] = json.loads(reply.read())
    return data


def ragjudge_command() -> str:
    """The `ragjudge` console script beside this Python (the venv the bench runs in), else the one on PATH."""
    beside = Path(sys.executable).with_name("ragjudge")
    found = str(beside) if beside.exists() else shutil.which("ragjudge")
    if found is None:
        raise SystemExit("no ragjudge command: run from a venv with ragjudge installed (pip install -e .)")
    return found


def run_gate(folder: Path, config: Path, profile: Path | None = None) -> dict[str, Any]:
    """One `ragjudge run`: wall time, the OS's accounting of the finished process, when it started."""
    command = [
        ragjudge_command(),
        "run",
        "--config",
        str(config),
        "--report",
        str(folder / "report.json"),
        "--comment-file",
        str(folder / "comment.md"),
        "--log",
        str(folder / "eval.jsonl"),
    ]
    if profile is not None:
        # Collapsed stacks from the sampling profiler (pip install py-spy); the figures then include its cost.
        command = ["py-spy", "record", "--format", "raw", "--rate", "250", "--gil", "-o", str(profile), "--", *command]
    env = {**os.environ, "BENCH_JUDGE_KEY": "sk-bench-0123456789"}
    started_epoch = time.time()
    started = time.perf_counter()
    with (folder / "stderr.txt").open("wb") as errors:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        stderr = (folder / "stderr.txt").read_text(encoding="utf-8", errors="replace").strip()
        raise SystemExit(f"ragjudge run exited {process.returncode}: {stderr}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "started_epoch": started_epoch,
        "exit": process.returncode,
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    server, urls = launch(args.endpoint_ms, args.judge_ms, args.judge_429_rate)
    try:
        with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp:
            folder = Path(args.keep or tmp)
            folder.mkdir(parents=True, exist_ok=True)
            config = write_inputs(folder, args, urls)
            if args.warm:
                run_gate(folder, config)
                stats(urls, reset=True)
            run = run_gate(folder, config, args.profile)
            served = stats(urls)
            report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    finally:
        server.terminate()
        server.wait(timeout=10)
    suite = report["suite"]
    if suite["cases"] != args.cases:
        raise SystemExit(f"the report has {suite['cases']} cases, not {args.cases}")
    return {**run, "served": served, "suite": suite}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark `ragjudge run` against loopback services.")
    parser.add_argument("--cases", type=int, required=True, metavar="N")
    parser.add_argument("--endpoint-ms", type=float, default=50.0, metavar="E")
    parser.add_argument("--judge-ms", type=float, default=100.0, metavar="J")
    parser.add_argument("--concurrency", type=int, default=16, metavar="C")
    parser.add_argument("--judge-429-rate", type=float, default=0.0, metavar="R")
    parser.add_argument("--warm", action="store_true", help="measure a rerun on a filled judge cache")
    parser.add_argument("--offline", action="store_true", help="the offline judge: no judge calls")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="run in DIR and keep the config, log and report")
    parser.add_argument("--profile", type=Path, metavar="FILE", help="write py-spy's collapsed stacks here")
    args = parser.parse_args(argv)

    m = measure(args)
    n, c = args.cases, args.concurrency
    served, suite = m["served"], m["suite"]
    calls = served["judge_calls"]  # completions served; 429s are counted apart
    endpoint_floor = n * args.endpoint_ms / 1000 / c
    judge_floor = calls * args.judge_ms / 1000 / c
    floor = endpoint_floor + judge_floor
    pipelined = max(endpoint_floor, judge_floor)
    first = served["first_request_at"]

    def since(epoch: float | None) -> float | None:
        return round(epoch - m["started_epoch"], 3) if epoch else None

    figures = {
        "cases": n,
        "wall_s": round(m["wall_s"], 3),
        "floor_s": round(floor, 3),
        "pipelined_floor_s": round(pipelined, 3),
        "wall_over_floor": round(m["wall_s"] / floor, 3) if floor else None,
        "wall_over_pipelined": round(m["wall_s"] / pipelined, 3) if pipelined else None,
        "cpu_ms_per_case": round(m["cpu_s"] * 1000 / n, 2),
        "judge_calls_per_case": round(calls / n, 3),
        "judge_429": served["judge_429"],
        "judge_tokens_per_case": round((served["prompt_tokens"] + served["completion_tokens"]) / n, 1),
        "report_judge_calls": suite.get("judge_calls"),
        "judged_cases_unscored": round((suite.get("judge_error_rate") or 0) * n),
        "judge_in_flight_per_half_s": " ".join(str(n) for n in served["in_flight_max"]),
        "peak_rss_mb": round(m["peak_rss_mb"], 1),
        "first_request_s": round(first - m["started_epoch"], 3) if first else None,
        # The timeline, seconds from the process start: where the wall time beyond the floor goes.
        "last_answer_s": since(served["last_answer_at"]),
        "first_judge_s": since(served["first_judge_at"]),
        "last_judge_s": since(served["last_judge_at"]),
        "exit": m["exit"],
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:24} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
