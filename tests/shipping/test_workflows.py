"""The workflows we ship or run validate against check-jsonschema's GitHub and GitLab schemas,
and the release workflow does what docs/releases.md promises."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
OWN_WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
EXAMPLE_WORKFLOWS = sorted(p for p in (ROOT / "examples" / "workflows").glob("*.yml") if p.name != "gitlab-ci.yml")


def _load_pin_script() -> Any:
    spec = importlib.util.spec_from_file_location("pin_action_image", ROOT / "scripts" / "pin_action_image.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pin_script = _load_pin_script()


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_there_are_workflows_to_check() -> None:
    assert {p.name for p in OWN_WORKFLOWS} >= {"ci.yml", "release.yml"}
    assert {p.name for p in EXAMPLE_WORKFLOWS} >= {"rag-gate.yml", "rag-canary.yml", "rag-comment-from-fork.yml"}


def test_github_workflows_validate() -> None:
    result = check_jsonschema("vendor.github-workflows", *OWN_WORKFLOWS, *EXAMPLE_WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_gitlab_example_validates() -> None:
    result = check_jsonschema("vendor.gitlab-ci", ROOT / "examples" / "workflows" / "gitlab-ci.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_yml_validates() -> None:
    result = check_jsonschema("vendor.github-actions", ROOT / "action.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_does_catch_a_broken_workflow(tmp_path: Path) -> None:
    # A check that cannot fail proves nothing: a job without runs-on must be refused.
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    steps:\n      - run: true\n", encoding="utf-8")
    result = check_jsonschema("vendor.github-workflows", broken)
    assert result.returncode == 1
    assert "broken.yml" in result.stdout


def test_pinned_action_yml_runs_the_prebuilt_image_and_still_validates(tmp_path: Path) -> None:
    original = (ROOT / "action.yml").read_text(encoding="utf-8")
    target = tmp_path / "action.yml"
    target.write_text(original, encoding="utf-8")
    ref = "docker://ghcr.io/acme/ragjudge-action:1.2.3"
    assert pin_script.main([str(target), ref]) == 0
    pinned = target.read_text(encoding="utf-8")
    assert load(target)["runs"] == {"using": "docker", "image": ref}
    # Nothing else changes: inputs, outputs and comments are the same lines.
    assert [line for line in pinned.splitlines() if "image:" not in line] == [
        line for line in original.splitlines() if "image:" not in line
    ]
    result = check_jsonschema("vendor.github-actions", target)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "ref", ["ghcr.io/acme/ragjudge-action:1.2.3", "docker://ghcr.io/acme/ragjudge-action", "docker://x/y:1 2"]
)
def test_pin_refuses_a_reference_that_is_not_docker_name_tag(tmp_path: Path, ref: str) -> None:
    target = tmp_path / "action.yml"
    target.write_text("name: x\nruns:\n  using: docker\n  image: Dockerfile\n", encoding="utf-8")
    assert pin_script.main([str(target), ref]) == 2
    assert "image: Dockerfile" in target.read_text(encoding="utf-8")


def test_pin_needs_an_image_under_runs(tmp_path: Path) -> None:
    target = tmp_path / "action.yml"
    target.write_text("name: x\nimage: top-level\nruns:\n  using: node20\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no `image:` key under `runs:`"):
        pin_script.pin(target.read_text(encoding="utf-8"), "docker://ghcr.io/a/b:1")


def test_release_builds_multi_arch_with_metadata_labels_and_trusted_publishing() -> None:
    release = load(ROOT / ".github" / "workflows" / "release.yml")
    trigger = release[True] if True in release else release["on"]  # YAML 1.1 reads `on` as true
    assert trigger == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    image_steps = {s.get("uses", "").split("@")[0]: s for s in release["jobs"]["image"]["steps"]}
    build = image_steps["docker/build-push-action"]["with"]
    assert build["platforms"] == "linux/amd64,linux/arm64"
    assert build["labels"] == "${{ steps.meta.outputs.labels }}"
    assert (
        "ghcr.io/${{ github.repository_owner }}/ragjudge-action"
        in image_steps["docker/metadata-action"]["with"]["images"]
    )
    assert release["jobs"]["image"]["permissions"] == {"contents": "read", "packages": "write"}
    pypi = release["jobs"]["pypi"]
    assert pypi["permissions"]["id-token"] == "write"
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for s in pypi["steps"])
    # No long-lived PyPI token: trusted publishing only.
    assert "password" not in str(pypi["steps"])


def test_ci_dogfoods_the_action_from_this_checkout() -> None:
    ci = load(ROOT / ".github" / "workflows" / "ci.yml")
    steps = ci["jobs"]["dogfood"]["steps"]
    gate = next(s for s in steps if s.get("uses") == "./")
    assert gate["with"]["config"] == "examples/ragjudge.yml"
    assert (ROOT / gate["with"]["config"]).is_file()
    assert ci["jobs"]["dogfood"]["if"] == "github.event_name == 'pull_request'"
