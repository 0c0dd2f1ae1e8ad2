"""The Prometheus feedback source against a real Prometheus server.

The tests start their own `prometheus` (Debian's package) on a free loopback port, scraping every
second a small exporter they run, which exposes dislike and response counters per arm and pod.
Once the counters are queryable, `ragjudge canary` runs against it. Skipped only when the
prometheus binary is not installed (CI installs it).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from ragjudge.cli import main
from tests.canary.files import read_report, write_config, write_sample
from tests.fakes._http import Incoming, LoopbackServer, Outgoing
from tests.fakes.arms import ArmServer
from tests.fakes.prometheus import PROMETHEUS, SKIP_REASON, prometheus_scraping
from tests.fakes.rag import closed_port_url

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)
READY_WITHIN_S = 30.0

# (arm, pod) -> (dislikes, responses). The "treatment" and "control" arms are split over two pods,
# so the source must sum the series; "good" and "stable" are a healthy pair with more traffic.
COUNTERS: dict[tuple[str, str], tuple[int, int]] = {
    ("treatment", "a"): (70, 1200),
    ("treatment", "b"): (50, 800),
    ("control", "a"): (30, 1000),
    ("control", "b"): (30, 1000),
    ("good", "a"): (150, 5000),
    ("stable", "a"): (150, 5000),
}


class Exporter(LoopbackServer):
    """Prometheus text exposition format at /metrics."""

    def handle(self, req: Incoming) -> Outgoing:
        if req.path != "/metrics":
            return Outgoing(404, "not found")
        lines = ["# HELP ragjudge_dislikes_total Thumbs-down answers.", "# TYPE ragjudge_dislikes_total counter"]
        lines += [f'ragjudge_dislikes_total{{arm="{a}",pod="{p}"}} {d}' for (a, p), (d, _) in COUNTERS.items()]
        lines += ["# HELP ragjudge_responses_total Rated answers.", "# TYPE ragjudge_responses_total counter"]
        lines += [f'ragjudge_responses_total{{arm="{a}",pod="{p}"}} {n}' for (a, p), (_, n) in COUNTERS.items()]
        return Outgoing(200, "\n".join(lines) + "\n", {"Content-Type": "text/plain; version=0.0.4"})


@dataclass
class Prometheus:
    url: str
    log: Path


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    root = tmp_path_factory.mktemp("prometheus")
    with Exporter() as exporter, prometheus_scraping(root, exporter.url.removeprefix("http://")) as running:
        _wait_for_counters(running.url, running.process, running.log)
        yield Prometheus(running.url, running.log)


def _wait_for_counters(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until every exported series has been scraped (bounded)."""
    deadline = time.monotonic() + READY_WITHIN_S
    expected = 2 * len(COUNTERS)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"prometheus exited with {process.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
        try:
            reply = requests.get(f"{url}/api/v1/query", params={"query": 'count({__name__=~"ragjudge_.*"})'}, timeout=2)
            result = reply.json()["data"]["result"]
            if result and int(float(result[0]["value"][1])) == expected:
                return
        except (requests.RequestException, ValueError, KeyError):
            pass
        time.sleep(0.2)
    pytest.fail(f"prometheus had not scraped the exporter after {READY_WITHIN_S:g} s:\n{log.read_text()[-2000:]}")


def queries(treatment: str = "treatment", control: str = "control") -> dict[str, str]:
    """The four PromQL queries for two arms, without sum(): the source sums the series."""
    return {
        "treatment_dislikes": f'ragjudge_dislikes_total{{arm="{treatment}"}}',
        "treatment_responses": f'ragjudge_responses_total{{arm="{treatment}"}}',
        "control_dislikes": f'ragjudge_dislikes_total{{arm="{control}"}}',
        "control_responses": f'ragjudge_responses_total{{arm="{control}"}}',
    }


def run_canary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prometheus_url: str, promql: dict[str, str], **canary: Any
) -> tuple[int, str, dict[str, Any] | None]:
    settings: dict[str, Any] = {"rules": {"dislike_rate_ratio": "<= 1.5"}, **canary}
    settings["feedback"] = {"prometheus": {"url": prometheus_url, **promql}}
    config = write_config(tmp_path / "ragjudge.yml", settings)
    report = tmp_path / "report.json"
    code = main(["canary", "--config", str(config), "--report", str(report), "--comment-file", str(tmp_path / "c.md")])
    captured = capsys.readouterr()
    return code, captured.out + captured.err, read_report(report) if report.exists() else None


