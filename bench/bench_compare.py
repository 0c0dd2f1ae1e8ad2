"""Benchmark: comparing a report with its baseline (`compare_with_baseline`) and rendering the comment.

Run: python bench/bench_compare.py [--repeat 3]. Prints a Markdown table; figures go in bench/README.md.
The reports are synthetic: every case has faithfulness, five judge dimensions, a latency and a cost, so
every delta (Wilcoxon + bootstrap) and both ratios (paired bootstrap) are computed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragjudge.compare import compare_with_baseline  # noqa: E402
from ragjudge.config.model import parse_config  # noqa: E402
from ragjudge.judge.interface import RUBRIC_DIMENSIONS  # noqa: E402
from ragjudge.report.case_block import CaseBlock  # noqa: E402
from ragjudge.report.markdown import render_comment  # noqa: E402
from ragjudge.report.model import Report  # noqa: E402
from ragjudge.report.suite_block import SuiteBlock  # noqa: E402
from ragjudge.report.trace_block import TraceBlock  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), min(runs)


def synthetic(n: int, seed: int, fail_rate: float) -> Report:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        status = "fail" if rng.random() < fail_rate else "pass"
        metrics: dict[str, float | None] = {"faithfulness": rng.choice([1.0, 1.0, 0.75, 0.5])}
        metrics.update({f"judge.{d}": float(rng.randint(2, 5)) for d in RUBRIC_DIMENSIONS})
        latency = rng.lognormvariate(6, 0.4)
        cases.append(
            CaseBlock(
                id=f"case-{i:05d}",
                category="c",
                status=status,
                failed_conditions=[] if status == "pass" else [f"judge.grounding 2 < 3: reason {i}"],
                metrics=metrics,
                judge={},
                trace=TraceBlock(
                    answer="a",
                    refused=False,
                    confidence=None,
                    retrieved_ids=[],
                    latency_ms=latency,
                    cost_usd=0.001 * rng.uniform(0.5, 1.5),
                    error=None,
                ),
            )
        )
    passed = sum(c.status == "pass" for c in cases)
    suite = SuiteBlock(
        cases=n,
        passed=passed,
        failed=n - passed,
        errored=0,
        pass_rate=passed / n,
        faithfulness=None,
        rejection_accuracy=None,
        p50_latency_ms=None,
        p95_latency_ms=None,
        judge_error_rate=None,
        endpoint_error_rate=None,
        cost_usd=None,
    )
    provenance = {
        "created_at": "2026-11-29T10:00:00+00:00",
        "git_commit": "abc1234",
        "git_ref": "refs/heads/main",
        # The same judge in both reports: without it the judge deltas are "not comparable" and not computed.
        "judge_fingerprint": {"provider": "openai", "model": "bench-judge", "prompt_hash": "f" * 16},
    }
    return Report(verdict="pass", suite=suite, rules=[], cases=cases, provenance=provenance)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    config = parse_config(
        {"gate": {"regression": {"newly_failing": "<= 0", "pass_rate_delta": ">= -0.02", "cost_ratio": "<= 1.2"}}},
        "bench",
        Path("."),
    )
    print("| benchmark | median s | best s |")
    print("|---|---|---|")
    for n in (200, 1000, 5000):
        base, now = synthetic(n, 1, 0.05), synthetic(n, 2, 0.08)
        median, best = timed(lambda b=base, x=now: compare_with_baseline(x, b, config), args.repeat)
        print(f"| compare with baseline, {n} cases (9 figures, 2,000 resamples each) | {median:.3f} | {best:.3f} |")
        compared = compare_with_baseline(now, base, config)
        median, best = timed(lambda r=compared: render_comment(r), args.repeat)
        print(f"| comment render with the comparison, {n} cases | {median:.3f} | {best:.3f} |")


if __name__ == "__main__":
    main()
