"""The HTTP surface of `ragjudge serve`: routes, the bearer token, bad bodies, the concurrency limit.

Analyses here are held `running` by a stand-in runner until the test releases them, so what is
checked is the service, not the canary statistics (test_flagger.py and test_argo.py run real ones).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from ragjudge.canary.release import CanaryOutcome
from ragjudge.config.loader import load_config
from ragjudge.errors import ExitCode
from tests.canary.files import write_config, write_sample
from tests.serve.service import Held, Service, report, running_service, small_config

TOKEN = "s3cret-token-for-tests-9d2b"


@pytest.fixture
def held() -> Iterator[Held]:
    h = Held()
    yield h
    h.release()


@pytest.fixture
def service(tmp_path: Path, held: Held) -> Iterator[Service]:
    with running_service(small_config(tmp_path, max_concurrent=2), token=TOKEN, runner=held.runner) as svc:
        yield svc


# --------------------------------------------------------------------------- routes


def test_healthz_and_metrics_need_no_token(service: Service) -> None:
    assert requests.get(f"{service.url}/healthz", timeout=5).json() == {"status": "ok"}
    metrics = requests.get(f"{service.url}/metrics", timeout=5)
    assert metrics.status_code == 200
    assert metrics.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "ragjudge_canary_analyses_running 0\n" in metrics.text


def test_post_starts_one_analysis_per_name(service: Service, held: Held) -> None:
    first = service.post("/v1/analyses", {"name": "rag", "namespace": "prod"})
    assert first.status_code == 202
    body = first.json()
    assert (body["id"], body["status"], body["verdict"], body["finished_at"]) == ("rag-1", "running", None, None)
    # A second POST while it runs returns the running one: no second load on the endpoints.
    second = service.post("/v1/analyses", {"name": "rag", "namespace": "prod"})
    assert (second.status_code, second.json()["id"]) == (200, "rag-1")
    assert len(held.requests) == 1
    # {name} and {namespace} are filled into the configured URLs.
    assert (held.requests[0].treatment, held.requests[0].control) == (
        "http://rag-canary.prod.example/ask",
        "http://rag-primary.prod.example/ask",
    )
    held.release()
    done = service.wait_done("rag")
    assert (done["status"], done["verdict"], done["reasons"]) == ("done", "promote", ["p95 latency: promote"])
    assert done["metrics"]["p95_latency_ratio"]["ci"] == [0.25, None]
    assert set(done) >= {"name", "status", "verdict", "reasons", "metrics", "started_at", "finished_at", "checksum"}


def test_urls_in_the_body_override_the_config(tmp_path: Path, held: Held) -> None:
    config = small_config(tmp_path, allowed_hosts=["t.example", "*.c.example"])
    with running_service(config, runner=held.runner) as svc:
        body = {
            "name": "rag",
            "namespace": "prod",
            "treatment": "http://t.example/ask",
            "control": "http://x.c.example/a",
        }
        assert svc.post("/v1/analyses", body).status_code == 202
    assert (held.requests[0].treatment, held.requests[0].control) == ("http://t.example/ask", "http://x.c.example/a")


def test_unknown_name_is_404(service: Service) -> None:
    reply = service.get("/v1/analyses/nothing-here")
    assert (reply.status_code, reply.json()) == (404, {"error": "no analysis for 'nothing-here'"})


def test_unknown_path_and_wrong_method(service: Service) -> None:
    assert service.get("/v2/whatever").status_code == 404
    wrong = requests.delete(f"{service.url}/healthz", timeout=5)
    assert (wrong.status_code, wrong.headers["Allow"], wrong.json()) == (405, "GET", {"error": "use GET"})
    hook = service.post("/flagger/post-rollout", {"name": "rag", "namespace": "prod"})
    assert (hook.status_code, hook.text) == (
        404,
        "unknown hook 'post-rollout'; ragjudge answers pre-rollout, rollout, confirm-promotion, rollback",
    )


# --------------------------------------------------------------------------- the token


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}, {"Authorization": TOKEN}],
)
def test_token_required(service: Service, headers: dict[str, str]) -> None:
    for reply in (
        requests.post(f"{service.url}/v1/analyses", json={"name": "rag"}, headers=headers, timeout=5),
        requests.get(f"{service.url}/v1/analyses/rag", headers=headers, timeout=5),
        requests.post(
            f"{service.url}/flagger/rollout", json={"name": "rag", "namespace": "p"}, headers=headers, timeout=5
        ),
    ):
        assert reply.status_code == 401
        assert reply.headers["WWW-Authenticate"] == 'Bearer realm="ragjudge"'
        assert "missing or wrong bearer token" in reply.text
        assert TOKEN not in reply.text


def test_flagger_may_send_the_token_in_metadata(service: Service) -> None:
    payload = {"name": "rag", "namespace": "prod", "checksum": "c1", "metadata": {"token": TOKEN}}
    reply = requests.post(f"{service.url}/flagger/pre-rollout", json=payload, timeout=5)
    assert (reply.status_code, reply.text) == (200, "analysis rag-1 started for checksum c1")
    wrong = {**payload, "metadata": {"token": "nope"}}
    assert requests.post(f"{service.url}/flagger/pre-rollout", json=wrong, timeout=5).status_code == 401


def test_confirm_promotion_while_the_analysis_runs_is_403(service: Service) -> None:
    payload = {"name": "rag", "namespace": "prod", "checksum": "c1", "metadata": {"token": TOKEN}}
    assert service.post("/flagger/pre-rollout", payload).status_code == 200
    # Flagger holds the promotion on any non-2xx: the status is the decision, the text only its reason.
    reply = service.post("/flagger/confirm-promotion", payload)
    assert (reply.status_code, reply.text) == (403, "analysis running")
    assert service.get("/v1/analyses/rag").json()["status"] == "running"


def test_the_token_is_never_logged(service: Service) -> None:
    service.post("/v1/analyses", {"name": "rag", "namespace": "prod"})
    requests.post(
        f"{service.url}/flagger/rollout",
        json={"name": "rag", "namespace": "prod", "metadata": {"token": TOKEN}},
        timeout=5,
    )
    requests.get(f"{service.url}/v1/analyses/rag", headers={"Authorization": "Bearer guess-1"}, timeout=5)
    assert service.log, "the service logged nothing"
    assert all(TOKEN not in str(event) and "guess-1" not in str(event) for event in service.log)


# --------------------------------------------------------------------------- bad bodies


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"x" * (64 * 1024 + 1), "the body is 65537 bytes; the limit is 65536 (64 kB)"),
        (
            b"{not json",
            "the body is not valid JSON (Expecting property name enclosed in double quotes at line 1, column 2)",
        ),
        (b"", "the request has no body; send a JSON object"),
        (b"[1, 2]", "the body must be a JSON object, not list"),
        (b'{"name": "rag", "colour": "red"}', "request body: unknown field 'colour'"),
        (b'{"namespace": "prod"}', "request body: name: Field required"),
        (b'{"name": "Not A Name!"}', "request body: name: String should match pattern"),
        (
            b'{"name": "rag", "treatment": "ftp://x/y"}',
            "request body: treatment: the URL must be an http:// or https:// URL",
        ),
        (b"\xff\xfe", "the body is not UTF-8"),
    ],
)
def test_bad_analysis_bodies_are_400(service: Service, body: bytes, message: str) -> None:
    reply = service.post("/v1/analyses", body)
    assert reply.status_code == 400
    assert reply.json()["error"].startswith(message)


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (
            {"sample_sise": "10"},
            "unknown metadata key 'sample_sise' (known: sample_size, feedback_url, treatment, control, token)",
        ),
        ({"sample_size": "ten"}, "metadata.sample_size must be a whole number of at least 1"),
        ({"feedback_url": "file:///etc/passwd"}, "metadata.feedback_url must be an http:// or https:// URL"),
    ],
)
def test_bad_flagger_metadata_is_400(service: Service, metadata: dict[str, str], message: str) -> None:
    payload = {"name": "rag", "namespace": "prod", "checksum": "c", "metadata": metadata}
    reply = service.post("/flagger/pre-rollout", payload)
    assert reply.status_code == 400
    assert message in reply.text


@pytest.mark.parametrize("url", ["https://:8443/ask", "http://user@/ask"])
def test_a_url_without_a_host_is_400_as_the_config_says(service: Service, url: str) -> None:
    # The body once took any scheme-and-netloc URL: `https://:8443/ask` got as far as the allow-list, refused
    # there as "host ''". It is now refused as the config refuses `endpoint.url` (transport.urls.check_http_url).
    reply = service.post("/v1/analyses", {"name": "rag", "treatment": url})
    assert (reply.status_code, reply.json()["error"]) == (
        400,
        "request body: treatment: the URL must be an http:// or https:// URL with a host (found no host)",
    )
    payload = {"name": "rag", "namespace": "prod", "checksum": "c", "metadata": {"feedback_url": url}}
    reply = service.post("/flagger/pre-rollout", payload)
    assert (reply.status_code, reply.text) == (
        400,
        "request body: metadata: metadata.feedback_url must be an http:// or https:// URL with a host (found no host)",
    )


def test_flagger_payload_with_unknown_field_is_400(service: Service) -> None:
    reply = service.post("/flagger/rollout", {"name": "rag", "namespace": "prod", "weight": 10})
    assert (reply.status_code, reply.text) == (400, "request body: unknown field 'weight'")


def test_missing_url_is_400_naming_the_key(tmp_path: Path, held: Held) -> None:
    canary = {"sample": str(write_sample(tmp_path / "s.yaml", 3)), "rules": {"p95_latency_ms": "<= 100"}}
    cfg = load_config(write_config(tmp_path / "ragjudge.yml", canary))
    with running_service(cfg, runner=held.runner) as svc:
        reply = svc.post("/v1/analyses", {"name": "rag"})
    assert reply.status_code == 400
    assert reply.json()["error"] == (
        'no treatment URL (tip: send "treatment" or set canary.treatment in the config '
        "(it may use {name} and {namespace}))"
    )


# --------------------------------------------------------------------------- concurrency


def test_more_than_max_concurrent_is_429_with_retry_after(service: Service, held: Held) -> None:
    assert service.post("/v1/analyses", {"name": "a"}).status_code == 202
    assert service.post("/v1/analyses", {"name": "b"}).status_code == 202
    third = service.post("/v1/analyses", {"name": "c"})
    assert third.status_code == 429
    assert third.headers["Retry-After"] == "30"  # nothing has finished yet to estimate from
    assert third.json() == {"error": "too many analyses running; retry after 30 s"}
    hook = service.post("/flagger/pre-rollout", {"name": "d", "namespace": "prod", "checksum": "x"})
    assert (hook.status_code, hook.headers["Retry-After"]) == (429, "30")
    # The running ones are not disturbed, and once they finish there is room again.
    held.release()
    service.wait_done("a")
    service.wait_done("b")
    assert service.post("/v1/analyses", {"name": "c"}).status_code == 202


def test_an_analysis_that_cannot_evaluate_is_an_error_with_the_reason(service: Service, held: Held) -> None:
    held.outcome = CanaryOutcome(
        report("inconclusive", ["every request to the treatment failed (endpoint error: HTTP 503)"]),
        ExitCode.COULD_NOT_EVALUATE,
    )
    service.post("/v1/analyses", {"name": "rag", "checksum": "c9"})
    held.release()
    done = service.wait_done("rag")
    assert (done["status"], done["verdict"]) == ("error", None)
    assert done["error"] == "could not evaluate: every request to the treatment failed (endpoint error: HTTP 503)"
    hook = service.post("/flagger/confirm-promotion", {"name": "rag", "namespace": "default", "checksum": "c9"})
    assert (hook.status_code, hook.text) == (403, f"error: {done['error']}")


def test_rollout_hook_reanalyses_after_reanalyse_s(tmp_path: Path, held: Held) -> None:
    held.release()
    with running_service(small_config(tmp_path, reanalyse_s=0), runner=held.runner) as svc:
        payload = {"name": "rag", "namespace": "prod", "checksum": "c1"}
        assert svc.post("/flagger/pre-rollout", payload).text == "analysis rag-1 started for checksum c1"
        svc.wait_done("rag")
        reply = svc.post("/flagger/rollout", payload)
        assert (reply.status_code, reply.text) == (
            200,
            "latest analysis rag-1: promote: p95 latency: promote; analysis rag-2 started for checksum c1",
        )
        svc.wait_done("rag")
        held.outcome = CanaryOutcome(report("rollback"), ExitCode.GATE_FAILED)
        svc.post("/flagger/rollout", payload)  # starts rag-3, which says rollback
        assert svc.wait_done("rag")["id"] == "rag-3"
        failed = svc.post("/flagger/rollout", payload)
        assert failed.status_code == 500
        assert failed.text.startswith("rollback: p95 latency: rollback; analysis rag-4 started")
        assert len(held.requests) == 4


def test_rollout_hook_retries_an_errored_analysis_at_once(service: Service, held: Held) -> None:
    # reanalyse_s is 300 here: only the error makes the rollout hook start again.
    held.outcome = CanaryOutcome(report("inconclusive", ["cannot reach Prometheus"]), ExitCode.COULD_NOT_EVALUATE)
    held.release()
    payload = {"name": "rag", "namespace": "prod", "checksum": "c1"}
    service.post("/flagger/pre-rollout", payload)
    assert service.wait_done("rag")["status"] == "error"
    held.outcome = CanaryOutcome(report("promote"), ExitCode.PASSED)
    reply = service.post("/flagger/rollout", payload)
    assert (reply.status_code, reply.text) == (
        200,
        "latest analysis rag-1: error: could not evaluate: cannot reach Prometheus; "
        "analysis rag-2 started for checksum c1",
    )
    assert service.wait_done("rag")["verdict"] == "promote"
    assert service.post("/flagger/confirm-promotion", payload).status_code == 200


# --------------------------------------------------------------------------- hostile bodies: never a 500


def test_a_lone_surrogate_token_is_401_not_500(service: Service) -> None:
    body = b'{"name": "rag", "namespace": "prod", "metadata": {"token": "\\ud800"}}'
    reply = requests.post(f"{service.url}/flagger/rollout", data=body, timeout=5)
    assert (reply.status_code, reply.text) == (401, "missing or wrong bearer token (Authorization: Bearer <token>)")


def test_a_lone_surrogate_in_a_field_is_400(service: Service) -> None:
    reply = service.post("/v1/analyses", b'{"name": "rag\\udfff"}')
    assert reply.status_code == 400
    assert reply.json()["error"].startswith("request body: name: String should match pattern")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/flagger/rollout", b"[" * 60_000),
        ("/v1/analyses", b'{"name": ' + b"[" * 30_000 + b'"rag"' + b"]" * 30_000 + b"}"),
        ("/flagger/pre-rollout", b'{"name": "rag", "namespace": "p", "metadata": ' + b'{"a": ' * 33 + b"1" + b"}" * 34),
    ],
)
def test_deep_nesting_is_400(service: Service, path: str, body: bytes) -> None:
    reply = service.post(path, body)
    assert reply.status_code == 400
    assert "the body nests lists or objects deeper than 32 levels" in reply.text


def test_brackets_inside_strings_do_not_count_as_nesting(service: Service) -> None:
    reply = service.post("/v1/analyses", {"name": "rag", "checksum": "[[[[" * 40 + '\\"{{{{' * 8})
    assert reply.status_code == 202
