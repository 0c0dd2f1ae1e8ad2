"""Caller-named URLs: only allowed hosts are called, and the configured credentials stay on their own origin.

Two kinds of loopback server: "home" (the configured arms and feedback service) and an "attacker" that
records every request it gets. The attacker is reached as `localhost` (a host not allowed) or as
127.0.0.1 on its own port (an allowed host, another origin).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragjudge.config.model import Config, load_config
from ragjudge.errors import ConfigError, ExitCode
from tests.canary.files import write_config, write_sample
from tests.fakes._http import Incoming, LoopbackServer, Outgoing
from tests.fakes.arms import faithful_reply
from tests.serve.service import Service, running_service

ENDPOINT_SECRET = "Bearer endpoint-secret-5e1f"
FEEDBACK_SECRET = "Bearer feedback-secret-0c7a"
TOKEN = "serve-token-origins-41d2"
COUNTS = {"treatment": {"dislikes": 1, "responses": 10}, "control": {"dislikes": 1, "responses": 10}}


class Recorder(LoopbackServer):
    """Answers an arm's question or a feedback count, and records each request's path and Authorization."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str | None]] = []
        self.lock = threading.Lock()

    def handle(self, req: Incoming) -> Outgoing:
        with self.lock:
            self.seen.append((req.path, req.headers.get("authorization")))
        return Outgoing(200, COUNTS if req.path.endswith(".json") else faithful_reply())

    def authorizations(self) -> list[str | None]:
        with self.lock:
            return [auth for _, auth in self.seen]


@pytest.fixture
def home() -> Iterator[Recorder]:
    with Recorder() as server:
        yield server


@pytest.fixture
def attacker() -> Iterator[Recorder]:
    with Recorder() as server:
        yield server


def config(tmp: Path, home: Recorder, rules: dict[str, str], **serve: Any) -> Config:
    canary = {
        "sample": str(write_sample(tmp / "sample.yaml", 4)),
        "treatment": f"{home.origin}/{{name}}-canary/ask",
        "control": f"{home.origin}/{{name}}-primary/ask",
        "feedback": {"url": f"{home.origin}/{{name}}.json", "headers": {"Authorization": FEEDBACK_SECRET}},
        "rules": rules,
        "min_requests": 2,
        "min_responses": 2,
    }
    endpoint = {"timeout_s": 10, "retries": 0, "concurrency": 8, "headers": {"Authorization": ENDPOINT_SECRET}}
    return load_config(write_config(tmp / "ragjudge.yml", canary, serve=serve, endpoint=endpoint))


def flagger(service: Service, hook: str, **metadata: str) -> Any:
    payload = {"name": "rag", "namespace": "prod", "checksum": "c1", "metadata": {"token": TOKEN, **metadata}}
    return service.post(f"/flagger/{hook}", payload)


LATENCY = {"p95_latency_ratio": "<= 1.5"}
DISLIKES = {"dislike_rate_ratio": "<= 1.5"}


def test_a_host_not_allowed_is_refused_before_any_request(tmp_path: Path, home: Recorder, attacker: Recorder) -> None:
    evil = f"http://localhost:{attacker.port}"
    with running_service(config(tmp_path, home, {**LATENCY, **DISLIKES}), token=TOKEN) as svc:
        reply = svc.post("/v1/analyses", {"name": "rag", "namespace": "prod", "treatment": f"{evil}/ask"})
        assert (reply.status_code, reply.json()) == (
            400,
            {
                "error": "the treatment URL's host 'localhost' is not in serve.allowed_hosts (tip: add it to "
                "serve.allowed_hosts in the config (unset, serve.allowed_hosts holds the hosts of canary.treatment, "
                "canary.control and the feedback URL))"
            },
        )
        control = svc.post("/v1/analyses", {"name": "rag", "control": f"{evil}/ask"})
        assert control.status_code == 400
        assert control.json()["error"].startswith("the control URL's host 'localhost' is not in serve.allowed_hosts")
        hook = flagger(svc, "pre-rollout", feedback_url=f"{evil}/counts.json")
        assert (hook.status_code, hook.text.split(" (tip")[0]) == (
            400,
            "the feedback_url URL's host 'localhost' is not in serve.allowed_hosts",
        )
        for field in ("treatment", "control"):
            assert flagger(svc, "pre-rollout", **{field: f"{evil}/ask"}).status_code == 400
        # A userinfo trick is refused too, whatever host a parser would pick.
        trick = svc.post("/v1/analyses", {"name": "rag", "treatment": f"http://127.0.0.1@localhost:{attacker.port}/"})
        assert trick.json()["error"].startswith("the treatment URL may not carry user@")
        assert svc.registry.names() == []
    assert attacker.seen == []
    assert home.seen == []


