"""`GET /metrics`: the exposition text for known results, exactly."""

from __future__ import annotations

import math
import time
from pathlib import Path

import requests

from ragjudge.canary.release import CanaryOutcome
from ragjudge.canary.report import MetricBlock
from ragjudge.errors import ExitCode
from ragjudge.serve.analyses import Registry
from ragjudge.serve.exposition import _labels, metric_series
from ragjudge.serve.state import AnalysisSpec
from tests.serve.service import Held, report, running_service, small_config


def test_exposition_of_a_finished_analysis(tmp_path: Path) -> None:
    held = Held()
    rep = report("rollback", ["dislike rate: rollback"])
    rep.metrics["dislike_rate_ratio"] = MetricBlock(
        value=2.0,
        ci=[1.48, 2.71],
        op="<=",
        threshold=1.5,
        decision="fail",
        reason="dislike rate: rollback",
        treatment=0.06,
        control=0.03,
        n={"treatment": 2000, "control": 2000},
    )
    held.outcome = CanaryOutcome(rep, ExitCode.GATE_FAILED)
    held.release()
    with running_service(small_config(tmp_path), runner=held.runner) as svc:
        svc.post("/v1/analyses", {"name": "rag", "namespace": "prod"})
        svc.wait_done("rag")
        svc.post("/v1/analyses", {"name": "rag", "namespace": "prod"})
        seconds = svc.wait_done("rag")["duration_s"]
        text = requests.get(f"{svc.url}/metrics", timeout=5).text
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    seconds_line = next(line for line in lines if line.startswith("ragjudge_canary_analysis_seconds"))
    assert abs(float(seconds_line.split()[-1]) - seconds) < 0.002
    assert [line for line in lines if line != seconds_line] == [
        'ragjudge_canary_verdict{name="rag",namespace="prod",verdict="promote"} 0',
        'ragjudge_canary_verdict{name="rag",namespace="prod",verdict="rollback"} 1',
        'ragjudge_canary_verdict{name="rag",namespace="prod",verdict="inconclusive"} 0',
        'ragjudge_canary_metric{name="rag",metric="dislike_rate",arm="control"} 0.03',
        'ragjudge_canary_metric{name="rag",metric="dislike_rate",arm="treatment"} 0.06',
        'ragjudge_canary_metric{name="rag",metric="dislike_rate_ratio",arm="treatment"} 2.0',
        'ragjudge_canary_metric{name="rag",metric="p95_latency_ms",arm="control"} 40.0',
        'ragjudge_canary_metric{name="rag",metric="p95_latency_ms",arm="treatment"} 20.0',
        'ragjudge_canary_metric{name="rag",metric="p95_latency_ratio",arm="treatment"} 0.5',
        'ragjudge_canary_metric_ci_low{name="rag",metric="dislike_rate_ratio",arm="treatment"} 1.48',
        'ragjudge_canary_metric_ci_low{name="rag",metric="p95_latency_ratio",arm="treatment"} 0.25',
        'ragjudge_canary_metric_ci_high{name="rag",metric="dislike_rate_ratio",arm="treatment"} 2.71',
        'ragjudge_canary_metric_ci_high{name="rag",metric="p95_latency_ratio",arm="treatment"} +Inf',
        # Two analyses of 60 requests per arm.
        'ragjudge_canary_requests_total{name="rag",arm="control"} 120',
        'ragjudge_canary_requests_total{name="rag",arm="treatment"} 120',
        "ragjudge_canary_analyses_running 0",
    ]
    assert "# TYPE ragjudge_canary_requests_total counter" in text
    assert "# TYPE ragjudge_canary_verdict gauge" in text


def test_running_and_errored_analyses(tmp_path: Path) -> None:
    held = Held()
    with running_service(small_config(tmp_path), runner=held.runner) as svc:
        svc.post("/v1/analyses", {"name": "rag", "namespace": "prod"})
        text = requests.get(f"{svc.url}/metrics", timeout=5).text
        assert "ragjudge_canary_verdict{" not in text  # nothing finished yet
        assert "ragjudge_canary_analyses_running 1\n" in text
        held.outcome = CanaryOutcome(report("inconclusive"), ExitCode.COULD_NOT_EVALUATE)
        held.release()
        svc.wait_done("rag")
        text = requests.get(f"{svc.url}/metrics", timeout=5).text
    # An error has no verdict: all three are 0.
    assert [line.rsplit(" ", 1)[1] for line in text.splitlines() if line.startswith("ragjudge_canary_verdict{")] == [
        "0",
        "0",
        "0",
    ]


