"""Benchmarks of the report formats and the merge: JUnit and HTML rendering, and merging shards, for large runs.

Run: python bench/bench_reports.py [--repeat 3]. Prints a Markdown table; figures go in bench/README.md.
The reports come from the offline gate run against the example service on 127.0.0.1 (one run per size; the
shards are that run's cases split by `--shard` and written as they would be).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragjudge.examples.rag_service import serve_in_thread  # noqa: E402

from ragjudge.config.model import parse_config  # noqa: E402
from ragjudge.gate.evaluation import GateRequest, run_gate  # noqa: E402
from ragjudge.gate.merge_shards import ShardReport, merge_reports  # noqa: E402
from ragjudge.gate.shard import Shard  # noqa: E402
from ragjudge.report.html import render_html  # noqa: E402
from ragjudge.report.junit import render_junit  # noqa: E402
from ragjudge.report.model import Report  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from bench_gate import write_cases  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), min(runs)


def shards_of(url: str, cases: Path, n: int) -> list[Report]:
    out = []
    for i in range(1, n + 1):
        config = parse_config(
            {"endpoint": {"url": url, "concurrency": 8}, "cases": [str(cases)]}, "bench", cases.parent
        )
        out.append(run_gate(GateRequest(config=config, shard=Shard(i, n))))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    server, url = serve_in_thread()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in (200, 2000):
                folder = Path(tmp) / str(n)
                folder.mkdir()
                cases = write_cases(folder, n)
                shards = shards_of(url, cases, 4)
                parts = [ShardReport(folder / f"s{i}.json", r) for i, r in enumerate(shards, 1)]
                merged = merge_reports(parts)
                med, best = timed(lambda parts=parts: merge_reports(parts), args.repeat)  # type: ignore[misc]
                rows.append((f"merge 4 shards, {n} cases", med, best, ""))
                med, best = timed(lambda merged=merged: render_junit(merged), args.repeat)  # type: ignore[misc]
                size = len(render_junit(merged).encode()) / 1024
                rows.append((f"JUnit render, {n} cases", med, best, f"{size:,.0f} KiB"))
                med, best = timed(lambda merged=merged: render_html(merged), args.repeat)  # type: ignore[misc]
                size = len(render_html(merged).encode()) / 1024
                rows.append((f"HTML render, {n} cases", med, best, f"{size:,.0f} KiB"))
    finally:
        server.shutdown()
        server.server_close()
    print("| benchmark | median s | best s | note |")
    print("|---|---|---|---|")
    for name, med, best, note in rows:
        print(f"| {name} | {med:.3f} | {best:.3f} | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
