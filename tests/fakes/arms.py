"""Loopback stand-ins for what a canary analysis calls: RAG arms that are slow or unfaithful on purpose
(one server each, recording the order requests arrive in, or a "cluster" of them behind Kubernetes
service names), the bundled example service as an arm, and a feedback source.

Cluster DNS is stood in for by one loopback server: `http://<service>.<namespace>.svc.cluster.local/ask`
becomes `http://127.0.0.1:PORT/<service>.<namespace>/ask` (`loopback_dns`), so the URL templates of the
example config and manifests are used as written.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

from ragjudge.examples.rag_service import RagHandler, make_server

from tests.fakes._http import Incoming, LoopbackServer, Outgoing
from tests.fakes.rag import answer

PASSAGE = "Refunds are issued within 3 business days after the returned item is inspected."
UNSUPPORTED = "Every customer also receives a free flight to the moon with each order."
CLUSTER_URL = re.compile(r"^http://([^/:]+?)\.svc\.cluster\.local(?::\d+)?(/.*)?$")
# The cluster's arms. See tests/commands/test_canary.py: a healthy canary is clearly faster than the stable
# version (on a busy 2-core machine, jitter alone can stretch a p95 interval past 1.5 when the arms are close).
CANARY_DELAY_S = 0.01
STABLE_DELAY_S = 0.12
SLOW_DELAY_S = 0.5


def faithful_reply() -> dict[str, Any]:
    """An answer the offline judge fully supports (faithfulness 1.0)."""
    return answer(PASSAGE, ["doc-refund"], {"doc-refund": PASSAGE})


def unfaithful_reply() -> dict[str, Any]:
    """One supported and one unsupported sentence (faithfulness 0.5)."""
    return answer(f"{PASSAGE} {UNSUPPORTED}", ["doc-refund"], {"doc-refund": PASSAGE})


class ArmServer(LoopbackServer):
    """A RAG arm answering every question alike, after `delay_s`; records which questions it saw, in order.

    `journal` (shared between arms) records `(name, question)` as requests arrive.
    """

    def __init__(
        self,
        name: str,
        reply: dict[str, Any] | None = None,
        delay_s: float = 0.0,
        journal: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.reply = reply if reply is not None else faithful_reply()
        self.delay_s = delay_s
        self.journal = journal if journal is not None else []
        self.lock = threading.Lock()

    def handle(self, req: Incoming) -> Outgoing:
        body = req.json() or {}
        with self.lock:
            self.journal.append((self.name, str(body.get("question"))))
        if self.delay_s:
            time.sleep(self.delay_s)
        return Outgoing(200, self.reply)

    @property
    def ask_url(self) -> str:
        return f"{self.url}/ask"


@contextmanager
def example_service(delay_s: float = 0.0) -> Iterator[str]:
    """The bundled example RAG service on a free port, optionally `delay_s` slower per request."""
    server: ThreadingHTTPServer = make_server()
    if delay_s:

        class Slow(RagHandler):
            def do_POST(self) -> None:
                time.sleep(delay_s)
                super().do_POST()

        server.RequestHandlerClass = Slow
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host!s}:{port}/ask"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


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
