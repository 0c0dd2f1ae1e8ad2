"""The real Prometheus (Debian's package) scrapes `ragjudge serve`'s /metrics, and PromQL reads the
verdict: what Flagger's and Argo's own Prometheus providers would query. Skipped only when the
prometheus binary is not installed (CI installs it)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.canary.files import write_feedback
from tests.fakes.cluster import Cluster, standard_arms
from tests.fakes.prometheus import PROMETHEUS, SKIP_REASON, prometheus_scraping
from tests.serve.service import Service, running_service, serve_config

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)
WITHIN_S = 30.0


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, Any]]]:
    """ragjudge serve with two finished analyses: good (promote) and slow (rollback)."""
    tmp = tmp_path_factory.mktemp("serve")
    with Cluster(standard_arms()) as cluster:
        feedback = write_feedback(tmp / "feedback.json", (150, 5000), (150, 5000))
        with running_service(serve_config(tmp, cluster.url, feedback)) as svc:
            views = {}
            for name in ("good", "slow"):
                assert svc.post("/v1/analyses", {"name": name, "namespace": "prod"}).status_code == 202
            for name in ("good", "slow"):
                views[name] = svc.wait_done(name)
            yield svc, views


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory, analysed: tuple[Service, dict[str, Any]]) -> Iterator[str]:
    service, _ = analysed
    root = tmp_path_factory.mktemp("prometheus")
    with prometheus_scraping(root, service.url.removeprefix("http://")) as running:
        yield running.url


def query(url: str, promql: str) -> list[dict[str, Any]]:
    """The query's result once it has one (bounded: Prometheus scrapes every second)."""
    deadline = time.monotonic() + WITHIN_S
    while time.monotonic() < deadline:
        try:
            reply = requests.get(f"{url}/api/v1/query", params={"query": promql}, timeout=2).json()
            if reply.get("status") == "success" and reply["data"]["result"]:
                result: list[dict[str, Any]] = reply["data"]["result"]
                return result
        except (requests.RequestException, ValueError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"no result for {promql} after {WITHIN_S:g} s")


def test_promql_reads_the_verdicts(prometheus: str, analysed: tuple[Service, dict[str, Any]]) -> None:
    result = query(prometheus, "ragjudge_canary_verdict == 1")
    verdicts = sorted((r["metric"]["name"], r["metric"]["namespace"], r["metric"]["verdict"]) for r in result)
    assert verdicts == [("good", "prod", "promote"), ("slow", "prod", "rollback")]
    # The query a Flagger MetricTemplate or an Argo prometheus metric would gate on.
    gate = query(prometheus, 'sum(ragjudge_canary_verdict{name="slow",verdict="rollback"})')
    assert gate[0]["value"][1] == "1"


def test_promql_reads_the_intervals(prometheus: str, analysed: tuple[Service, dict[str, Any]]) -> None:
    _, views = analysed
    metric = views["slow"]["metrics"]["p95_latency_ratio"]
    for series, expected in (
        ("ragjudge_canary_metric", metric["value"]),
        ("ragjudge_canary_metric_ci_low", metric["ci"][0]),
    ):
        result = query(prometheus, f'{series}{{name="slow",metric="p95_latency_ratio",arm="treatment"}}')
        assert float(result[0]["value"][1]) == pytest.approx(expected)
    requests_total = query(prometheus, 'ragjudge_canary_requests_total{name="good"}')
    assert sorted((r["metric"]["arm"], r["value"][1]) for r in requests_total) == [
        ("control", "120"),
        ("treatment", "120"),
    ]
