"""A runner workspace for the example service: two configs, one whose gate fails and one whose gate passes."""

from __future__ import annotations

from pathlib import Path

import yaml

from ragjudge.cases.files import read_items

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAILING_IDS = ("cs-014", "cs-020", "cs-026", "cs-031", "cs-043")
"""The example cases that fail against the example service as shipped."""


def write_example_workspace(ws: Path) -> Path:
    """`fail.yml`: all 43 example cases with `pass_rate >= 1.0` (5 fail, so the gate fails).
    `pass.yml`: the 38 cases that pass, with the default rules (the gate passes).
    Both read the endpoint from `${RAG_URL}`."""
    (ws / "cases").mkdir(parents=True, exist_ok=True)
    cases = [item.data for item in read_items(EXAMPLES / "cases" / "anchors.yaml")]
    (ws / "cases" / "all.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    passing = [c for c in cases if c["id"] not in FAILING_IDS]
    (ws / "cases" / "passing.yaml").write_text(yaml.safe_dump(passing, allow_unicode=True), encoding="utf-8")
    endpoint = "endpoint:\n  url: ${RAG_URL}\n  timeout_s: 10\n"
    (ws / "fail.yml").write_text(
        endpoint + "cases: [cases/all.yaml]\ngate:\n  suite: {pass_rate: '>= 1.0'}\n", encoding="utf-8"
    )
    (ws / "pass.yml").write_text(endpoint + "cases: [cases/passing.yaml]\n", encoding="utf-8")
    return ws
