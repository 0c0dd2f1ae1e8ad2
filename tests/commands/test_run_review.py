"""Cases reviewed before they gate: `review: pending` runs and is reported but no rule counts it; `rejected` is
skipped; `approved` gates. Against the example service, its case file edited three ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.commands.test_run_end_to_end import run
from tests.commands.test_run_reviewer import ANCHORS
from tests.fakes.arms import example_service

PENDING = ("cs-014", "cs-031")  # both fail against the example service
REJECTED = "cs-020"


def _with_review(text: str, reviews: dict[str, str | None]) -> str:
    """The case file with `review:` set (or the case removed, for None) on the named cases."""
    for case_id, review in reviews.items():
        start = text.index(f"- id: {case_id}\n")
        end = text.find("\n- id: ", start + 1)
        end = len(text) if end < 0 else end + 1
        if review is None:
            text = text[:start] + text[end:]
        else:
            text = text[:start] + f"- id: {case_id}\n  review: {review}\n" + text[start + len(f"- id: {case_id}\n") :]
    return text


def _run(
    ws: Path, capsys: pytest.CaptureFixture[str], url: str, name: str, reviews: dict[str, str | None]
) -> tuple[int, Any, str]:
    (ws / f"{name}.yaml").write_text(_with_review(ANCHORS.read_text(encoding="utf-8"), reviews), encoding="utf-8")
    config = {
        "endpoint": {"url": url},
        "cases": [f"{name}.yaml"],
        "gate": {"suite": {"pass_rate": ">= 0.9", "rejection_accuracy": ">= 0.9"}},
    }
    (ws / f"{name}.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    outcome = run(capsys, "run", "--config", f"{name}.yml", "--report", f"{name}.json", "--comment-file", f"{name}.md")
    return (
        outcome.code,
        json.loads((ws / f"{name}.json").read_text(encoding="utf-8")),
        (ws / f"{name}.md").read_text(encoding="utf-8"),
    )


def test_pending_cases_are_reported_but_change_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with example_service() as url:
        without = _run(tmp_path, capsys, url, "without", {**dict.fromkeys(PENDING), REJECTED: None})
        pending = _run(tmp_path, capsys, url, "pending", {**dict.fromkeys(PENDING, "pending"), REJECTED: "rejected"})
        approved = _run(
            tmp_path, capsys, url, "approved", {PENDING[0]: "approved", PENDING[1]: "pending", REJECTED: "rejected"}
        )

    (code_a, report_a, _), (code_b, report_b, comment_b), (code_c, report_c, _) = without, pending, approved
    # Pending: the same verdict and the same suite figures as without those cases at all.
    assert (code_b, report_b["verdict"]) == (code_a, report_a["verdict"])
    for key in ("cases", "passed", "failed", "pass_rate", "rejection_accuracy"):
        assert report_b["suite"][key] == report_a["suite"][key], key
    by_id = {c["id"]: c for c in report_b["cases"]}
    assert REJECTED not in by_id  # rejected: skipped
    assert [by_id[i]["review"] for i in PENDING] == ["pending", "pending"]
    assert [by_id[i]["status"] for i in PENDING] == ["fail", "fail"]  # they ran: reported as they are
    assert "1 case(s) rejected in review were skipped: cs-020" in report_b["warnings"]
    assert "### Not gating: pending review" in comment_b
    assert report_b["headline"]["sentence"].endswith("; 2 cases pending review, not gating.")
    # Approving one makes it gate: it now counts, as a failing case.
    assert report_c["suite"]["cases"] == report_a["suite"]["cases"] + 1
    assert report_c["suite"]["failed"] == report_a["suite"]["failed"] + 1
    assert (report_a["suite"]["passed"], report_a["suite"]["cases"]) == (38, 40)
    assert report_c["suite"]["pass_rate"] == 38 / 41 and code_c == 0  # 0.927 still holds pass_rate >= 0.9


def test_an_unknown_review_state_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("- id: a\n  question: q?\n  review: maybe\n", encoding="utf-8")
    (tmp_path / "r.yml").write_text(
        yaml.safe_dump({"endpoint": {"url": "http://127.0.0.1:9/ask"}, "cases": ["c.yaml"]})
    )
    assert main(["run", "--config", "r.yml"]) == 2
    assert capsys.readouterr().err.startswith(
        f"ragjudge: error: {tmp_path / 'c.yaml'}:1: case 'a': review: Input should be 'pending', 'approved' or "
        "'rejected'\n"
    )