def test_more_dislikes_in_prometheus_rolls_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prometheus: Prometheus
) -> None:
    code, output, report = run_canary(tmp_path, capsys, prometheus.url, queries())
    assert code == 1, output
    assert report is not None
    assert (report["arms"]["treatment"]["dislikes"], report["arms"]["treatment"]["responses"]) == (120, 2000)
    assert (report["arms"]["control"]["dislikes"], report["arms"]["control"]["responses"]) == (60, 2000)
    assert report["feedback_source"] == f"prometheus {prometheus.url}"
    assert report["metrics"]["dislike_rate_ratio"]["reason"] == (
        "dislike rate 6.0% vs 3.0% (ratio 2.00, 95% CI 1.48–2.71) exceeds 1.5x control"
    )


def test_healthy_canary_with_prometheus_feedback_is_promoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prometheus: Prometheus
) -> None:
    # The whole command: feedback from Prometheus, the sample against two loopback arms. The control is
    # far slower: one stall of the test process or the machine lengthens every call in flight at once, and
    # with 80 ms against 20 ms that was enough to make the treatment's p95 interval reach 1.5x (seen once
    # in CI: inconclusive, 95% CI 0.14-1.88).
    with ArmServer("treatment", delay_s=0.02) as t, ArmServer("control", delay_s=0.25) as c:
        sample = write_sample(tmp_path / "sample.yaml", 100)
        canary = {
            "sample": str(sample),
            "treatment": t.ask_url,
            "control": c.ask_url,
            "rules": {"dislike_rate_ratio": "<= 1.5", "p95_latency_ratio": "<= 1.5", "faithfulness": ">= 0.95"},
        }
        code, output, report = run_canary(tmp_path, capsys, prometheus.url, queries("good", "stable"), **canary)
    assert code == 0, output
    assert report is not None
    assert report["verdict"] == "promote"
    assert report["metrics"]["dislike_rate_ratio"]["n"] == {"treatment": 5000, "control": 5000}


def test_query_returning_nothing_is_inconclusive_with_the_query_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prometheus: Prometheus
) -> None:
    promql = {**queries(), "treatment_responses": 'ragjudge_responses_total{arm="no-such-arm"}'}
    code, output, report = run_canary(tmp_path, capsys, prometheus.url, promql)
    assert code == 4, output
    assert report is not None
    assert report["verdict"] == "inconclusive"
    reason = report["metrics"]["dislike_rate_ratio"]["reason"]
    assert reason.startswith("dislike rate: no feedback counts for the treatment (no treatment counts: ")
    assert 'treatment_responses `ragjudge_responses_total{arm="no-such-arm"}`' in reason
    assert 'end the query with "or vector(0)"' in reason
    assert report["reasons"] == [reason]
    assert report["arms"]["control"]["dislikes"] == 60  # the other arm's counts are still reported


def test_or_vector_zero_turns_no_series_into_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prometheus: Prometheus
) -> None:
    promql = {
        **queries("good", "stable"),
        "treatment_dislikes": 'sum(ragjudge_dislikes_total{arm="no-dislikes-yet"}) or vector(0)',
    }
    code, output, report = run_canary(tmp_path, capsys, prometheus.url, promql)
    assert code == 0, output
    assert report is not None
    assert report["arms"]["treatment"]["dislikes"] == 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"treatment_dislikes": "sum(ragjudge_dislikes_total{"}, "Prometheus rejected the query: bad_data"),
        (
            {"treatment_dislikes": '-1 * sum(ragjudge_dislikes_total{arm="treatment"})'},
            "treatment: dislikes is negative (-120)",
        ),
        (
            {"control_dislikes": 'sum(ragjudge_responses_total{arm="control"}) + 1'},
            "control: 2001 dislikes out of 2000 responses (dislikes cannot exceed responses)",
        ),
        (
            {"control_responses": 'ragjudge_responses_total{arm="control"}[1m]'},
            "returned a matrix, not an instant vector",
        ),
    ],
)
def test_bad_prometheus_feedback_exits_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    prometheus: Prometheus,
    override: dict[str, str],
    message: str,
) -> None:
    code, output, report = run_canary(tmp_path, capsys, prometheus.url, {**queries(), **override})
    assert code == 2, output
    assert message in output
    assert f"prometheus {prometheus.url}" in output
    assert report is None


def test_prometheus_unreachable_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = closed_port_url().removesuffix("/ask")
    code, output, report = run_canary(tmp_path, capsys, dead, queries())
    assert code == 3
    assert "cannot reach Prometheus (ConnectionError)" in output
    assert report is None
