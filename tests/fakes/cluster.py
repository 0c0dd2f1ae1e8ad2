"""The "cluster" the `ragjudge serve` tests analyse canaries in: the arms behind their Kubernetes service
names, and the per-canary feedback source.

Cluster DNS is stood in for by one loopback server: `http://<service>.<namespace>.svc.cluster.local/ask`
becomes `http://127.0.0.1:PORT/<service>.<namespace>/ask` (`loopback_dns`), so the URL templates of the
example config and manifests are used as written.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from tests.fakes._http import Incoming, LoopbackServer, Outgoing
from tests.fakes.arms import faithful_reply

CLUSTER_URL = re.compile(r"^http://([^/:]+?)\.svc\.cluster\.local(?::\d+)?(/.*)?$")
# The cluster's arms. See tests/commands/test_canary.py: a healthy canary is clearly faster than the stable
# version (on a busy 2-core machine, jitter alone can stretch a p95 interval past 1.5 when the arms are close).
CANARY_DELAY_S = 0.01
STABLE_DELAY_S = 0.12
SLOW_DELAY_S = 0.5


def loopback_dns(url: str, base: str) -> str:
    """`http://svc.ns.svc.cluster.local[:port]/path` -> `{base}/svc.ns/path`; other URLs unchanged."""
    match = CLUSTER_URL.match(url)
    if match is None:
        return url
    return f"{base}/{match.group(1)}{match.group(2) or ''}"


@dataclass(frozen=True)
class Arm:
    delay_s: float
    reply: dict[str, Any]


class Cluster(LoopbackServer):
    """The canaries' services: `/<service>.<namespace>/ask` answers as `arms[service]` says; every
    request's path is recorded. Unknown services answer 503, like a Service without endpoints."""

    def __init__(self, arms: dict[str, Arm]) -> None:
        super().__init__()
        self.arms = arms
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def handle(self, req: Incoming) -> Outgoing:
        with self.lock:
            self.paths.append(req.path)
        service = req.path.strip("/").split("/")[0].split(".")[0]
        arm = self.arms.get(service)
        if arm is None:
            return Outgoing(503, "no endpoints")
        if arm.delay_s:
            time.sleep(arm.delay_s)
        return Outgoing(200, arm.reply)

    def count(self, path: str) -> int:
        with self.lock:
            return self.paths.count(path)


def standard_arms() -> dict[str, Arm]:
    """Canaries as Flagger (and Argo) name their services: good and disliked (faster), slow."""
    fast, stable = Arm(CANARY_DELAY_S, faithful_reply()), Arm(STABLE_DELAY_S, faithful_reply())
    arms: dict[str, Arm] = {}
    for name, canary in (
        ("good", fast),
        ("slow", Arm(SLOW_DELAY_S, faithful_reply())),
        ("disliked", fast),
    ):
        arms[f"{name}-canary"] = canary
        arms[f"{name}-primary"] = stable
        arms[f"{name}-stable"] = stable  # Argo Rollouts' name for the stable service
    return arms


class FeedbackServer(LoopbackServer):
    """Feedback counts JSON per canary at `/<name>.json` (the `feedback_url` source)."""

    def __init__(self, counts: dict[str, tuple[tuple[int, int], tuple[int, int]]]) -> None:
        super().__init__()
        self.counts = counts

    def handle(self, req: Incoming) -> Outgoing:
        name = req.path.strip("/").removesuffix(".json")
        if name not in self.counts:
            return Outgoing(404, {"error": "unknown"})
        (td, tr), (cd, cr) = self.counts[name]
        return Outgoing(
            200,
            {"treatment": {"dislikes": td, "responses": tr}, "control": {"dislikes": cd, "responses": cr}},
        )
