"""`ragjudge run --baseline / --repeat` and their config keys: the happy path, and bad input as exit 2 before
any endpoint call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands.test_run_end_to_end import run, write_config
from tests.fakes.rag import RagServer, answer

GOOD = answer("Refunds take 5 days.", ["d1"], {"d1": "Refunds take 5 days."})
BAD = answer("Ask support.", ["d1"], {"d1": "Refunds take 5 days."})
CASES = [
    {"id": "refund-07", "question": "How long do refunds take?", "must_mention": ["5 days"]},
    {"id": "ship-12", "question": "Who pays shipping?", "must_mention": ["5 days"]},
]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    monkeypatch.setenv("GITHUB_SHA", "abc1234def5678")
    monkeypatch.setenv("GITHUB_REF", "refs/heads/main")
    return tmp_path


def _config(folder: Path, url: str, **extra: Any) -> None:
    write_config(folder, url, CASES, suite_rules={"pass_rate": ">= 0.5"})
    path = folder / "ragjudge.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in extra.items():
        if key == "regression":
            data["gate"]["regression"] = value
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


def test_baseline_from_the_config_then_the_flag(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RagServer({CASES[0]["question"]: GOOD, CASES[1]["question"]: GOOD}) as main_rag:
        _config(ws, main_rag.url)
        assert run(capsys, "run", "--report", "main.json").code == 0
    with RagServer({CASES[0]["question"]: BAD, CASES[1]["question"]: GOOD}) as pr_rag:
        _config(ws, pr_rag.url, baseline={"report": "main.json"})
        outcome = run(capsys, "run", "--report", "pr.json", "--comment-file", "pr.md")
        assert outcome.code == 1, outcome.out
        assert "  [FAIL] newly_failing 1 > 0: refund-07\n" in outcome.out
        report = json.loads((ws / "pr.json").read_text(encoding="utf-8"))
        assert report["comparison"]["baseline"]["path"] == str(ws / "main.json")
        assert report["verdict"] == "fail" and report["suite"]["pass_rate"] == 0.5
        # The flag overrides the config: against itself, nothing regressed.
        outcome = run(capsys, "run", "--report", "pr2.json", "--baseline", "pr.json")
        assert outcome.code == 0, outcome.out
        again = json.loads((ws / "pr2.json").read_text(encoding="utf-8"))
        assert [c["change"] for c in again["cases"]] == ["still_failing", "still_passing"]
    comment = (ws / "pr.md").read_text(encoding="utf-8").replace("\u200b", "")
    assert comment.splitlines()[2] == "**Blocked by 1 regression (refund-07).**"
    assert "> [!CAUTION]\n> Against main@abc1234 (less than a day old): 1 regression, 1 still passing\n" in comment


def test_a_missing_baseline_is_a_notice_and_the_absolute_rules_decide(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RagServer({CASES[0]["question"]: BAD, CASES[1]["question"]: GOOD}) as rag:
        _config(ws, rag.url)
        outcome = run(capsys, "run", "--report", "r.json", "--baseline", "artifacts/main.json")
    assert outcome.code == 0 and outcome.err == ""  # pass_rate 0.5 >= 0.5
    report = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    assert report["comparison"] is None
    notice = "no baseline: artifacts/main.json not found; the gate applied the absolute rules only"
    assert notice in report["warnings"]
    assert f"  warning: {notice}\n" in outcome.out
    assert [c["change"] for c in report["cases"]] == [None, None]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a JSON report"),
        ('{"kind": "canary", "verdict": "promote"}', "this is a canary report"),
    ],
)
def test_a_baseline_that_is_not_a_report_is_exit_2_before_any_call(
    ws: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    (ws / "main.json").write_text(content, encoding="utf-8")
    with RagServer({}) as rag:
        _config(ws, rag.url)
        outcome = run(capsys, "run", "--baseline", "main.json")
        assert rag.seen == []
    assert outcome.code == 2
    assert outcome.err.startswith(f"ragjudge: error: main.json: {message}")
    assert "Traceback" not in outcome.err


def test_an_unknown_regression_metric_is_exit_2_naming_it(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RagServer({}) as rag:
        _config(ws, rag.url, regression={"newly_failing": "<= 0", "flakiness_delta": "<= 0"})
        outcome = run(capsys, "run")
        assert rag.seen == []
    assert outcome.code == 2
    assert outcome.err.splitlines()[0] == (
        "ragjudge: error: ragjudge.yml: gate.regression.flakiness_delta: unknown regression metric 'flakiness_delta'"
    )
    assert outcome.err.splitlines()[1].startswith(
        "Tip: regression metrics are: answer_correctness_delta, cost_ratio, criteria.<name>_delta, faithfulness_delta, "
    )


def test_regression_rules_without_a_baseline_are_a_warning(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RagServer({CASES[0]["question"]: GOOD, CASES[1]["question"]: GOOD}) as rag:
        _config(ws, rag.url, regression={"newly_failing": "<= 0"})
        outcome = run(capsys, "run")
    assert outcome.code == 0
    assert (
        "  warning: no baseline: gate.regression is set but none was given (--baseline FILE or baseline.report); "
        "the gate applied the absolute rules only\n"
    ) in outcome.out


def test_repeat_from_the_flag_and_from_the_config(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RagServer({CASES[0]["question"]: BAD, CASES[1]["question"]: GOOD}) as rag:
        _config(ws, rag.url, repeat={"max": 2, "pass_at": 1})
        run(capsys, "run", "--report", "config.json")
        from_config = {q: sum(1 for s in rag.seen if s.question == q) for q in (c["question"] for c in CASES)}
        rag.seen.clear()
        run(capsys, "run", "--report", "flag.json", "--repeat", "4/1")
        from_flag = {q: sum(1 for s in rag.seen if s.question == q) for q in (c["question"] for c in CASES)}
    assert list(from_config.values()) == [2, 1]
    assert list(from_flag.values()) == [4, 1]
    case = json.loads((ws / "flag.json").read_text(encoding="utf-8"))["cases"][0]
    assert (case["status"], case["k_of_n"], len(case["runs"])) == ("fail", "0 of 4 passed", 4)


@pytest.mark.parametrize("value", ["0/0", "3/4", "11/1", "x", "3/", "2/0", "-1/1"])
def test_a_bad_repeat_flag_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    outcome = run(capsys, "run", f"--repeat={value}")
    assert outcome.code == 2
    assert f"ragjudge: error: argument --repeat: {value!r}" in outcome.err


def test_repeat_pass_at_above_max_in_the_config_is_exit_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RagServer({}) as rag:
        _config(ws, rag.url, repeat={"max": 2, "pass_at": 3})
        outcome = run(capsys, "run")
    assert outcome.code == 2
    assert "ragjudge.yml: repeat: pass_at (3) must not exceed max (2)" in outcome.err