def test_label_values_are_escaped_and_faithfulness_keeps_its_interval() -> None:
    rep = report()
    rep.metrics["faithfulness"] = MetricBlock(
        value=0.97,
        ci=[0.95, 0.99],
        op=">=",
        threshold=0.95,
        decision="pass",
        reason="ok",
        treatment=0.97,
        control=0.96,
        n={"treatment": 100, "control": 100},
    )
    series = metric_series(rep)
    assert series[("faithfulness", "treatment")] == (0.97, 0.95, 0.99)
    assert series[("faithfulness", "control")] == (0.96, None, None)
    assert series[("p95_latency_ratio", "treatment")] == (0.5, 0.25, math.inf)
    assert _labels(name='a"b\\c\nd') == '{name="a\\"b\\\\c\\nd"}'


def every_rule(verdict: str = "rollback") -> CanaryOutcome:
    """A report with all four rules, each with an interval: the most series a canary name has (22)."""
    rep = report(verdict)
    for metric in ("dislike_rate_ratio", "p95_latency_ratio", "p95_latency_ms", "faithfulness"):
        rep.metrics[metric] = MetricBlock(
            value=1 / 3,
            ci=[1 / 7, 1 / 9],
            op="<=",
            threshold=1.5,
            decision="fail",
            reason="r",
            treatment=2 / 3,
            control=1 / 9,
            n={"treatment": 100, "control": 100},
        )
    return CanaryOutcome(rep, ExitCode.GATE_FAILED)


def finish_in_turn(registry: Registry, specs: list[AnalysisSpec]) -> None:
    """One analysis per spec, each finished before the next starts (so they finish in this order)."""
    for spec in specs:
        registry.start(spec)
        deadline = time.monotonic() + 10
        while registry.running():
            assert time.monotonic() < deadline, "an analysis still running"
            time.sleep(0.0005)


def shown_names(text: str) -> list[str]:
    return [line.split('"')[1] for line in text.splitlines() if line.startswith("ragjudge_canary_analysis_seconds{")]


def test_metrics_stay_bounded_at_the_name_limit(tmp_path: Path) -> None:
    # serve.max_names (1000) names, each as long as a name and a namespace may be, with every rule: 8.2 MB
    # before (924 kB with 11-character names and one rule). A scrape needs the canaries rolling out now.
    config = small_config(tmp_path)
    names = [f"{i:04d}".ljust(253, "n") for i in range(1000)]
    with running_service(config, runner=lambda request: every_rule()) as svc:
        finish_in_turn(svc.registry, [AnalysisSpec(name, "s" * 253) for name in names])
        assert len(svc.registry.names()) == 1000
        text = requests.get(f"{svc.url}/metrics", timeout=5).text
    assert len(text.encode("utf-8")) < 420_000
    assert (config.serve.max_names, config.serve.metrics_names) == (1000, 50)  # the defaults
    # The 50 names whose analyses finished last, each with all its series.
    assert shown_names(text) == names[950:]
    assert sum(line.startswith("ragjudge_canary_") for line in text.splitlines()) == 50 * 22 + 1


def test_metrics_show_the_names_that_finished_last(tmp_path: Path) -> None:
    with running_service(small_config(tmp_path, metrics_names=2), runner=lambda request: every_rule()) as svc:
        finish_in_turn(svc.registry, [AnalysisSpec(name, "prod") for name in ("a", "b", "c")])
        first = requests.get(f"{svc.url}/metrics", timeout=5).text
        # `a` analysed again finishes last: it is shown again, with every request it was sent; `b` goes.
        finish_in_turn(svc.registry, [AnalysisSpec("a", "prod")])
        second = requests.get(f"{svc.url}/metrics", timeout=5).text
    assert (shown_names(first), shown_names(second)) == (["b", "c"], ["a", "c"])
    assert 'name="b"' not in second
    assert 'ragjudge_canary_requests_total{name="a",arm="treatment"} 120' in second
