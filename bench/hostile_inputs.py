"""How fast hostile inputs are refused: `python bench/hostile_inputs.py [--json]`.

Each input is given to the `ragjudge` command of the current venv as a subprocess (so the figure includes
starting Python), and the wall time, exit code and peak memory (`ru_maxrss` of the child) are printed. Nothing
in the test suite asserts a time; the tests assert the exit code and the message.
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
from pathlib import Path

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g", "h"], "abcdefghi", strict=True)
)


def _inputs(folder: Path) -> dict[str, list[str]]:
    (folder / "bomb.yml").write_text(BOMB, encoding="utf-8")
    (folder / "bomb-cases.yaml").write_text(BOMB + "cases: [{question: q}]\n", encoding="utf-8")
    (folder / "deep.yml").write_text("gate: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    (folder / "cases.yaml").write_text("- {id: a, question: q}\n", encoding="utf-8")
    with (folder / "big.yaml").open("w", encoding="utf-8") as out:
        line = "- {question: 'a question long enough to fill a large case file quickly'}\n"
        block = line * 10_000  # written a block at a time: the parent's memory is what children start with
        for _ in range(60_000_000 // len(block) + 1):
            out.write(block)
    (folder / "inf.yml").write_text("endpoint: {timeout_s: .inf}\ncases: [cases.yaml]\n", encoding="utf-8")
    endpoint = ["--endpoint", "http://127.0.0.1:9/ask"]
    return {
        "billion laughs config (342 bytes)": ["run", "--config", "bomb.yml", *endpoint],
        "billion laughs case file": ["run", "--cases", "bomb-cases.yaml", *endpoint],
        "config nested 100,000 levels": ["run", "--config", "deep.yml", *endpoint],
        "60 MB case file (limit 50 MB)": ["run", "--cases", "big.yaml", *endpoint],
        "timeout_s: .inf": ["run", "--config", "inf.yml", *endpoint],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    command = shutil.which("ragjudge") or sys.exit("ragjudge is not on PATH: pip install -e . first")
    results = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for label, argv in _inputs(folder).items():
            started = time.perf_counter()
            child = subprocess.Popen(
                [command, *argv], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory, not the largest so far
            wall = time.perf_counter() - started
            stderr = child.stderr.read() if child.stderr else ""
            code = os.waitstatus_to_exitcode(status)
            peak = usage.ru_maxrss
            first = (stderr.strip().splitlines() or [""])[0]
            results.append(
                {
                    "input": label,
                    "exit": code,
                    "wall_s": round(wall, 3),
                    "peak_rss_mb": round(peak / 1024, 1),
                    "message": first[:160],
                }
            )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(
                f"{r['input']:<36} exit {r['exit']}  {r['wall_s']:>6.3f} s  {r['peak_rss_mb']:>6.1f} MB  {r['message']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