def test_an_allowed_host_on_another_origin_gets_no_configured_headers(
    tmp_path: Path, home: Recorder, attacker: Recorder
) -> None:
    # 127.0.0.1 is allowed (it is the configured arms' host), but the attacker's port is another origin.
    with running_service(config(tmp_path, home, LATENCY), token=TOKEN) as svc:
        body = {"name": "rag", "namespace": "prod", "treatment": f"{attacker.origin}/ask"}
        assert svc.post("/v1/analyses", body).status_code == 202
        svc.wait_done("rag")
    assert len(attacker.seen) == 4
    assert attacker.authorizations() == [None] * 4
    # The configured control arm still gets its header.
    assert [auth for path, auth in home.seen if path == "/rag-primary/ask"] == [ENDPOINT_SECRET] * 4


def test_a_feedback_url_on_another_origin_gets_no_feedback_token(
    tmp_path: Path, home: Recorder, attacker: Recorder
) -> None:
    with running_service(config(tmp_path, home, DISLIKES), token=TOKEN) as svc:
        assert flagger(svc, "pre-rollout", feedback_url=f"{attacker.origin}/rag.json").status_code == 200
        svc.wait_done("rag")
        # The configured feedback origin, named by the caller: the token goes there, as configured.
        svc.post("/v1/analyses", {"name": "other", "namespace": "prod"})
        svc.wait_done("other")
    assert attacker.seen == [("/rag.json", None)]
    assert home.seen == [("/other.json", FEEDBACK_SECRET)]


def test_allowed_hosts_names_the_hosts_callers_may_use(tmp_path: Path, home: Recorder, attacker: Recorder) -> None:
    # An explicit list replaces the default: here only `localhost` (any port), for the canary named "rag".
    cfg = config(tmp_path, home, LATENCY, allowed_hosts=["localhost", "{name}.example"])
    with running_service(cfg, token=TOKEN) as svc:
        refused = svc.post("/v1/analyses", {"name": "rag", "treatment": f"{home.origin}/rag-canary/ask"})
        assert refused.json()["error"].startswith("the treatment URL's host '127.0.0.1' is not in serve.allowed_hosts")
        other = svc.post("/v1/analyses", {"name": "rag", "treatment": "http://other.example/ask"})
        assert other.json()["error"].startswith("the treatment URL's host 'other.example' is not in")
        body = {"name": "rag", "treatment": f"http://localhost:{attacker.port}/ask"}
        assert svc.post("/v1/analyses", body).status_code == 202
        svc.wait_done("rag")
    assert attacker.authorizations() == [None] * 4


@pytest.mark.parametrize("entry", ["rag:8080", "http://rag/", "a b", "user@rag"])
def test_an_allowed_host_with_a_port_scheme_or_path_is_a_config_error(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "ragjudge.yml"
    path.write_text(f"serve:\n  allowed_hosts: ['{entry}']\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.exit_code == ExitCode.BAD_INPUT
    assert caught.value.message == (
        f"{path}: serve.allowed_hosts: {entry!r} is not a host name without a port "
        "(give e.g. rag.prod.svc or *.svc.cluster.local)"
    )
