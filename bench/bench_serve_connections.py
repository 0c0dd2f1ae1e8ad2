"""What idle connections cost `ragjudge serve`: threads and RSS of the process while N sockets are open and
send nothing, whether a webhook is still answered meanwhile, and what is left once they are closed.

Run from a checkout: `python bench/bench_serve_connections.py [--sockets 3000] [--src DIR]`. `--src` runs
another copy of the package (e.g. an older commit's `src/`, from `git archive`) for a before/after figure.
Everything is on 127.0.0.1; the service is `python -m ragjudge serve` in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.canary.files import write_config, write_sample  # noqa: E402


def status(pid: int) -> dict[str, int]:
    """Threads and VmRSS (kB) from /proc."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Threads", "VmRSS"):
            found[key] = int(value.split()[0])
    return found


def settle(pid: int, seconds: float = 2.0) -> dict[str, int]:
    """The figures once they stop changing (or after `seconds`)."""
    last = status(pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = status(pid)
        if now == last:
            return now
        last = now
    return last


def healthz_ms(url: str) -> float | str:
    started = time.perf_counter()
    try:
        reply = requests.get(f"{url}/healthz", timeout=5)
    except requests.RequestException as exc:
        return type(exc).__name__
    return round((time.perf_counter() - started) * 1000, 1) if reply.status_code == 200 else f"HTTP {reply.status_code}"


def run(src: Path, sockets: int, tmp: Path) -> dict[str, object]:
    sample = write_sample(tmp / "sample.yaml", 3)
    canary = {
        "sample": str(sample),
        "treatment": "http://127.0.0.1:9/ask",
        "control": "http://127.0.0.1:9/ask",
        "rules": {"p95_latency_ms": "<= 3000"},
    }
    config = write_config(tmp / "ragjudge.yml", canary)
    env = {**os.environ, "PYTHONPATH": str(src)}
    process = subprocess.Popen(
        [sys.executable, "-m", "ragjudge", "serve", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip().rsplit(" ", 1)[1]
    host, port = url.removeprefix("http://").split(":")
    try:
        base = settle(process.pid)
        opened: list[socket.socket] = []
        started = time.perf_counter()
        for _ in range(sockets):
            opened.append(socket.create_connection((host, int(port)), timeout=5))
        open_s = time.perf_counter() - started
        held = settle(process.pid, 5.0)
        during = healthz_ms(url)
        # How many of ours the service has already closed (refused, or past its read deadline).
        closed = 0
        for sock in opened:
            sock.setblocking(False)
            try:
                if sock.recv(1, socket.MSG_PEEK) is not None:
                    closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        # Past two read deadlines (10 s each): the threads and the queue have let go of ours.
        time.sleep(21)
        later = healthz_ms(url)
        for sock in opened:
            sock.close()
        after = settle(process.pid, 5.0)
        return {
            "sockets": sockets,
            "open_s": round(open_s, 2),
            "idle": {"threads": base["Threads"], "rss_mb": round(base["VmRSS"] / 1024, 1)},
            "held": {"threads": held["Threads"], "rss_mb": round(held["VmRSS"] / 1024, 1)},
            "closed_by_service_while_held": closed,
            "healthz_ms_while_held": during,
            "healthz_ms_21_s_later_still_held": later,
            "after_close": {"threads": after["Threads"], "rss_mb": round(after["VmRSS"] / 1024, 1)},
        }
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sockets", type=int, default=3000)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the package's src/ to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(args.src.resolve(), args.sockets, Path(tmp)), indent=2))


if __name__ == "__main__":
    main()
