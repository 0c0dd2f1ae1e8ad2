"""Caller-named URLs: only allowed hosts are called, and the configured credentials stay on their own origin.

Two kinds of loopback server: "home" (the configured arms and feedback service) and an "attacker" that
records every request it gets. The attacker is reached as `localhost` (a host not allowed) or as
127.0.0.1 on its own port (an allowed host, another origin).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragjudge.canary.release import CanaryOutcome, CanaryRequest, run_canary
from ragjudge.config.loader import load_config
from ragjudge.config.model import Config
from ragjudge.errors import ConfigError, ExitCode
from ragjudge.serve.analyses import canary_request
from ragjudge.serve.origins import check_named_urls
from ragjudge.serve.state import AnalysisSpec
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


PROM_QUERIES = ("treatment_dislikes", "treatment_responses", "control_dislikes", "control_responses")
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


# ---------------------------------------------------------------- template syntax in a caller's URL (issue 27, 1)

SPIN = "{%for(a)in(range(99999))%}{%for(b)in(range(99999))%}{%endfor%}{%endfor%}"
"""Ten billion loop turns that output nothing: rendered, it spun a core without end."""
SPIN_SENT = "%7B%25for(a)in(range(99999))%25%7D%7B%25for(b)in(range(99999))%25%7D%7B%25endfor%25%7D%7B%25endfor%25%7D"
"""SPIN as urllib3 sends it in a path: the braces and `%` percent-encoded, nothing rendered."""
# To a check of the raw text each names host 127.0.0.1; rendered as a template, the first two became
# `http://127.0.0.1:@127.0.0.2:P/x`, which urllib3 sends to 127.0.0.2 with the arm's headers.
TRICKS = {
    "comment": "http://127.0.0.1:{{#/#}}@127.0.0.2:{decoy}/x",
    "if-block": "http://127.0.0.1:{{%if(0)%}}/{{%endif%}}@127.0.0.2:{decoy}/x",
}
ATTACKS = {**TRICKS, "spin": "http://127.0.0.1/" + SPIN.replace("{", "{{").replace("}", "}}")}


class Decoy(Recorder):
    """Another host on this machine (127.0.0.2): where a trick URL would take the endpoint's credentials."""

    bind_host = "127.0.0.2"


@pytest.fixture
def decoy() -> Iterator[Decoy]:
    with Decoy() as server:
        yield server


def portless_config(tmp: Path, control: str = "http://127.0.0.1/c/{name}") -> Config:
    """The arms port-less, as in-cluster Service URLs are, and a token in `endpoint.headers`."""
    canary = {
        "sample": str(write_sample(tmp / "sample.yaml", 3)),
        "treatment": "http://127.0.0.1/t/{name}",
        "control": control,
        "rules": LATENCY,
        "min_requests": 2,
    }
    endpoint = {"timeout_s": 5, "retries": 0, "concurrency": 4, "headers": {"Authorization": ENDPOINT_SECRET}}
    return load_config(write_config(tmp / "ragjudge.yml", canary, endpoint=endpoint))


def template_refused(field: str, configured: str) -> str:
    return (
        f"the {field} URL holds template syntax ({{{{, {{% or {{#): a URL a caller names is sent as written, never "
        f"rendered (tip: send the URL itself; one that varies per canary belongs in {configured} in the config "
        "(it may use {name} and {namespace}))"
    )


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_template_syntax_in_a_caller_url_is_refused_and_reaches_no_other_host(
    tmp_path: Path, decoy: Decoy, attack: str
) -> None:
    url = attack.format(decoy=decoy.port)
    with running_service(portless_config(tmp_path), token=TOKEN) as svc:
        started = time.monotonic()
        reply = svc.post("/v1/analyses", {"name": "rag", "namespace": "prod", "treatment": url})
        answered_s = time.monotonic() - started
        assert (reply.status_code, reply.json()) == (400, {"error": template_refused("treatment", "canary.treatment")})
        assert answered_s < 1
        # Nothing started, so nothing renders, spins or calls out.
        assert (svc.registry.names(), svc.registry.alive_threads()) == ([], 0)
    assert decoy.seen == []


