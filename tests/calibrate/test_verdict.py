"""`--fail-under` parsing and the calibration advice's wording."""

from __future__ import annotations

import json

import pytest

from ragjudge.calibrate.verdict import Bar, evaluate, meaning, parse_fail_under
from ragjudge.cli import main
from ragjudge.stats.agreement import compare


@pytest.mark.parametrize("text", ["kappa =0.6", "kappa= 0.6", " kappa = 0.6 ", "kappa=0.6"])
def test_fail_under_accepts_spaces_around_the_name_and_value(text: str) -> None:
    assert parse_fail_under([text]) == [Bar("kappa", 0.6)]


def test_fail_under_with_spaces_works_on_the_command_line(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the calibration record is written to ./.ragjudge
    rows = [{"id": i, "human": 1, "judge": 1 if i < 27 else 0} for i in range(30)]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "ragjudge.yml").write_text("judge: {provider: offline}\n", encoding="utf-8")
    args = ["calibrate", "--config", str(tmp_path / "ragjudge.yml"), "--labels", str(labels)]
    assert main([*args, "--fail-under", "tpr =0.8"]) == 0
    assert "tpr 0.900 >= 0.8" in capsys.readouterr().out
    assert main([*args, "--fail-under", " tpr = 0.95 "]) == 1
    assert "tpr 0.900 < 0.95" in capsys.readouterr().out


def test_a_slightly_strict_judge_is_called_strict() -> None:
    human = [4, 4, 4, 4, 4, 4, 4, 4, 4, 4]
    judge = [4, 4, 4, 4, 4, 4, 4, 4, 4, 3]  # one point lower on one item in ten
    report = compare(human, judge, binary=False)
    lines = meaning(report, evaluate(report, None, []), None)
    assert lines[-1] == "On average the judge is strict (scores below the human) by 0.10 points."


def test_a_slightly_lenient_judge_is_called_lenient() -> None:
    report = compare([3] * 10, [3] * 9 + [4], binary=False)
    lines = meaning(report, evaluate(report, None, []), None)
    assert lines[-1] == "On average the judge is lenient (scores above the human) by 0.10 points."


def test_a_judge_that_matches_on_average_gets_no_lean() -> None:
    report = compare([3, 3], [2, 4], binary=False)
    lines = meaning(report, evaluate(report, None, []), None)
    assert not any("On average" in line for line in lines)
