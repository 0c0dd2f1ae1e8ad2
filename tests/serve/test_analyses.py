"""From a canary's identity to the `ragjudge canary` request: URL templates, per-canary overrides."""

from __future__ import annotations

from pathlib import Path

from ragjudge.canary.release import run_canary
from ragjudge.config.loader import load_config
from ragjudge.serve.analyses import canary_request
from ragjudge.serve.state import AnalysisSpec
from tests.canary.files import write_config, write_sample
from tests.fakes.arms import ArmServer

QUERIES = {
    "treatment_dislikes": 'sum(d{app="{name}-canary",namespace="{namespace}"})',
    "treatment_responses": 'sum(r{app="{name}-canary"})',
    "control_dislikes": 'sum(d{app="{name}-primary"})',
    "control_responses": "sum(r)",
}


def test_name_and_namespace_fill_urls_and_queries(tmp_path: Path) -> None:
    canary = {
        "treatment": "http://{name}-canary.{namespace}/ask?x={y}",
        "control": "http://{name}-primary.{namespace}/ask",
        "feedback": {"prometheus": {"url": "http://prom:9090", **QUERIES}},
    }
    config = load_config(write_config(tmp_path / "ragjudge.yml", canary))
    request = canary_request(config, AnalysisSpec("rag", "prod"))
    assert (request.treatment, request.control) == ("http://rag-canary.prod/ask?x={y}", "http://rag-primary.prod/ask")
    assert request.config.canary is not None and request.config.canary.feedback is not None
    prom = request.config.canary.feedback.prometheus
    assert prom is not None
    assert prom.treatment_dislikes == 'sum(d{app="rag-canary",namespace="prod"})'
    assert (prom.treatment_responses, prom.control_dislikes, prom.control_responses) == (
        'sum(r{app="rag-canary"})',
        'sum(d{app="rag-primary"})',
        "sum(r)",
    )
    # The config itself is untouched: the next canary gets its own names.
    assert config.canary is not None and config.canary.treatment == canary["treatment"]


def test_feedback_url_override_keeps_the_configured_headers_only_on_their_origin(tmp_path: Path) -> None:
    canary = {"feedback": {"url": "http://metrics/{name}.json", "headers": {"Authorization": "Bearer m-token"}}}
    config = load_config(write_config(tmp_path / "ragjudge.yml", canary))
    default = canary_request(config, AnalysisSpec("rag", "prod"))
    assert default.config.canary is not None and default.config.canary.feedback is not None
    assert default.config.canary.feedback.url == "http://metrics/rag.json"
    same = canary_request(config, AnalysisSpec("rag", "prod", feedback_url="http://metrics/other/counts.json"))
    assert same.config.canary is not None and same.config.canary.feedback is not None
    assert same.config.canary.feedback.url == "http://metrics/other/counts.json"
    assert same.config.canary.feedback.headers == {"Authorization": "Bearer m-token"}
    # Another host, or the same host on another port: no token.
    for url in ("http://other/counts.json", "http://metrics:8080/rag.json", "https://metrics/rag.json"):
        moved = canary_request(config, AnalysisSpec("rag", "prod", feedback_url=url))
        assert moved.config.canary is not None and moved.config.canary.feedback is not None
        assert (moved.config.canary.feedback.url, moved.config.canary.feedback.headers) == (url, {})


def test_endpoint_headers_stay_off_a_caller_named_arm_on_another_origin(tmp_path: Path) -> None:
    canary = {"treatment": "http://{name}-canary.{namespace}/ask", "control": "http://{name}-primary.{namespace}/ask"}
    config = load_config(write_config(tmp_path / "ragjudge.yml", canary))
    assert canary_request(config, AnalysisSpec("rag", "prod")).without_headers == frozenset()
    # The configured origins, named by the caller: headers go.
    named = AnalysisSpec("rag", "prod", treatment="http://rag-canary.prod/v2/ask", control="http://rag-primary.prod/a")
    assert canary_request(config, named).without_headers == frozenset()
    moved = AnalysisSpec("rag", "prod", treatment="http://rag-canary.prod:81/ask", control="http://rag-primary.prod/a")
    assert canary_request(config, moved).without_headers == frozenset({"treatment"})


def test_sample_size_asks_the_first_n_and_warns_when_the_sample_is_smaller(tmp_path: Path) -> None:
    with ArmServer("treatment") as t, ArmServer("control") as c:
        canary = {
            "sample": str(write_sample(tmp_path / "sample.yaml", 5)),
            "treatment": t.ask_url,
            "control": c.ask_url,
            "rules": {"p95_latency_ms": "<= 3000"},
        }
        config = load_config(write_config(tmp_path / "ragjudge.yml", canary))
        three = run_canary(canary_request(config, AnalysisSpec("rag", "prod", sample_size=3)))
        assert len(t.journal) == len(c.journal) == 3
        # The first three questions (they arrive in any order: the calls run concurrently).
        assert sorted(q for _, q in t.journal) == [f"How long does refund number {i} take?" for i in range(3)]
        assert not [w for w in three.report.warnings if "sample_size" in w]
        nine = run_canary(canary_request(config, AnalysisSpec("rag", "prod", sample_size=9)))
    assert len(t.journal) == 3 + 5
    assert "sample_size 9 asks more than the 5 questions in sample.yaml: all of them were asked" in nine.report.warnings
