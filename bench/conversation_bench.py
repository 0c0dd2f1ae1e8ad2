"""Benchmark `ragjudge run` on conversations against a loopback chat service that streams.

    python bench/conversation_bench.py [--conversations 200] [--turns 3] [--concurrency 16] \
        [--first-token-ms 200] [--tokens 20] [--token-ms 10] [--judge-ms 100] [--json]

Runs the case set twice, the service's replies streamed (`"stream": true`, OpenAI chunks) and not (one JSON body
sent when the last token would have been), each through the `ragjudge` command of this venv as a CI job runs
it, with the OpenAI-compatible loopback judge of bench/loopback.py (one process of its own, so serving costs
the measured process nothing). Printed per mode: wall, the floor (every turn's service time over the
concurrency: turns run in order within a conversation, conversations in parallel), wall/floor, CPU ms per
turn (user + sys of the ragjudge process, from `wait4`), p50 of the reported `ttft_ms` beside the p50 of the
service's own first-token times, and judge calls per answered turn. Nothing in the test suite asserts these.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_bench import run_gate, stats
from loopback import launch


def write_inputs(folder: Path, args: argparse.Namespace, urls: dict[str, str], stream: bool) -> Path:
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for i in range(args.conversations):
            turns = [{"question": f"Question {t + 1} of conversation {i}: can I return it?"} for t in range(args.turns)]
            out.write(json.dumps({"id": f"conv-{i}", "turns": turns}) + "\n")
    body = '{"model": "bench", "messages": {{ messages | tojson }}, "stream": ' + ("true" if stream else "false") + "}"
    config = folder / "ragjudge.yml"
    config.write_text(
        "endpoint:\n"
        f"  url: {urls['chat']}\n"
        f"  concurrency: {args.concurrency}\n"
        f"  body: '{body}'\n"
        "  protocol: openai-chat\n"  # the chunks read as declared; the one-body run reads choices.0.message.content
        "  response:\n"
        "    answer: choices.0.message.content\n"
        "    retrieved: references\n"
        "judge:\n"
        "  provider: openai\n"
        "  model: bench-judge\n"
        f"  base_url: {urls['judge']}\n"
        "  api_key: ${BENCH_JUDGE_KEY}\n"
        f"  concurrency: {args.concurrency}\n"
        "cases: [cases.jsonl]\n"
        "gate:\n"
        '  suite: {pass_rate: ">= 0"}\n',
        encoding="utf-8",
    )
    return config


def measure(args: argparse.Namespace, stream: bool) -> dict[str, Any]:
    chat = (args.first_token_ms, args.tokens, args.token_ms)
    server, urls = launch(0.0, args.judge_ms, chat=chat)
    try:
        with tempfile.TemporaryDirectory(prefix="conversation-bench-") as tmp:
            folder = Path(tmp)
            run = run_gate(folder, write_inputs(folder, args, urls, stream))
            served = stats(urls)
            report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    finally:
        server.terminate()
        server.wait(timeout=10)
    turns = [t for c in report["cases"] for t in c["turns"]]
    expected = args.conversations * args.turns
    if len(turns) != expected:
        raise SystemExit(f"the report has {len(turns)} turns, not {expected}")
    answered = [t for t in turns if t["trace"]["answer"] is not None]
    service_s = (args.first_token_ms + (args.tokens - 1) * args.token_ms) / 1000
    floor = expected * service_s / args.concurrency
    ttfts = [t["trace"]["ttft_ms"] for t in answered if t["trace"]["ttft_ms"] is not None]
    return {
        "mode": "streamed" if stream else "one body",
        "wall_s": round(run["wall_s"], 2),
        "floor_s": round(floor, 2),
        "wall_over_floor": round(run["wall_s"] / floor, 3),
        "cpu_ms_per_turn": round(run["cpu_s"] * 1000 / expected, 2),
        "p50_ttft_ms": round(statistics.median(ttfts), 1) if ttfts else None,
        "service_p50_first_token_ms": round(statistics.median(served["first_token_ms"]), 1)
        if served["first_token_ms"]
        else None,
        "judge_calls_per_answered_turn": round(served["judge_calls"] / len(answered), 3) if answered else None,
        "errored_turns": sum(t["status"] == "error" for t in turns),
        "peak_rss_mb": round(run["peak_rss_mb"], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--first-token-ms", type=float, default=200.0)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--token-ms", type=float, default=10.0)
    parser.add_argument("--judge-ms", type=float, default=100.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [measure(args, stream=True), measure(args, stream=False)]
    streamed, plain = rows
    summary = {
        "cpu_streamed_over_one_body": round(streamed["cpu_ms_per_turn"] / plain["cpu_ms_per_turn"], 2),
        "ttft_minus_service_first_token_ms": round(
            (streamed["p50_ttft_ms"] or 0) - (streamed["service_p50_first_token_ms"] or 0), 1
        ),
    }
    if args.json:
        print(json.dumps({"rows": rows, **summary}))
    else:
        keys = list(rows[0])
        print(" | ".join(keys))
        for row in rows:
            print(" | ".join(str(row[k]) for k in keys))
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