def test_template_syntax_in_a_webhooks_urls_is_refused(tmp_path: Path, decoy: Decoy) -> None:
    url = TRICKS["comment"].format(decoy=decoy.port)
    with running_service(portless_config(tmp_path), token=TOKEN) as svc:
        for field, configured in (("control", "canary.control"), ("feedback_url", "canary.feedback.url")):
            reply = flagger(svc, "pre-rollout", **{field: url})
            assert (reply.status_code, reply.text) == (400, template_refused(field, configured))
        assert svc.registry.names() == []
    assert decoy.seen == []


def run_in_time(request: CanaryRequest, within_s: float) -> CanaryOutcome:
    """`run_canary(request)`, which must end within `within_s` (a daemon thread: a spin cannot hang the tests)."""
    outcome: list[CanaryOutcome] = []
    thread = threading.Thread(target=lambda: outcome.append(run_canary(request)), daemon=True)
    thread.start()
    thread.join(timeout=within_s)
    assert not thread.is_alive(), f"the analysis was still running after {within_s:g} s"
    return outcome[0]


@pytest.mark.parametrize("trick", TRICKS.values(), ids=TRICKS.keys())
def test_past_the_check_a_trick_url_is_sent_as_written_so_nowhere(
    tmp_path: Path, home: Recorder, decoy: Decoy, trick: str
) -> None:
    # The second wall on its own: the request serve builds for a caller's URL never renders it. As written,
    # urllib3 cannot read the trick URLs' port, so nothing is sent at all.
    config = portless_config(tmp_path, control=f"{home.origin}/c/{{name}}")
    request = canary_request(config, AnalysisSpec("rag", "prod", treatment=trick.format(decoy=decoy.port)))
    treatment = run_in_time(request, within_s=5).report.arms.treatment
    assert decoy.seen == []
    assert (treatment.errors, treatment.error_examples) == (3, ["endpoint error: request failed: LocationParseError"])


def test_past_the_check_a_spin_url_is_sent_as_text_at_once(tmp_path: Path, home: Recorder) -> None:
    config = portless_config(tmp_path, control=f"{home.origin}/c/{{name}}")
    request = canary_request(config, AnalysisSpec("rag", "prod", treatment=f"{home.origin}/{SPIN}"))
    started = time.monotonic()
    treatment = run_in_time(request, within_s=5).report.arms.treatment
    assert time.monotonic() - started < 1
    assert treatment.errors == 0
    assert sorted(path for path, _ in home.seen if not path.startswith("/c/")) == [f"/{SPIN_SENT}"] * 3


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        # urlsplit reads no port here, so port 80: the configured arms' origin, with their headers
        ("http://127.0.0.1:8o/t/rag", "a port that is not a number"),
        ("http://127.0.0.1%2e/t/rag", "a % in the host"),
        ("http://127.0.0.1@127.0.0.2/x", "user@"),
    ],
)
def test_a_caller_url_that_clients_read_two_ways_is_refused(tmp_path: Path, url: str, problem: str) -> None:
    with running_service(portless_config(tmp_path), token=TOKEN) as svc:
        reply = svc.post("/v1/analyses", {"name": "rag", "treatment": url})
        assert (reply.status_code, reply.json()) == (
            400,
            {
                "error": f"the treatment URL may not carry {problem}: HTTP clients disagree on which host it names "
                "(tip: send a plain http(s)://host[:port]/path URL)"
            },
        )
        assert svc.registry.names() == []


# ---------------------------------------------------------------- decisions pinned (issue 27, serve/origins.py)


def refusal(tmp: Path, url: str, canary: dict[str, Any] | None = None, **serve: Any) -> str | None:
    """What check_named_urls says of `url` as canary rag/prod's treatment: None when it may be called."""
    arms = {"treatment": "http://{name}-canary.{namespace}/ask", "control": "http://{name}-primary.{namespace}/ask"}
    cfg = load_config(write_config(tmp / "ragjudge.yml", {**arms, **(canary or {})}, serve=serve))
    try:
        check_named_urls(cfg, AnalysisSpec("rag", "prod", treatment=url))
    except ConfigError as exc:
        return exc.message
    return None


