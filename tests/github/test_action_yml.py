"""action.yml and the example workflows agree with the code."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.github.inputs import ActionInputs, read_inputs
from ragjudge.github.outputs import OUTPUT_NAMES

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / "examples" / "workflows"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return load(ROOT / "action.yml")  # type: ignore[no-any-return]


def test_docker_action_with_branding(spec: dict[str, Any]) -> None:
    assert spec["name"] and spec["description"]
    assert set(spec["branding"]) == {"icon", "color"}
    assert spec["runs"] == {"using": "docker", "image": "Dockerfile"}


def test_every_input_is_described_and_read(spec: dict[str, Any]) -> None:
    fields = {f.name.replace("_", "-") for f in dataclasses.fields(ActionInputs)}
    assert set(spec["inputs"]) == fields
    for name, item in spec["inputs"].items():
        assert item["description"], name
        assert item.get("required", False) is False, f"{name}: the runner does not enforce required"


def test_defaults_match_the_code(spec: dict[str, Any]) -> None:
    defaults = {f"INPUT_{name.upper()}": str(item.get("default", "")) for name, item in spec["inputs"].items()}
    assert defaults.pop("INPUT_GITHUB-TOKEN") == "${{ github.token }}"
    assert defaults["INPUT_MODE"] == "gate" and defaults["INPUT_COMMENT"] == "always"
    assert defaults["INPUT_FAIL-ON"] == "rules" and defaults["INPUT_REPORT"] == "ragjudge-report.json"
    assert read_inputs(defaults) == read_inputs({}) == ActionInputs()


def test_every_output_is_declared(spec: dict[str, Any]) -> None:
    assert tuple(spec["outputs"]) == OUTPUT_NAMES
    assert all(item["description"] for item in spec["outputs"].values())


def test_gate_workflow() -> None:
    text = (WORKFLOWS / "rag-gate.yml").read_text(encoding="utf-8")
    wf = load(WORKFLOWS / "rag-gate.yml")
    assert "pull_request" in wf[True]  # YAML 1.1 reads the key `on` as True
    assert wf[True]["push"] == {"branches": ["main"]}  # main's half: the baseline
    assert wf["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write"}
    uses = [s.get("uses", "") for s in wf["jobs"]["gate"]["steps"]]
    assert any(u.startswith("actions/cache@") for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    assert any(u.endswith("/ragjudge-action@v1") for u in uses)
    assert "Deploy preview" in text and "steps.preview.outputs.url" in text
    [gate] = [s for s in wf["jobs"]["gate"]["steps"] if s.get("id") == "gate"]
    assert (
        gate["with"]["baseline-artifact"] == "${{ github.event_name == 'pull_request' && 'ragjudge-baseline' || '' }}"
    )
    assert gate["with"]["html"] == "ragjudge-report.html" and gate["with"]["junit"] == "ragjudge-junit.xml"
    uploads = {s["with"]["name"]: s for s in wf["jobs"]["gate"]["steps"] if "upload-artifact" in s.get("uses", "")}
    assert set(uploads) == {"ragjudge-report", "ragjudge-baseline"}
    assert "ragjudge-report.html" in uploads["ragjudge-report"]["with"]["path"]
    assert "ragjudge-report.json" in uploads["ragjudge-baseline"]["with"]["path"]
    assert uploads["ragjudge-baseline"]["if"] == "always() && github.event_name == 'push'"


def test_sharded_workflow_merges_compares_and_comments_once() -> None:
    wf = load(WORKFLOWS / "rag-gate-sharded.yml")
    assert wf["permissions"]["actions"] == "read"
    shard_job, gate_job = wf["jobs"]["shard"], wf["jobs"]["gate"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shard_job["strategy"]["fail-fast"] is False
    [step] = [s for s in shard_job["steps"] if str(s.get("uses", "")).endswith("/ragjudge-action@v1")]
    assert step["with"]["shard"] == "${{ matrix.shard }}/" + str(len(shards))
    assert step["with"]["comment"] == "never"
    assert "shard" in gate_job["needs"] and gate_job["if"].startswith("always()")
    [merge] = [s for s in gate_job["steps"] if s.get("id") == "gate"]
    assert merge["with"]["mode"] == "merge" and merge["with"]["reports"] == "shards/*.json"
    assert merge["with"]["baseline-artifact"].count("ragjudge-baseline") == 1
    assert "comment" not in merge["with"]  # the default: always, on the gate's sticky comment
    [download] = [s for s in gate_job["steps"] if "download-artifact" in str(s.get("uses", ""))]
    assert download["with"] == {"pattern": "ragjudge-shard-*", "path": "shards", "merge-multiple": True}
    # The action's inputs it uses all exist.
    spec = load(ROOT / "action.yml")
    for job in wf["jobs"].values():
        for s in job.get("steps", []):
            if str(s.get("uses", "")).endswith("/ragjudge-action@v1"):
                assert set(s["with"]) <= set(spec["inputs"]), set(s["with"]) - set(spec["inputs"])


def test_fork_comment_workflow_runs_no_pr_code() -> None:
    text = (WORKFLOWS / "rag-comment-from-fork.yml").read_text(encoding="utf-8")
    wf = load(WORKFLOWS / "rag-comment-from-fork.yml")
    assert set(wf[True]) == {"workflow_run"}
    steps = wf["jobs"]["comment"]["steps"]
    assert not any(str(s.get("uses", "")).startswith("actions/checkout") for s in steps)
    assert any(str(s.get("uses", "")).startswith("actions/download-artifact") for s in steps)
    assert "ragjudge comment --report" in text and "--post" in text
    assert "pull_request_target" in text and "secrets" in text  # the why, in comments
    assert "head_sha" in text  # the PR number from the artifact is checked


def test_canary_workflow_branches_on_the_verdict() -> None:
    text = (WORKFLOWS / "rag-canary.yml").read_text(encoding="utf-8")
    wf = load(WORKFLOWS / "rag-canary.yml")
    [step] = [s for s in wf["jobs"]["canary"]["steps"] if s.get("id") == "canary"]
    assert step["with"]["mode"] == "canary"
    assert "steps.canary.outputs.verdict == 'promote'" in text


def test_gitlab_example_uses_the_cli() -> None:
    wf = load(WORKFLOWS / "gitlab-ci.yml")
    assert any("ragjudge run" in line for line in wf["rag-gate"]["script"])
    assert any("--junit ragjudge-junit.xml" in line for line in wf["rag-gate"]["script"])
    assert wf["rag-gate"]["artifacts"]["reports"] == {"junit": "ragjudge-junit.xml"}


def test_the_docs_tables_list_every_input_and_output(spec: dict[str, Any]) -> None:
    section = (ROOT / "docs" / "github-action.md").read_text(encoding="utf-8")
    for name in (*spec["inputs"], *spec["outputs"]):
        assert f"| `{name}` |" in section, name
