"""`GET /metrics`: the exposition text for known results, exactly."""

from __future__ import annotations

import math
from pathlib import Path

import requests

from ragjudge.canary.release import CanaryOutcome
from ragjudge.canary.report import MetricBlock
from ragjudge.errors import ExitCode
from ragjudge.serve.exposition import _labels, metric_series
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