def not_allowed(host: str) -> str:
    return f"the treatment URL's host {host!r} is not in serve.allowed_hosts"


def test_an_exact_allowed_host_matches_that_host_only(tmp_path: Path) -> None:
    allowed = ["rag.prod.svc"]
    for url in ("http://rag.prod.svc/ask", "https://RAG.prod.svc:8443/v2"):
        assert refusal(tmp_path, url, allowed_hosts=allowed) is None, url
    # Not as a suffix, a prefix or a parent.
    for host in ("evilrag.prod.svc", "x.rag.prod.svc", "rag.prod.svc.evil", "prod.svc", "rag.prod"):
        assert refusal(tmp_path, f"http://{host}/ask", allowed_hosts=allowed) == not_allowed(host)


def test_a_suffix_entry_matches_only_hosts_under_it(tmp_path: Path) -> None:
    allowed = ["*.svc"]
    for url in ("http://a.svc/ask", "http://rag.prod.svc:8080/ask"):
        assert refusal(tmp_path, url, allowed_hosts=allowed) is None, url
    # Under it means a whole label more: not a longer host, the suffix itself, or an empty label.
    for host in ("evilsvc", "a-svc", "svc", ".svc", "a.svc.evil"):
        assert refusal(tmp_path, f"http://{host}/ask", allowed_hosts=allowed) == not_allowed(host)


def test_with_allowed_hosts_unset_the_configured_feedback_hosts_are_allowed(tmp_path: Path) -> None:
    url = {"url": "http://{name}-metrics.example:9000/{name}.json"}
    prometheus = {"prometheus": {"url": "http://prom.monitoring:9090", **dict.fromkeys(PROM_QUERIES, "sum(x)")}}
    assert refusal(tmp_path, "http://rag-metrics.example/ask", {"feedback": url}) is None
    assert refusal(tmp_path, "http://prom.monitoring/ask", {"feedback": prometheus}) is None
    # Without a feedback source those hosts are nobody's; nor is the feedback host of another canary.
    assert refusal(tmp_path, "http://rag-metrics.example/ask") == not_allowed("rag-metrics.example")
    assert refusal(tmp_path, "http://prom.monitoring/ask") == not_allowed("prom.monitoring")
    assert refusal(tmp_path, "http://web-metrics.example/ask", {"feedback": url}) == not_allowed("web-metrics.example")
    # The arms' own hosts stay allowed beside them.
    assert refusal(tmp_path, "http://rag-primary.prod/v2", {"feedback": url}) is None


def test_endpoint_headers_go_to_an_arm_on_endpoint_urls_origin_and_nowhere_else(
    tmp_path: Path, home: Recorder, attacker: Recorder
) -> None:
    with Recorder() as endpoint_url:
        cfg = config(tmp_path, home, LATENCY, allowed_hosts=["127.0.0.1", "localhost"])
        cfg = cfg.model_copy(update={"endpoint": cfg.endpoint.model_copy(update={"url": f"{endpoint_url.origin}/a"})})
        with running_service(cfg, token=TOKEN) as svc:
            # endpoint.url's origin, another path: the headers go there.
            body = {"name": "rag", "treatment": f"{endpoint_url.origin}/v2/ask", "control": f"{attacker.origin}/ask"}
            assert svc.post("/v1/analyses", body).status_code == 202
            svc.wait_done("rag")
            # Its port on another host name is another origin: none.
            body = {"name": "web", "treatment": f"http://localhost:{endpoint_url.port}/ask"}
            assert svc.post("/v1/analyses", body).status_code == 202
            svc.wait_done("web")
    assert endpoint_url.seen == [("/v2/ask", ENDPOINT_SECRET)] * 4 + [("/ask", None)] * 4
    assert attacker.authorizations() == [None] * 4
