"""Benchmarks: gate throughput against the example service, judge-pool overlap, comment rendering.

Run: python bench/bench_gate.py [--repeat 3]. Prints a Markdown table; figures go in bench/README.md.
Everything runs on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragjudge.examples.rag_service import serve_in_thread  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402

from ragjudge.config.model import parse_config  # noqa: E402
from ragjudge.gate.evaluation import GateRequest, run_gate  # noqa: E402
from ragjudge.report.markdown import render_comment  # noqa: E402
from ragjudge.report.model import Report  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), min(runs)


def write_cases(folder: Path, n: int) -> Path:
    questions = [
        "我想退我上周买的耳机",
        "How long does standard shipping take?",
        "How do I reset my password?",
        "发票怎么开？",
        "What's the weather tomorrow?",
    ]
    lines = [json.dumps({"id": f"b{i}", "question": f"{questions[i % 5]} #{i}"}, ensure_ascii=False) for i in range(n)]
    path = folder / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def gate_offline(url: str, cases: Path, concurrency: int) -> None:
    config = parse_config(
        {"endpoint": {"url": url, "concurrency": concurrency}, "cases": [str(cases)]}, "bench", cases.parent
    )
    run_gate(GateRequest(config=config))


JUDGE_CALLS: list[int] = []


def judge_overlap(url: str, cases: Path, concurrency: int, delay: float) -> None:
    claims = json.dumps({"claims": []})
    rubric = json.dumps(
        {
            "scores": {d: 4 for d in ("grounding", "relevance", "calibration", "citations", "tone")},
            "reasoning": {d: "ok" for d in ("grounding", "relevance", "calibration", "citations", "tone")},
        }
    )

    def responder(body: dict, _i: int) -> Reply:
        system = body["messages"][0]["content"]
        if "auditor" in system:
            return Reply(content=claims, delay_s=delay)
        if "NOT cover" in system:
            return Reply(
                content=json.dumps(
                    {
                        "scores": {"grounding": 5, "calibration": 5},
                        "reasoning": {"grounding": "ok", "calibration": "ok"},
                    }
                ),
                delay_s=delay,
            )
        return Reply(content=rubric, delay_s=delay)

    with FakeOpenAI(responder) as fake:
        config = parse_config(
            {
                "endpoint": {"url": url},
                "cases": [str(cases)],
                "judge": {
                    "provider": "openai",
                    "base_url": fake.base_url,
                    "api_key": "sk-bench-000000",
                    "cache": None,
                    "concurrency": concurrency,
                },
            },
            "bench",
            cases.parent,
        )
        run_gate(GateRequest(config=config))
        JUDGE_CALLS.append(fake.call_count)


def render_many(n: int) -> None:
    cases = [
        {
            "id": f"c{i}",
            "category": None,
            "status": "fail",
            "question": "q" * 200,
            "failed_conditions": [f'missing required detail: "{i}"'],
            "metrics": {},
            "judge": {},
            "trace": {
                "answer": "a" * 2000,
                "refused": False,
                "confidence": "high",
                "retrieved_ids": ["d1"],
                "latency_ms": 5.0,
                "cost_usd": None,
                "error": None,
            },
        }
        for i in range(n)
    ]
    suite = {
        "cases": n,
        "passed": 0,
        "failed": n,
        "errored": 0,
        "pass_rate": 0.0,
        "faithfulness": None,
        "rejection_accuracy": 1.0,
        "p50_latency_ms": 5.0,
        "p95_latency_ms": 5.0,
        "judge_error_rate": None,
        "endpoint_error_rate": 0.0,
        "cost_usd": None,
    }
    report = Report.model_validate({"verdict": "fail", "suite": suite, "rules": [], "cases": cases})
    assert len(render_comment(report)) <= 60_000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    server, url = serve_in_thread()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, conc in ((200, 1), (200, 8), (1000, 8), (1000, 32)):
            cases = write_cases(Path(tmp), n)
            med, best = timed(lambda c=cases, k=conc: gate_offline(url, c, k), args.repeat)
            rows.append((f"offline gate, {n} cases, endpoint concurrency {conc}", med, best, f"{n / med:.0f} cases/s"))
        cases = write_cases(Path(tmp), 16)
        for conc in (1, 4, 8):
            med, best = timed(lambda k=conc: judge_overlap(url, cases, k, 0.2), 1)
            rows.append(
                (
                    f"openai judge (0.2 s/call, 2 calls/case), 16 cases, judge concurrency {conc}",
                    med,
                    best,
                    f"{JUDGE_CALLS[-1]} judge calls: {JUDGE_CALLS[-1] * 0.2:.1f} s if serial",
                )
            )
    for n in (100, 2000):
        med, best = timed(lambda k=n: render_many(k), args.repeat)
        rows.append((f"comment render, {n} failing cases (capped at 60,000 chars)", med, best, ""))
    server.shutdown()
    print("| benchmark | median s | best s | note |\n|---|---|---|---|")
    for name, med, best, note in rows:
        print(f"| {name} | {med:.3f} | {best:.3f} | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
