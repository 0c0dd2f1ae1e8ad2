"""examples/deploy/: every manifest validates against its schema.

Kubernetes objects (and the Job and pod templates inside the Argo objects) against the schemas the
`kubernetes-validate` package ships, strict (unknown fields are errors), offline. The Flagger and Argo
Rollouts objects against the hand-written partial schemas in crd_schemas/ (README there says where
each field comes from). The config and sample inside the ConfigMaps load as ragjudge loads them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from ragjudge.cases.caseset import load_cases
from ragjudge.config.loader import parse_config

DEPLOY = Path(__file__).resolve().parents[2] / "examples" / "deploy"
SCHEMAS = Path(__file__).resolve().parent / "crd_schemas"
KUBERNETES = "1.31"
CRD_SCHEMAS = {
    ("flagger.app/v1beta1", "Canary"): "flagger-canary-v1beta1.json",
    ("argoproj.io/v1alpha1", "AnalysisTemplate"): "argo-analysistemplate-v1alpha1.json",
    ("argoproj.io/v1alpha1", "Rollout"): "argo-rollout-v1alpha1.json",
}
FILES = sorted(p.name for p in DEPLOY.glob("*.yaml"))


def documents(name: str) -> list[dict[str, Any]]:
    with (DEPLOY / name).open(encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def problems(doc: dict[str, Any]) -> list[str]:
    """Every schema error of one object, as `kind/name: path: message`."""
    where = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
    key = (doc.get("apiVersion"), doc.get("kind"))
    found: list[str] = []
    if key in CRD_SCHEMAS:
        schema = json.loads((SCHEMAS / CRD_SCHEMAS[key]).read_text(encoding="utf-8"))
        validator = jsonschema.Draft202012Validator(schema)
        found += [f"{where}: {'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
        for inner in embedded(doc):
            found += problems(inner)
        return found
    try:
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)
    except kubernetes_validate.ValidationError as exc:
        found.append(f"{where}: {'.'.join(map(str, exc.absolute_path))}: {exc.message}")
    return found


def embedded(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The Kubernetes objects inside Argo's: a job metric's JobSpec, a Rollout's pod template."""
    meta = {"name": doc["metadata"]["name"], "namespace": doc["metadata"].get("namespace", "default")}
    if doc["kind"] == "AnalysisTemplate":
        return [
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": m["provider"]["job"]["spec"]}
            for m in doc["spec"]["metrics"]
            if "job" in m["provider"]
        ]
    if doc["kind"] == "Rollout":
        return [{"apiVersion": "v1", "kind": "PodTemplate", "metadata": meta, "template": doc["spec"]["template"]}]
    return []


def test_the_examples_are_all_there() -> None:
    assert FILES == ["argo-analysistemplate.yaml", "argo-rollout.yaml", "flagger-canary.yaml", "ragjudge-serve.yaml"]
    kinds = sorted(doc["kind"] for name in FILES for doc in documents(name))
    assert kinds == [
        "AnalysisTemplate",
        "AnalysisTemplate",
        "Canary",
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "Rollout",
        "Service",
        "Service",
        "Service",
    ]


@pytest.mark.parametrize("name", FILES)
def test_manifest_validates(name: str) -> None:
    for doc in documents(name):
        assert problems(doc) == []


@pytest.mark.parametrize(
    ("name", "kind", "break_it", "expected"),
    [
        # A misspelt key in each kind of object is caught, so the tests above can fail.
        (
            "flagger-canary.yaml",
            "Canary",
            lambda d: d["spec"]["analysis"]["webhooks"][0].update(timout="5s"),
            "Canary/rag: spec.analysis.webhooks.0: Additional properties are not allowed ('timout' was unexpected)",
        ),
        (
            "flagger-canary.yaml",
            "Canary",
            lambda d: d["spec"]["analysis"]["webhooks"][1].update(type="rollouts"),
            "Canary/rag: spec.analysis.webhooks.1.type: 'rollouts' is not one of",
        ),
        (
            "argo-analysistemplate.yaml",
            "AnalysisTemplate",
            lambda d: d["spec"]["metrics"][1]["provider"]["web"].update(jsonpath="{$}"),
            "AnalysisTemplate/ragjudge-web: spec.metrics.1.provider.web: Additional properties are not allowed",
        ),
        (
            "argo-analysistemplate.yaml",
            "AnalysisTemplate",
            lambda d: d["spec"]["metrics"][0]["provider"]["web"].update(method="GET"),
            "AnalysisTemplate/ragjudge-web: spec.metrics.0.provider.web.method: 'GET' is not one of ['POST', 'PUT']",
        ),
        (
            "argo-rollout.yaml",
            "Rollout",
            lambda d: d["spec"]["strategy"]["canary"]["steps"][0].update(setWeigth=1),
            "Rollout/rag: spec.strategy.canary.steps.0",
        ),
        (
            "argo-rollout.yaml",
            "Rollout",
            lambda d: d["spec"]["template"]["spec"]["containers"][0].update(imagee="x"),
            "PodTemplate/rag: template.spec.containers.0: Additional properties are not allowed "
            "('imagee' was unexpected)",
        ),
        (
            "ragjudge-serve.yaml",
            "Deployment",
            lambda d: d["spec"]["template"]["spec"].update(terminationGracePeriod=5),
            "Deployment/ragjudge: spec.template.spec: Additional properties are not allowed",
        ),
        (
            "ragjudge-serve.yaml",
            "Service",
            lambda d: d["spec"]["ports"][0].update(port="http"),
            "Service/ragjudge: spec.ports.0.port: 'http' is not of type 'integer'",
        ),
    ],
)
def test_a_broken_manifest_fails(name: str, kind: str, break_it: Any, expected: str) -> None:
    doc = copy.deepcopy(next(d for d in documents(name) if d["kind"] == kind))
    break_it(doc)
    found = problems(doc)
    assert any(p.startswith(expected) for p in found), found


@pytest.mark.parametrize(
    ("name", "configmap"),
    [("ragjudge-serve.yaml", "ragjudge-config"), ("argo-analysistemplate.yaml", "ragjudge-job-config")],
)
def test_the_configmaps_hold_a_config_and_sample_ragjudge_loads(
    name: str, configmap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = next(d for d in documents(name) if d["kind"] == "ConfigMap" and d["metadata"]["name"] == configmap)["data"]
    (tmp_path / "canary-sample.yaml").write_text(data["canary-sample.yaml"], encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = parse_config(yaml.safe_load(data["ragjudge.yml"]), configmap, tmp_path)
    assert config.canary is not None and config.canary.sample == tmp_path / "canary-sample.yaml"
    assert load_cases([config.canary.sample]).cases
    assert config.judge.cache == Path("/tmp/ragjudge-cache")


def test_the_deployment_mounts_what_serve_is_told_to_read() -> None:
    deployment = next(d for d in documents("ragjudge-serve.yaml") if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    command = container["command"]
    assert command[:2] == ["ragjudge", "serve"]
    assert command[command.index("--config") + 1] == "/config/ragjudge.yml"
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/config", "/tmp"}
    token_var = command[command.index("--token-env") + 1]
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]}
    assert env[token_var] == {"name": "ragjudge-token", "key": "token"}
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    service = next(d for d in documents("ragjudge-serve.yaml") if d["kind"] == "Service")
    assert service["spec"]["ports"][0]["port"] == int(command[command.index("--port") + 1])
