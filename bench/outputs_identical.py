"""Do two checkouts write the same outputs on the bundled example? A check for refactors that must not change behaviour.

Run: python bench/outputs_identical.py --before DIR --after DIR [--keep DIR]

Each checkout's `src/` runs `ragjudge` as a subprocess (`python -m ragjudge`, with that `src/` first on the path)
against one example RAG service (examples/rag_service.py of this checkout, on a free loopback port), with the
offline judge: a plain run writing the report, comment, JUnit, HTML and log; a second run compared with the
first's report as its baseline (`--baseline`, so the comparison and its comment section are exercised), with
`--repeat 3/2`; two shards of the example merged (`ragjudge merge`), and `ragjudge comment` rendered from the
saved report. Then every output of one checkout is diffed with the same output of the other.

What differs from one run to the next on the same code is blanked in both before the diff, and nothing else:
timestamps, durations and latencies (the service's own timing), the service's port, the checkout's path and the
git commit. Exit 0 when every output is the same, 1 with a unified diff of each that is not.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from rag_service import serve_in_thread  # noqa: E402

# Keys whose values are times measured by this run (a latency, a duration, a clock reading).
_VOLATILE_KEYS = (
    r"latency_ms|ttft_ms|p50_latency_ms|p95_latency_ms|p99_latency_ms|mean_latency_ms|duration_s|elapsed_s"
    r"|wall_s|created_at|started_at|finished_at|timestamp|ts|time|seconds|generated_at|git_commit|git_ref"
)
_JSON_NUM = re.compile(rf'("(?:{_VOLATILE_KEYS})"\s*:\s*)(-?[0-9.eE+-]+|"[^"]*")')
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
_MS = re.compile(r"(?<![\w.])\d+(?:\.\d+)? ?ms\b")
_TD_NUMBER = re.compile(r"<td>\d+(?:\.\d+)?</td>")
_SIGNIFICANT = re.compile(r"(not )?significant")
# The latency delta's significance sits in the cell after its chart's line.
_SIGNIFICANCE_CELL = re.compile(r"\s*<td>(not )?significant</td></tr>")
# A latency histogram has as many bars as the run's spread of latencies needs.
_BARS = re.compile(r"(<rect class=\"bar\"[^>]*>.*?</rect>)+|(<text x=[^>]*>[^<]*</text>)+")
_ARROWS = str.maketrans({"▲": "~", "▼": "~", "=": "~"})
_SECONDS = re.compile(r'(time|timestamp)="[0-9.]+"')


def _blank(value: Any, timed: bool = False) -> Any:
    """A JSON value with every measured time blanked: the numbers of a latency figure, a timestamp."""
    if isinstance(value, dict):
        timed = timed or any("latency" in str(k) or "latency" in str(v) for k, v in value.items() if k != "cases")
        return {k: "T" if re.fullmatch(_VOLATILE_KEYS, k) else _blank(v, timed) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v, timed) for v in value]
    if timed and isinstance(value, (int, float)):
        return "T"
    if timed and isinstance(value, str):
        return re.sub(r"\d+(?:\.\d+)?(?:e-?\d+)?", "9", value)
    return value


def normalise_json(text: str, port: int, paths: list[str]) -> str:
    return normalise(json.dumps(_blank(json.loads(text)), indent=1, ensure_ascii=False), port, paths)


def normalise(text: str, port: int, paths: list[str]) -> str:
    text = text.replace(f"127.0.0.1:{port}", "127.0.0.1:PORT")
    for p in paths:
        text = text.replace(p, "DIR")
    text = _JSON_NUM.sub(r"\1T", text)
    text = _ISO_TIME.sub("TIME", text)
    text = _SECONDS.sub(r'\1="T"', text)
    text = _MS.sub("T ms", text)
    out, timed = [], False
    for line in text.splitlines():
        # A latency figure spans its line, or (in the HTML report) its chart or table row.
        timed = timed or "latency" in line or "p50 " in line or "p95 " in line
        line = _TD_NUMBER.sub("<td>T</td>", line)
        if timed or _SIGNIFICANCE_CELL.match(line):
            line = _SIGNIFICANT.sub("SIG", re.sub(r"\d+(?:\.\d+)?(?:e-?\d+)?", "9", line))
            line = _BARS.sub("BARS", line.replace(" dot-sig", "")).translate(_ARROWS)
        if not timed or "</svg>" in line or "</tr>" in line or not line.lstrip().startswith("<"):
            timed = False
        out.append(line)
    return "\n".join(out)


def ragjudge(src: Path, args: list[str], cwd: Path) -> int:
    env = dict(os.environ, PYTHONPATH=str(src / "src"), GITHUB_SHA="0" * 40, GITHUB_REF="refs/heads/main")
    env.pop("GITHUB_ACTIONS", None)
    cmd = [sys.executable, "-m", "ragjudge", *args]
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    (cwd / "stdout.txt").open("a").write(done.stdout)
    return done.returncode


def outputs(src: Path, url: str, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    config = ROOT / "examples" / "ragjudge.yml"
    base = ["--config", str(config), "--endpoint", url]
    codes = [
        ragjudge(
            src,
            ["run", *base, "--report", "a.json", "--comment-file", "a.md", "--junit", "a.xml", "--html", "a.html"],
            out,
        ),
        ragjudge(
            src,
            [
                "run",
                *base,
                "--baseline",
                "a.json",
                "--repeat",
                "3/2",
                "--report",
                "b.json",
                "--comment-file",
                "b.md",
                "--junit",
                "b.xml",
                "--html",
                "b.html",
            ],
            out,
        ),
        ragjudge(src, ["run", *base, "--shard", "1/2", "--report", "s1.json"], out),
        ragjudge(src, ["run", *base, "--shard", "2/2", "--report", "s2.json"], out),
        ragjudge(
            src,
            [
                "merge",
                "s1.json",
                "s2.json",
                "--config",
                str(config),
                "--baseline",
                "a.json",
                "--report",
                "m.json",
                "--comment-file",
                "m.md",
                "--junit",
                "m.xml",
                "--html",
                "m.html",
            ],
            out,
        ),
        ragjudge(src, ["comment", "--report", "b.json", "--comment-file", "c.md"], out),
    ]
    (out / "exit_codes.txt").write_text(" ".join(map(str, codes)) + "\n")
    return sorted(p for p in out.iterdir() if p.name != "stdout.txt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout (its src/ is run)")
    parser.add_argument("--after", type=Path, default=ROOT, help="a checkout (default: this one)")
    parser.add_argument("--keep", type=Path, help="write the outputs here instead of a temporary folder")
    args = parser.parse_args(argv)
    server, url = serve_in_thread()
    port = server.server_address[1]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            where = args.keep or Path(tmp)
            before = outputs(args.before.resolve(), url, where / "before")
            after = outputs(args.after.resolve(), url, where / "after")
            paths = [str(where / "before"), str(where / "after"), str(ROOT)]
            differ = 0
            names_b, names_a = [p.name for p in before], [p.name for p in after]
            if names_b != names_a:
                print(f"different outputs: {names_b} != {names_a}")
                differ += 1
            for b, a in zip(before, after, strict=False):
                norm = normalise_json if b.suffix == ".json" else normalise
                tb = norm(b.read_text(encoding="utf-8"), port, paths)
                ta = norm(a.read_text(encoding="utf-8"), port, paths)
                if tb != ta:
                    differ += 1
                    diff = difflib.unified_diff(tb.splitlines(), ta.splitlines(), f"before/{b.name}", f"after/{a.name}")
                    print("\n".join(list(diff)[:80]))
            print(f"{len(before)} outputs compared, {differ} differ")
            return 1 if differ else 0
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    raise SystemExit(main())
