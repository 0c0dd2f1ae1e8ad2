"""How often a noisy judge blocks an unchanged PR, and how often a real drop is caught: the real `ragjudge run`.

    python bench/judge_noise.py [--worlds 200] [--cases 100] [--flip 0.1] [--rejudge 0,8] [--workers 2]
        [--services same,reword] [--replays 100] [--out results.json]

Each world is a judge wrong on `--flip` of its verdicts in its own way (bench/noisy_loopback.py): for each world
and service, main's run, then three PRs against main's report, each `ragjudge run --baseline main.json` as a
subprocess with a fresh judge cache: one unchanged, one with a single case answered worse ("36 days" where the
passages say 6), one with eight. The gate is `judge.grounding >= 3` per case and `newly_failing <= 0`; the judge's
verdict is every rubric score 5 or 1, so a wrong verdict fails a good answer or passes a worse one.

Printed, per service and `judge.rejudge`: false failures per unchanged PR with the 95% Wilson interval; the share of
single-drop PRs whose worse case is named a regression; the share of 8-drop PRs blocked; judge calls per case in
the PR's own run (rubric, rejudges, the consistency sample and pairwise, from the report's `suite.judge_calls`);
the footer's flip rate (the median over the unchanged PRs, and the share of PRs whose interval holds `--flip`).
With `--replays N`, N single-drop PRs are run again three ways (the PR's cache kept, no cache, main's cache
shared) and each must give the same verdict, the same `change` for every case and the same `judge_runs`.

Nothing here is a model of the product's rules: every figure is read from the reports the CLI wrote.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate_bench import ragjudge_command  # the same folder's module

KEY = "sk-bench-noisy-judge"
GATE = 'gate:\n  case: {judge.grounding: ">= 3"}\n  suite: {pass_rate: ">= 0"}\n  regression: {newly_failing: "<= 0"}\n'


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Row:
    unchanged: list[bool] = field(default_factory=list)
    single: list[bool] = field(default_factory=list)
    eight: list[bool] = field(default_factory=list)
    calls_unchanged: list[float] = field(default_factory=list)
    calls_drop: list[float] = field(default_factory=list)
    flips: list[float] = field(default_factory=list)
    flip_covered: list[bool] = field(default_factory=list)
    replays_same: list[bool] = field(default_factory=list)


class Bench:
    def __init__(self, args: argparse.Namespace, base: str, folder: Path) -> None:
        self.args = args
        self.base = base
        self.folder = folder
        self.command = ragjudge_command()
        with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
            for i in range(args.cases):
                case = {"id": f"c{i:03d}", "question": f"How long does a refund take to reach me? (#{i})"}
                out.write(json.dumps(case) + "\n")

    def run(
        self,
        where: Path,
        world: str,
        service: str,
        run: str,
        bad: list[int],
        rejudge: int,
        cache: Path | None,
        baseline: Path | None,
    ) -> dict[str, Any]:
        where.mkdir(parents=True, exist_ok=True)
        bad_part = ",".join(str(b) for b in sorted(bad)) or "-"
        config = where / "ragjudge.yml"
        config.write_text(
            f"endpoint:\n  url: {self.base}/svc/{service}/{run}/{bad_part}/ask\n  concurrency: 8\n"
            "judge:\n  provider: openai\n  model: noisy-judge\n"
            f"  base_url: {self.base}/w/{world}/v1\n  api_key: ${{BENCH_JUDGE_KEY}}\n  concurrency: 8\n"
            f"  cache: {json.dumps(str(cache)) if cache else 'null'}\n  rejudge: {rejudge}\n"
            f"  calibration: {where / 'none.json'}\n"
            f"cases: [{self.folder / 'cases.jsonl'}]\n{GATE}",
            encoding="utf-8",
        )
        report = where / "report.json"
        command = [self.command, "run", "--config", str(config), "--report", str(report)]
        if baseline is not None:
            command += ["--baseline", str(baseline)]
        env = {**os.environ, "BENCH_JUDGE_KEY": KEY}
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"ragjudge run exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
        data["_exit"] = done.returncode
        return data

    def world(self, index: int, service: str, rejudge: int, replay: bool) -> dict[str, Any]:
        rng = random.Random(f"{self.args.seed}:{index}:{service}")
        world = f"w{self.args.seed}-{index}"
        here = self.folder / f"{service}-{rejudge}-{index}"
        main = self.run(here / "main", world, service, "main", [], rejudge, here / "main" / "cache", None)
        (here / "main.json").write_text(json.dumps(main), encoding="utf-8")
        one = [rng.randrange(self.args.cases)]
        eight = rng.sample(range(self.args.cases), 8)
        out: dict[str, Any] = {}
        for name, bad in (("unchanged", []), ("single", one), ("eight", eight)):
            pr = self.run(here / name, world, service, "pr", bad, rejudge, here / name / "cache", here / "main.json")
            changes = {c["id"]: c.get("change") for c in pr["cases"]}
            out[name] = {
                "blocked": pr["verdict"] == "fail",
                "caught": all(changes.get(f"c{b:03d}") == "regression" for b in bad) if bad else False,
                "calls": (pr["suite"].get("judge_calls") or 0) / self.args.cases,
                "flip": (pr.get("judge_trust") or {}).get("judge_flip_rate"),
                "flip_interval": (pr.get("judge_trust") or {}).get("judge_flip_rate_interval"),
            }
            if name == "single" and replay:
                out["replay_same"] = self.replays(here, world, service, bad, rejudge, pr)
            shutil.rmtree(here / name / "cache", ignore_errors=True)
        shutil.rmtree(here, ignore_errors=True)
        return out

    def replays(
        self, here: Path, world: str, service: str, bad: list[int], rejudge: int, first: dict[str, Any]
    ) -> bool:
        """The same PR again: its cache kept, no cache, main's cache shared: the same verdict, changes, judge_runs."""
        kept = self.run(
            here / "kept", world, service, "pr", bad, rejudge, here / "single" / "cache", here / "main.json"
        )
        none = self.run(here / "none", world, service, "pr", bad, rejudge, None, here / "main.json")
        shutil.copytree(here / "main" / "cache", here / "shared-cache", dirs_exist_ok=True)
        shared = self.run(
            here / "shared", world, service, "pr", bad, rejudge, here / "shared-cache", here / "main.json"
        )

        def view(report: dict[str, Any]) -> Any:
            return (
                report["verdict"],
                [(c["id"], c.get("change"), c.get("status"), c.get("judge_runs")) for c in report["cases"]],
            )

        return view(first) == view(kept) == view(none) == view(shared)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=200)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--flip", type=float, default=0.1)
    ap.add_argument("--rejudge", default="8", help="comma-separated judge.rejudge settings")
    ap.add_argument("--services", default="same,reword")
    ap.add_argument("--replays", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    here = Path(__file__).resolve().parent
    server = subprocess.Popen(
        [sys.executable, str(here / "noisy_loopback.py"), "--flip", str(args.flip)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=here,
    )
    try:
        assert server.stdout is not None
        base = json.loads(server.stdout.readline())["base"]
        with tempfile.TemporaryDirectory(prefix="judge-noise-") as tmp:
            bench = Bench(args, base, Path(tmp))
            rows: dict[tuple[str, int], Row] = {}
            for service in args.services.split(","):
                for rejudge in (int(r) for r in args.rejudge.split(",")):
                    row = rows.setdefault((service, rejudge), Row())
                    with ThreadPoolExecutor(args.workers) as pool:
                        jobs = [
                            pool.submit(bench.world, i, service, rejudge, i < args.replays) for i in range(args.worlds)
                        ]
                        for job in jobs:
                            got = job.result()
                            row.unchanged.append(got["unchanged"]["blocked"])
                            row.single.append(got["single"]["caught"])
                            row.eight.append(got["eight"]["blocked"])
                            row.calls_unchanged.append(got["unchanged"]["calls"])
                            row.calls_drop.append(got["single"]["calls"])
                            if got["unchanged"]["flip"] is not None:
                                row.flips.append(got["unchanged"]["flip"])
                                lo, hi = got["unchanged"]["flip_interval"] or (0.0, 1.0)
                                row.flip_covered.append(lo <= args.flip <= hi)
                            if "replay_same" in got:
                                row.replays_same.append(got["replay_same"])
                    print(f"done: {service} rejudge {rejudge}", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait()
    print(
        f"Judge wrong on {args.flip:.0%} of its verdicts, {args.cases} cases, {args.worlds} PRs of each kind per row.\n"
    )
    print(
        "| service | rejudge | false failures per unchanged PR [95% Wilson] | single worse case caught "
        "| 8-drop PRs caught | calls per case (unchanged; single drop) | footer flip rate (median; interval holds "
        f"{args.flip:.0%}) | same PR re-run 3 cache ways, same result |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (service, rejudge), row in rows.items():
        n = len(row.unchanged)
        false = sum(row.unchanged)
        lo, hi = wilson(false, n)
        flips = sorted(row.flips)
        flip = f"{flips[len(flips) // 2]:.1%}; {sum(row.flip_covered)}/{len(row.flip_covered)}" if flips else "none"
        replays = f"{sum(row.replays_same)}/{len(row.replays_same)}" if row.replays_same else "not run"
        name = "same answer each run" if service == "same" else "rewords every answer"
        print(
            f"| {name} | {rejudge} | {false / n:.1%} [{lo:.1%}, {hi:.1%}] ({false}/{n}) "
            f"| {sum(row.single) / n:.1%} ({sum(row.single)}/{n}) | {sum(row.eight) / n:.1%} ({sum(row.eight)}/{n}) "
            f"| {sum(row.calls_unchanged) / n:.2f}; {sum(row.calls_drop) / n:.2f} | {flip} | {replays} |"
        )
    if args.out:
        args.out.write_text(json.dumps({f"{s}:{r}": vars(row) for (s, r), row in rows.items()}), encoding="utf-8")


if __name__ == "__main__":
    main()
