"""Test plumbing for `ragjudge serve`: the service in a thread on a free loopback port, and the example
manifests. The "cluster" arms it analyses, reached by their Kubernetes service names, are
`tests.fakes.cluster.Cluster`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml

from ragjudge.canary.release import CanaryOutcome
from ragjudge.canary.report import ArmBlock, ArmsBlock, CanaryReport, MetricBlock
from ragjudge.canary.thresholds import DISLIKE_RATE_RATIO, parse_canary_rules
from ragjudge.config.loader import load_config
from ragjudge.config.model import Config
from ragjudge.errors import ExitCode
from ragjudge.serve.analyses import Registry, Runner
from ragjudge.serve.server import ServeServer, serve_until_stopped
from tests.canary.files import write_config, write_sample
from tests.fakes.cluster import loopback_dns

DEPLOY = Path(__file__).resolve().parents[2] / "examples" / "deploy"
SAMPLE = 120
SAMPLE_SIZE = 100  # examples/deploy/flagger-canary.yaml's metadata.sample_size


RAGJUDGE_URL = "http://ragjudge.ragjudge.svc.cluster.local:8787"
"""Where the example manifests reach ragjudge serve (examples/deploy/ragjudge-serve.yaml's Service)."""


def resolver(service_url: str, cluster_url: str) -> Callable[[str], str]:
    """Cluster URLs to loopback: the ragjudge Service to the running service, others to the cluster stand-in."""

    def resolve(url: str) -> str:
        if url.startswith(RAGJUDGE_URL):
            return service_url + url.removeprefix(RAGJUDGE_URL)
        return loopback_dns(url, cluster_url)

    return resolve


def manifests(name: str) -> list[dict[str, Any]]:
    with (DEPLOY / name).open(encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def manifest(name: str, kind: str, object_name: str | None = None) -> dict[str, Any]:
    for doc in manifests(name):
        if doc["kind"] == kind and (object_name is None or doc["metadata"]["name"] == object_name):
            return doc
    raise AssertionError(f"no {kind} {object_name or ''} in {name}")


def example_config() -> dict[str, Any]:
    """The ragjudge.yml in examples/deploy/ragjudge-serve.yaml's ConfigMap."""
    data: dict[str, Any] = yaml.safe_load(manifest("ragjudge-serve.yaml", "ConfigMap")["data"]["ragjudge.yml"])
    return data


def serve_config(
    tmp: Path, cluster_url: str, feedback: Path | None = None, *, rules: dict[str, str] | None = None, **serve: Any
) -> Config:
    """A small config for the serve tests, with the example ConfigMap's arm URL templates."""
    templates = example_config()["canary"]
    canary: dict[str, Any] = {
        "sample": str(write_sample(tmp / "sample.yaml", SAMPLE)),
        "treatment": loopback_dns(templates["treatment"], cluster_url),
        "control": loopback_dns(templates["control"], cluster_url),
        "rules": rules or {"dislike_rate_ratio": "<= 1.5", "p95_latency_ratio": "<= 1.5", "faithfulness": ">= 0.95"},
        "min_requests": 50,
        "min_responses": 200,
        "bootstrap": 200,
    }
    if feedback is not None:
        canary["feedback"] = {"file": str(feedback)}
    path = write_config(tmp / "ragjudge.yml", canary, serve={"reanalyse_s": 300, **serve})
    return load_config(path)


@dataclass
class Service:
    url: str
    registry: Registry
    token: str | None
    log: list[dict[str, Any]] = field(default_factory=list)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> requests.Response:
        return requests.post(
            f"{self.url}{path}",
            data=body if isinstance(body, bytes | str) else json.dumps(body),
            headers={"Content-Type": "application/json", **self.headers(), **(headers or {})},
            timeout=10,
        )

    def get(self, path: str, headers: dict[str, str] | None = None) -> requests.Response:
        return requests.get(f"{self.url}{path}", headers={**self.headers(), **(headers or {})}, timeout=10)

    def wait_done(self, name: str, within_s: float = 60.0) -> dict[str, Any]:
        """The analysis once it is no longer running (bounded)."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            reply = self.get(f"/v1/analyses/{name}")
            if reply.status_code == 200 and reply.json()["status"] != "running":
                data: dict[str, Any] = reply.json()
                return data
            time.sleep(0.1)
        raise AssertionError(f"the analysis of {name} was still running after {within_s:g} s")


@contextmanager
def running_service(config: Config, token: str | None = None, runner: Runner | None = None) -> Iterator[Service]:
    """`ragjudge serve` in a thread (the same server and registry the command builds)."""
    log: list[dict[str, Any]] = []
    needs_arms = (
        any(r.metric != DISLIKE_RATE_RATIO for r in parse_canary_rules(config.canary.rules)) if config.canary else True
    )
    kwargs: dict[str, Any] = {"runner": runner} if runner is not None else {}
    registry = Registry(config, needs_arms=needs_arms, log=log.append, **kwargs)
    server = ServeServer(("127.0.0.1", 0), registry, token, log=log.append)
    stop = threading.Event()
    thread = threading.Thread(target=serve_until_stopped, args=(server, stop), daemon=True)
    thread.start()
    try:
        yield Service(server.url, registry, token, log)
    finally:
        stop.set()
        thread.join(timeout=5)


def arm(requests_sent: int) -> ArmBlock:
    return ArmBlock(
        url="http://arm/ask",
        requests=requests_sent,
        ok=requests_sent,
        errors=0,
        error_examples=[],
        p50_latency_ms=10.0,
        p95_latency_ms=20.0,
        faithfulness=1.0,
        scored=requests_sent,
        unscored=0,
        dislikes=None,
        responses=None,
        dislike_rate=None,
    )


def report(verdict: str = "promote", reasons: list[str] | None = None) -> CanaryReport:
    """A canary report as `ragjudge canary` writes it, with fixed figures."""
    decision = {"promote": "pass", "rollback": "fail", "inconclusive": "inconclusive"}[verdict]
    return CanaryReport(
        verdict=verdict,  # type: ignore[arg-type]
        reasons=reasons if reasons is not None else [f"p95 latency: {verdict}"],
        metrics={
            "p95_latency_ratio": MetricBlock(
                value=0.5,
                ci=[0.25, None],
                op="<=",
                threshold=1.5,
                decision=decision,  # type: ignore[arg-type]
                reason=f"p95 latency: {verdict}",
                treatment=20.0,
                control=40.0,
                n={"treatment": 60, "control": 60},
            )
        },
        arms=ArmsBlock(treatment=arm(60), control=arm(60)),
        decision="statistical",
        confidence=0.95,
    )


def small_config(tmp: Path, **serve: Any) -> Config:
    """A config whose arm URLs are never called (the analyses are stand-ins)."""
    canary = {
        "sample": str(write_sample(tmp / "sample.yaml", 3)),
        "treatment": "http://{name}-canary.{namespace}.example/ask",
        "control": "http://{name}-primary.{namespace}.example/ask",
        "rules": {"p95_latency_ratio": "<= 1.5"},
    }
    return load_config(write_config(tmp / "ragjudge.yml", canary, serve=serve))


class Held:
    """Analyses that stay running until `release()`; then each returns `outcome`."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.outcome = CanaryOutcome(report(), ExitCode.PASSED)
        self.requests: list[Any] = []

    def runner(self, request: Any) -> CanaryOutcome:
        self.requests.append(request)
        self.event.wait(timeout=30)
        return self.outcome

    def release(self) -> None:
        self.event.set()
