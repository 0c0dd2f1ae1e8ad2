"""`ragjudge calibrate --pairwise`: the pairwise judge against people's preferences, through the real `openai` SDK
against a loopback judge, in both orders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.commands.test_run_openai import ENV_KEY
from tests.commands.test_run_pairwise import DETAIL, FALSE, Judge, fair, first_shown
from tests.fakes.openai_server import FakeOpenAI
from tests.judge.openai_helpers import KEY

GOOD = f"Refunds take {DETAIL}."
VAGUE = "Refunds take a while."
LIE = f"Refunds take {DETAIL}, and {FALSE}."
PREFERENCES = [
    {"id": "p1", "question": "How long do refunds take?", "answer_a": GOOD, "answer_b": VAGUE, "preferred": "A"},
    {"id": "p2", "question": "How long do refunds take?", "answer_a": VAGUE, "answer_b": GOOD, "preferred": "B"},
    {"id": "p3", "question": "How long do refunds take?", "answer_a": LIE, "answer_b": GOOD, "preferred": "B"},
    # The person preferred the shorter one; the fair judge sees no difference that matters: a disagreement.
    {
        "id": "p4",
        "question": "How long do refunds take?",
        "answer_a": VAGUE,
        "answer_b": "It takes a while.",
        "preferred": "B",
    },
]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _config(tmp_path: Path, base_url: str, provider: str = "openai") -> Path:
    judge: dict[str, Any] = {"provider": provider}
    if provider == "openai":
        judge |= {"model": "gpt-4o-mini", "base_url": base_url, "api_key": "${" + ENV_KEY + "}", "cache": None}
    path = tmp_path / "ragjudge.yml"
    path.write_text(yaml.safe_dump({"judge": judge}), encoding="utf-8")
    return path


def _labels(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "prefs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _calibrate(tmp_path: Path, decide: Any, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any, str]:
    with FakeOpenAI(Judge(decide)) as judge:
        config = _config(tmp_path, judge.base_url)
        argv = ["calibrate", "--config", str(config), "--pairwise", str(_labels(tmp_path, PREFERENCES))]
        code = main([*argv, "--report", str(tmp_path / "cal.json"), *extra])
    out = capsys.readouterr().out
    return code, json.loads((tmp_path / "cal.json").read_text(encoding="utf-8")), out


def test_a_fair_judge_agrees_with_people_and_is_consistent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report, out = _calibrate(tmp_path, fair, capsys, "--fail-under", "pairwise.agreement=0.7")
    assert report["pairwise"] == {
        "n": 4,
        "agreed": 3,
        "agreement": 0.75,
        "ci95": [0.3006, 0.9544],
        "position_consistency": 1.0,
        "unscored": 0,
        "bars": [
            {
                "metric": "pairwise.agreement",
                "op": ">=",
                "threshold": 0.7,
                "value": 0.75,
                "passed": True,
                "reason": "pairwise.agreement 0.750 >= 0.7",
            }
        ],
    }
    assert "pairwise: agrees with people on 3 of 4 pairs (0.750), position consistency 1.000" in out
    assert code == 0 and report["verdict"] == "fit"


def test_a_judge_that_prefers_the_first_answer_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = _calibrate(tmp_path, first_shown, capsys, "--fail-under", "pairwise.position_consistency=0.8")
    # Every pair flips with the order: every verdict is a tie, and only the person's tie (none here) would agree.
    assert (report["pairwise"]["position_consistency"], report["pairwise"]["agreed"]) == (0.0, 0)
    assert code == 1 and report["verdict"] == "unfit"
    assert report["reasons"] == ["pairwise.position_consistency 0.000 < 0.8"]


def test_bad_input_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _labels(tmp_path, [{"id": "x", "question": "q", "answer_a": "a", "answer_b": "b", "preferred": "C"}])
    config = _config(tmp_path, "http://127.0.0.1:9/v1")
    assert main(["calibrate", "--config", str(config), "--pairwise", str(bad)]) == 2
    assert f"{bad}:1: preferred: Input should be 'A', 'B' or 'tie'" in capsys.readouterr().err
    offline = _config(tmp_path, "", provider="offline")
    good = _labels(tmp_path, PREFERENCES)
    assert main(["calibrate", "--config", str(offline), "--pairwise", str(good)]) == 2
    assert (
        "--pairwise: judging pairs needs judge.provider: openai (the config has 'offline')" in capsys.readouterr().err
    )
    assert (
        main(
            [
                "calibrate",
                "--config",
                str(config),
                "--position-bias",
                str(good),
                "--fail-under",
                "pairwise.agreement=0.5",
            ]
        )
        == 2
    )
    assert "--fail-under pairwise.*: needs --pairwise FILE" in capsys.readouterr().err


def test_preferences_alone_add_to_this_judges_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragjudge.calibrate.fingerprint import fingerprint_of, new_record, read_record, write_record
    from ragjudge.config.loader import load_config

    record = tmp_path / "calibration.json"

    def run() -> tuple[Any, str]:
        with FakeOpenAI(Judge(fair)) as judge:
            config = _config(tmp_path, judge.base_url)
            text = config.read_text(encoding="utf-8").replace("judge:\n", f"judge:\n  calibration: {record}\n")
            config.write_text(text, encoding="utf-8")
            assert main(["calibrate", "--config", str(config), "--pairwise", str(_labels(tmp_path, PREFERENCES))]) == 0
            return load_config(config).judge, capsys.readouterr().out

    judge, out = run()
    assert f"record not updated: no calibration record at {record}: calibrate with --labels and --pairwise" in out
    assert not record.exists()
    write_record(new_record(fingerprint_of(judge), "fit", n=50, agreement=0.9), record)
    judge, out = run()
    assert f"pairwise figures added to {record}" in out
    kept = read_record(record)
    assert not isinstance(kept, str)
    assert (kept.n, kept.agreement, kept.verdict) == (50, 0.9, "fit")  # the labels' calibration stands as it was
    assert kept.pairwise == {"n": 4, "agreement": 0.75, "ci95": [0.3006, 0.9544], "position_consistency": 1.0}
    other = judge.model_copy(update={"temperature": 0.9})
    write_record(new_record(fingerprint_of(other), "fit", n=50, agreement=0.9), record)
    _, out = run()
    assert f"record not updated: the calibration record {record} is of another judge" in out
