"""`ragjudge run --bias-check N`: the judge's position bias measured on the run's own cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from ragjudge.cli import main
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer, answer
from tests.judge.fake_evidence import (
    KEY,
    Score,
    by_marker,
    evidence_responder,
    first_wins,
    is_evidence,
    other_judges,
    passage,
    run_config,
)


def _upper(count: int, nobs: int) -> float:
    return float(proportion_confint(count, nobs, alpha=0.05, method="wilson")[1])


RUN_MARKERS = ["", "[S4]", "[S2]", "[S1]"]


def _bias_run(
    tmp_path: Path, score: Score, *args: str, rules: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str, FakeOpenAI]:
    texts = {f"d{i}": passage(m, "refunds", i) for i, m in enumerate(RUN_MARKERS)}
    replies = {f"Q{k}?": answer("Refunds take 5 days.", list(texts), texts) for k in range(4)}
    cases = [{"id": f"c{k}", "question": f"Q{k}?"} for k in range(4)]
    with FakeOpenAI(evidence_responder(score, other=other_judges), api_key=KEY) as fake, RagServer(replies) as rag:
        config = run_config(tmp_path, fake.base_url, rag.url, cases, rules, calibration=str(tmp_path / "cal.json"))
        report, comment = tmp_path / "report.json", tmp_path / "comment.md"
        code = main(["run", "--config", str(config), "--report", str(report), "--comment-file", str(comment), *args])
    return code, json.loads(report.read_text(encoding="utf-8")), comment.read_text(encoding="utf-8"), fake


def _evidence_calls(fake: FakeOpenAI) -> int:
    return sum(1 for b in fake.bodies if is_evidence(b))


def test_bias_check_catches_a_position_biased_judge_during_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, comment, fake = _bias_run(tmp_path, first_wins, "--bias-check", "3")
    pb = report["suite"]["position_bias"]
    # Per case: the first passage ("" -> 0) gets 5 in order, and the last ([S1]) gets 5 reversed.
    assert (pb["items"], pb["passages"], pb["flips"]) == (3, 12, 6)
    assert pb["flip_rate"] == 0.5 and pb["upper95"] == pytest.approx(_upper(6, 12), abs=1e-4)
    assert pb["biased"] is True and pb["inconclusive"] is False
    assert _evidence_calls(fake) == pb["calls"] == 6  # in order and reversed, for 3 sampled cases
    # Every judge call of the run is counted in the suite's usage, the bias check's included.
    assert report["suite"]["judge_calls"] == fake.call_count
    assert pb["tokens"] > 0 and report["suite"]["judge_tokens"] == 120 * fake.call_count
    assert "Position-bias check" in comment and "6 of 12 passage scores changed" in comment
    assert "the judge looks position-biased" in comment
    assert any(w.startswith("the judge looks position-biased") for w in report["warnings"])
    assert code == 0  # a report, not a rule: the verdict stands

    capsys.readouterr()
    assert main(["comment", "--report", str(tmp_path / "report.json")]) == 0  # from the saved report, too
    assert "6 of 12 passage scores changed" in capsys.readouterr().out


def test_bias_check_reuses_the_in_order_scores_of_llm_precision(tmp_path: Path) -> None:
    _, report, comment, fake = _bias_run(
        tmp_path, by_marker, "--bias-check", "2", rules={"context_precision": ">= 0.0"}
    )
    pb = report["suite"]["position_bias"]
    assert (pb["items"], pb["passages"], pb["flips"]) == (2, 8, 0)
    assert pb["calls"] == 2 and _evidence_calls(fake) == 4 + 2  # precision for 4 cases, 2 swaps
    assert pb["inconclusive"] is True
    assert "too few passages to rule position bias out" in comment
    assert not any("position-biased" in w for w in report["warnings"])


def test_without_bias_check_the_report_has_no_position_bias(tmp_path: Path) -> None:
    _, report, comment, fake = _bias_run(tmp_path, first_wins)
    assert "position_bias" not in report["suite"] and "Position-bias" not in comment
    assert _evidence_calls(fake) == 0


def test_bias_check_with_the_offline_judge_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    (tmp_path / "cases.yaml").write_text("- id: a\n  question: Q?\n", encoding="utf-8")
    with RagServer({"Q?": answer("Refunds take 5 days.", ["d"], {"d": "Refunds take 5 days."})}) as rag:
        (tmp_path / "ragjudge.yml").write_text(
            f"endpoint: {{url: '{rag.url}'}}\ncases: [cases.yaml]\n", encoding="utf-8"
        )
        report = tmp_path / "r.json"
        code = main(["run", "--config", str(tmp_path / "ragjudge.yml"), "--report", str(report), "--bias-check", "5"])
    data = json.loads(report.read_text(encoding="utf-8"))
    assert code == 0 and "position_bias" not in data["suite"]
    assert any(w.startswith("--bias-check 5 skipped") for w in data["warnings"])


def test_a_negative_bias_check_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:

    assert main(["run", "--endpoint", "http://127.0.0.1:9/", "--cases", "x.yaml", "--bias-check", "-1"]) == 2
    assert "--bias-check N needs N >= 0" in capsys.readouterr().err
