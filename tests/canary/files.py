"""Files for the canary tests: the sample, feedback counts and ragjudge.yml they run with, and the
report they read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml


def write_sample(path: Path, n: int) -> Path:
    """A canary sample of `n` distinct questions (case-file YAML)."""
    cases = [{"id": f"q-{i:03d}", "question": f"How long does refund number {i} take?"} for i in range(n)]
    path.write_text(yaml.safe_dump(cases), encoding="utf-8")
    return path


def write_feedback(path: Path, treatment: tuple[int, int], control: tuple[int, int]) -> Path:
    """Feedback JSON from `(dislikes, responses)` per arm."""
    data = {
        "treatment": {"dislikes": treatment[0], "responses": treatment[1]},
        "control": {"dislikes": control[0], "responses": control[1]},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_config(path: Path, canary: dict[str, Any], **top: Any) -> Path:
    """A ragjudge.yml with a `canary:` section; endpoint defaults suit loopback arms."""
    config: dict[str, Any] = {
        "endpoint": {"timeout_s": 10, "retries": 0, "concurrency": 8},
        "judge": {"provider": "offline", "concurrency": 2},
        "canary": canary,
        **top,
    }
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def read_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
