"""Benchmarks for `ragjudge serve`: how fast hooks and scrapes are answered while analyses run, how long
one analysis of a 120-question sample takes, and how long SIGTERM takes to stop the process.

Run from a checkout with the test extras installed: `python bench/bench_serve.py [--repeat 3]`.
Everything is on 127.0.0.1: the arms are loopback servers (tests/fakes/cluster.py's Cluster).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

from ragjudge.stats import percentile_nearest_rank

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.canary.files import write_config, write_feedback, write_sample  # noqa: E402
from tests.fakes.arms import ArmServer  # noqa: E402
from tests.fakes.cluster import Cluster, standard_arms  # noqa: E402
from tests.serve.service import running_service, serve_config  # noqa: E402


def bench_hooks(tmp: Path, n: int, clients: int) -> dict[str, float]:
    """Hook and /metrics latency while two analyses (120 questions, 10/120 ms arms) run."""
    with Cluster(standard_arms()) as cluster:
        feedback = write_feedback(tmp / "feedback.json", (150, 5000), (150, 5000))
        with running_service(serve_config(tmp, cluster.url, feedback)) as svc:
            for name in ("good", "slow"):
                svc.post("/v1/analyses", {"name": name, "namespace": "prod"})
            payload = {"name": "good", "namespace": "prod", "checksum": None}
            latencies: list[float] = []
            lock = threading.Lock()

            def client() -> None:
                session = requests.Session()
                for i in range(n // clients):
                    started = time.perf_counter()
                    if i % 2:
                        session.get(f"{svc.url}/metrics", timeout=10)
                    else:
                        session.post(f"{svc.url}/flagger/confirm-promotion", json=payload, timeout=10)
                    with lock:
                        latencies.append((time.perf_counter() - started) * 1000)

            started = time.perf_counter()
            threads = [threading.Thread(target=client) for _ in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - started
            good = svc.wait_done("good")
            svc.wait_done("slow")
    return {
        "p50_ms": percentile_nearest_rank(latencies, 50),
        "p95_ms": percentile_nearest_rank(latencies, 95),
        "req_per_s": len(latencies) / wall,
        "analysis_s": good["duration_s"],
    }


def bench_sigterm(tmp: Path) -> float:
    """Seconds from SIGTERM to exit, with an analysis waiting on 5 s requests."""
    with ArmServer("t", delay_s=5) as t, ArmServer("c", delay_s=5) as c:
        canary = {
            "sample": str(write_sample(tmp / "sample.yaml", 20)),
            "treatment": t.ask_url,
            "control": c.ask_url,
            "rules": {"p95_latency_ratio": "<= 1.5"},
        }
        config = write_config(tmp / "ragjudge.yml", canary)
        process = subprocess.Popen(
            [sys.executable, "-m", "ragjudge", "serve", "--config", str(config), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert process.stdout is not None
        url = process.stdout.readline().strip().rsplit(" ", 1)[1]
        requests.post(f"{url}/v1/analyses", json={"name": "rag"}, timeout=5)
        time.sleep(0.3)
        started = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    rows = []
    for clients in (1, 8):
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                runs.append(bench_hooks(Path(tmp), args.requests, clients))
        rows.append(
            {
                "benchmark": f"hooks + /metrics while 2 analyses run, {clients} client(s), {args.requests} requests",
                "p50_ms": statistics.median(r["p50_ms"] for r in runs),
                "p95_ms": statistics.median(r["p95_ms"] for r in runs),
                "req_per_s": statistics.median(r["req_per_s"] for r in runs),
                "analysis_s (120 questions, 10/120 ms arms)": statistics.median(r["analysis_s"] for r in runs),
            }
        )
    stops = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            stops.append(bench_sigterm(Path(tmp)))
    rows.append(
        {
            "benchmark": "SIGTERM to exit, one analysis mid-flight",
            "median_s": statistics.median(stops),
            "max_s": max(stops),
        }
    )
    for row in rows:
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
