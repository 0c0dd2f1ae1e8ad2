"""Argo Rollouts' web metric provider against `ragjudge serve`: a stand-in evaluates the example
AnalysisTemplate's conditions (examples/deploy/argo-analysistemplate.yaml, ragjudge-web) on the
service's answers, with the args the example Rollout passes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragjudge.config.model import Config
from ragjudge.errors import ConfigError
from ragjudge.serve.origins import check_named_urls
from ragjudge.serve.state import AnalysisSpec
from tests.canary.files import write_feedback
from tests.fakes.cluster import Cluster, standard_arms
from tests.serve.service import Service, example_config, manifest, resolver, running_service, serve_config
from tests.serve.standins import StandInArgo, measure

TOKEN = "argo-test-token-77c1"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(standard_arms()) as server:
        yield server


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, cluster: Cluster) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("serve")
    feedback = write_feedback(tmp / "feedback.json", (150, 5000), (150, 5000))
    with running_service(serve_config(tmp, cluster.url, feedback), token=TOKEN) as svc:
        yield svc


def argo_for(name: str, service: Service, cluster: Cluster) -> StandInArgo:
    template = manifest("argo-analysistemplate.yaml", "AnalysisTemplate", "ragjudge-web")
    args = {"name": name, "namespace": "prod", "revision": f"{name}-7d9f8c", "token": TOKEN}
    return StandInArgo(template, args, resolver(service.url, cluster.url))


def test_the_documented_conditions() -> None:
    template = manifest("argo-analysistemplate.yaml", "AnalysisTemplate", "ragjudge-web")
    verdict = {m["name"]: m for m in template["spec"]["metrics"]}["ragjudge-verdict"]
    assert verdict["successCondition"] == 'result.verdict == "promote"'
    assert verdict["failureCondition"] == 'result.verdict == "rollback"'
    # Running (verdict null) and inconclusive match neither: Argo counts them inconclusive.
    assert measure(verdict, {"status": "running", "verdict": None}) == "Inconclusive"
    assert measure(verdict, {"status": "done", "verdict": "inconclusive"}) == "Inconclusive"
    assert measure(verdict, {"status": "error", "verdict": None}) == "Inconclusive"
    assert measure(verdict, {"status": "done", "verdict": "promote"}) == "Successful"
    assert measure(verdict, {"status": "done", "verdict": "rollback"}) == "Failed"
    # The example Rollout passes exactly the template's args.
    rollout = manifest("argo-rollout.yaml", "Rollout")
    step = next(s["analysis"] for s in rollout["spec"]["strategy"]["canary"]["steps"] if "analysis" in s)
    assert [t["templateName"] for t in step["templates"]] == ["ragjudge-web"]
    declared = [a["name"] for a in template["spec"]["args"] if "valueFrom" not in a]
    assert [a["name"] for a in step["args"]] == declared


@pytest.mark.parametrize(
    ("name", "final", "verdict"), [("good", "Successful", "promote"), ("slow", "Failed", "rollback")]
)
def test_web_provider_reads_the_verdict(
    service: Service, cluster: Cluster, name: str, final: str, verdict: str
) -> None:
    argo = argo_for(name, service, cluster)
    started, result = argo.measurement("ragjudge-start")
    assert (started, result["status"], result["checksum"]) == ("Successful", "running", f"{name}-7d9f8c")
    # The start metric's URLs are Argo's service names (<name>-canary, <name>-stable).
    running, result = argo.measurement("ragjudge-verdict")
    assert (running, result["verdict"]) == ("Inconclusive", None)

    done = service.wait_done(name)
    measured, result = argo.measurement("ragjudge-verdict")
    assert (measured, result["verdict"]) == (final, verdict), result["reasons"]
    assert result == done
    assert cluster.count(f"/{name}-canary.prod/ask") == cluster.count(f"/{name}-stable.prod/ask") == 120
    for metric in result["metrics"].values():
        assert metric["ci"] is not None and metric["reason"]


def test_web_provider_without_the_token_is_an_error(service: Service, cluster: Cluster) -> None:
    template = manifest("argo-analysistemplate.yaml", "AnalysisTemplate", "ragjudge-web")
    args = {"name": "good", "namespace": "prod", "revision": "r", "token": "wrong-token"}
    argo = StandInArgo(template, args, resolver(service.url, cluster.url))
    status, body = argo.fetch("ragjudge-verdict")
    assert (status, body) == (401, {"error": "missing or wrong bearer token (Authorization: Bearer <token>)"})


def test_the_example_config_allows_the_urls_the_example_template_sends() -> None:
    template = manifest("argo-analysistemplate.yaml", "AnalysisTemplate", "ragjudge-web")
    start = {m["name"]: m for m in template["spec"]["metrics"]}["ragjudge-start"]["provider"]["web"]["jsonBody"]
    config = Config.model_validate(example_config())
    spec = AnalysisSpec("rag", "prod", treatment=_args(start["treatment"]), control=_args(start["control"]))
    check_named_urls(config, spec)  # raises when a host is not allowed
    with pytest.raises(ConfigError, match=r"the control URL's host 'rag-stable\.other\.svc\.cluster\.local' is not in"):
        check_named_urls(config, AnalysisSpec("rag", "prod", control=_args(start["control"], namespace="other")))


def _args(value: str, namespace: str = "prod") -> str:
    return value.replace("{{args.name}}", "rag").replace("{{args.namespace}}", namespace)
