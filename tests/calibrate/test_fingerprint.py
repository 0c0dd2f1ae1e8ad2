"""The judge fingerprint, the calibration record, and the gate refusing or warning on it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer, answer
from tests.judge.fake_evidence import KEY, evidence_responder, other_judges, run_config

from ragjudge.calibrate import fingerprint as fp
from ragjudge.calibrate.fingerprint import (
    DEFAULT_RECORD,
    CalibrationRecord,
    calibration_gate,
    check_calibration,
    fingerprint_of,
    new_record,
    record_path,
    write_record,
)
from ragjudge.cli import main
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.prompting import prompt_sources


def _judge(**kw: Any) -> JudgeConfig:
    values: dict[str, Any] = {"provider": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"}
    values.update(kw)
    return JudgeConfig(**values)


# --- the fingerprint ------------------------------------------------------------------------------


def test_fingerprint_is_stable_and_covers_model_host_prompts_temperature_and_combined() -> None:
    base = fingerprint_of(_judge())
    assert base.digest == fingerprint_of(_judge()).digest and len(base.digest) == 64
    assert set(base.components) == {"provider", "model", "base_url_host", "temperature", "combined", "prompts_sha256"}
    assert base.components["base_url_host"] == "127.0.0.1" and base.components["combined"] is True
    changes: list[dict[str, Any]] = [
        {"model": "gpt-4o"},
        {"base_url": "http://judge.example/v1"},
        {"temperature": 0.2},
        {"combined": False},
    ]
    for change in changes:
        assert fingerprint_of(_judge(**change)).digest != base.digest, change


def test_fingerprint_ignores_what_does_not_change_a_score() -> None:
    base = fingerprint_of(_judge()).digest
    same = [
        {"api_key": "sk-other-key-123"},
        {"seed": 99},
        {"concurrency": 2},
        {"cache": None},
        {"base_url": "https://127.0.0.1:4443/other/v1"},  # only the host counts
    ]
    for change in same:
        assert fingerprint_of(_judge(**change)).digest == base, change


def test_the_refusal_question_enters_the_fingerprint_only_when_it_is_asked() -> None:
    base = fingerprint_of(_judge())
    # Off adds nothing, so records written before the setting was counted stay valid for judges without it.
    assert fingerprint_of(_judge(), refusal_judge=False) == base and "refusal_judge" not in base.components
    asked = fingerprint_of(_judge(), refusal_judge=True)
    assert asked.digest != base.digest
    assert dict(asked.components) == {**base.components, "refusal_judge": True}


def test_every_prompt_template_is_in_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    text = prompt_sources()
    assert "--- evidence_system.j2" in text and "--- rubric_system.j2" in text and "--- correction.j2" in text
    base = fingerprint_of(_judge()).digest
    monkeypatch.setattr(fp, "prompt_sources", lambda: text.replace("You score evidence", "You rate evidence"))
    assert fingerprint_of(_judge()).digest != base


def test_the_key_never_enters_the_record(tmp_path: Path) -> None:
    judge = _judge(api_key="sk-live-very-secret-1", calibration=tmp_path / "c.json")
    write_record(new_record(fingerprint_of(judge), "fit", n=50), record_path(judge))
    assert "sk-live" not in (tmp_path / "c.json").read_text(encoding="utf-8")


def test_record_path_defaults_to_the_working_folder() -> None:
    assert record_path(_judge()) == DEFAULT_RECORD == Path(".ragjudge/calibration.json")


# --- the check ------------------------------------------------------------------------------------


def _calibrated(tmp_path: Path, verdict: str = "fit", **kw: Any) -> JudgeConfig:
    judge = _judge(calibration=tmp_path / "calibration.json", **kw)
    write_record(new_record(fingerprint_of(judge), verdict, n=50, reasons=["agreement ci95 lower bound 0.738 < 0.8"]),
                 tmp_path / "calibration.json")  # fmt: skip
    return judge


def test_a_fit_record_for_this_judge_is_ok(tmp_path: Path) -> None:
    assert check_calibration(_calibrated(tmp_path)).state == "ok"


def test_no_record_is_missing(tmp_path: Path) -> None:
    status = check_calibration(_judge(calibration=tmp_path / "none.json"))
    assert status.state == "missing"
    assert status.reason == f"judge calibration missing: no calibration record at {tmp_path / 'none.json'}"
    assert "ragjudge calibrate" in status.tip


@pytest.mark.parametrize("content", ["{not json", json.dumps({"verdict": "fit"}), json.dumps([1, 2])])
def test_a_broken_record_counts_as_missing_and_says_why(tmp_path: Path, content: str) -> None:
    (tmp_path / "c.json").write_text(content, encoding="utf-8")
    status = check_calibration(_judge(calibration=tmp_path / "c.json"))
    assert status.state == "missing" and str(tmp_path / "c.json") in status.reason


def test_a_record_linked_to_a_device_is_missing_and_says_why(tmp_path: Path) -> None:
    # Issue 40: `.ragjudge/calibration.json` may be committed as a link to /dev/zero; it is refused, not read forever.
    (tmp_path / "c.json").symlink_to("/dev/zero")
    status = check_calibration(_judge(calibration=tmp_path / "c.json"))
    assert status.state == "missing"
    assert status.reason.endswith(
        f"the calibration record {tmp_path / 'c.json'} cannot be read (refused: a device, not a file)"
    )


def test_a_changed_model_is_stale_and_says_what_changed(tmp_path: Path) -> None:
    _calibrated(tmp_path)
    status = check_calibration(_judge(calibration=tmp_path / "calibration.json", model="gpt-4o"))
    assert status.state == "stale"
    assert status.reason.startswith("judge calibration stale: the judge changed since it was calibrated on ")
    assert status.reason.endswith("(model gpt-4o-mini → gpt-4o)")


def test_changed_prompts_and_temperature_are_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _calibrated(tmp_path)
    monkeypatch.setattr(fp, "prompt_sources", lambda: "another prompt")
    status = check_calibration(_judge(calibration=tmp_path / "calibration.json", temperature=0.3))
    assert status.state == "stale" and status.reason.endswith("(temperature 0.0 → 0.3, prompt templates changed)")


@pytest.mark.parametrize(("key", "value"), [("max_answer_chars", 2000), ("max_passage_chars", 1000)])
def test_what_the_judge_is_shown_enters_the_fingerprint(tmp_path: Path, key: str, value: int) -> None:
    # Issue 40 item 13: changing either bound left a stale calibration looking current.
    _calibrated(tmp_path)
    assert check_calibration(_judge(calibration=tmp_path / "calibration.json")).state == "ok"
    default = JudgeConfig.model_fields[key].default
    status = check_calibration(_judge(calibration=tmp_path / "calibration.json", **{key: value}))
    assert status.state == "stale" and status.reason.endswith(f"(judge.{key} {default} → {value})")
    assert key not in fingerprint_of(_judge()).components  # at the default it is left out: old records stay valid


@pytest.mark.parametrize(("calibrated", "now"), [(True, False), (False, True)])
def test_a_calibration_made_with_the_other_call_shape_is_stale(tmp_path: Path, calibrated: bool, now: bool) -> None:
    _calibrated(tmp_path, combined=calibrated)
    status = check_calibration(_judge(calibration=tmp_path / "calibration.json", combined=now))
    assert status.state == "stale"
    assert status.reason.endswith(f"(judge.combined {str(calibrated).lower()} → {str(now).lower()})")
    assert check_calibration(_judge(calibration=tmp_path / "calibration.json", combined=calibrated)).state == "ok"


@pytest.mark.parametrize(("calibrated", "now"), [(False, True), (True, False)])
def test_a_calibration_made_with_the_other_refusal_setting_is_stale(
    tmp_path: Path, calibrated: bool, now: bool
) -> None:
    judge = _judge(calibration=tmp_path / "c.json")
    write_record(new_record(fingerprint_of(judge, refusal_judge=calibrated), "fit", n=50), tmp_path / "c.json")
    status = check_calibration(judge, refusal_judge=now)
    assert status.state == "stale"
    assert status.reason.endswith(f"(endpoint.refusal.judge {str(calibrated).lower()} → {str(now).lower()})")
    assert check_calibration(judge, refusal_judge=calibrated).state == "ok"


def test_an_unfit_record_is_unfit_with_its_reasons(tmp_path: Path) -> None:
    status = check_calibration(_calibrated(tmp_path, verdict="unfit"))
    assert status.state == "unfit"
    assert "found this judge unfit to gate (agreement ci95 lower bound 0.738 < 0.8)" in status.reason


def test_the_gate_warns_without_require_calibration(tmp_path: Path) -> None:
    warnings: list[str] = []
    assert calibration_gate(_judge(calibration=tmp_path / "none.json"), warnings) is None
    assert len(warnings) == 1 and warnings[0].startswith("judge calibration missing")
    assert "set judge.require_calibration: true to refuse" in warnings[0]


def test_the_gate_refuses_with_require_calibration(tmp_path: Path) -> None:
    warnings: list[str] = []
    judge = _calibrated(tmp_path, verdict="unfit", require_calibration=True)
    refusal = calibration_gate(judge, warnings)
    assert refusal is not None and refusal.startswith("not evaluated: judge calibration unfit: ")
    assert refusal.endswith("(judge.require_calibration: true)")
    assert "no case was evaluated" in warnings[0]


def test_the_offline_judge_needs_no_calibration_but_says_so_when_required() -> None:
    warnings: list[str] = []
    assert calibration_gate(JudgeConfig(provider="offline"), warnings) is None
    assert warnings == []
    assert calibration_gate(JudgeConfig(provider="offline", require_calibration=True), warnings) is None
    assert "offline judge is lexical and has no calibration to check" in warnings[0]


def test_record_model_validates_what_it_reads() -> None:
    record = CalibrationRecord.model_validate({"judge_fingerprint": "abc", "verdict": "fit", "extra": 1})
    assert record.schema_version == 1 and record.model_extra == {"extra": 1}


# --- end to end: calibrate, then run ----------------------------------------------------------------

CASES = [{"id": f"c{i}", "question": f"Question {i}?"} for i in range(3)]
REPLIES = {f"Question {i}?": answer("Refunds take 5 days.", ["d1"], {"d1": "Refunds take 5 days."}) for i in range(3)}


@dataclass
class World:
    folder: Path
    fake: FakeOpenAI
    rag: RagServer
    capsys: pytest.CaptureFixture[str]

    def config(self, refusal_judge: bool = False, **judge: Any) -> Path:
        judge.setdefault("calibration", str(self.folder / "calibration.json"))
        endpoint = {"refusal": {"judge": True}} if refusal_judge else None
        return Path(run_config(self.folder, self.fake.base_url, self.rag.url, CASES, endpoint=endpoint, **judge))

    def calibrate(self, agree: int, n: int = 50, refusal_judge: bool = False, **judge: Any) -> int:
        labels = self.folder / "labels.jsonl"
        rows = [{"id": i, "human": 1, "judgeScore": 1 if i < agree else 0} for i in range(n)]
        labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        code = main(["calibrate", "--config", str(self.config(refusal_judge, **judge)), "--labels", str(labels)])
        self.capsys.readouterr()
        return code

    def run(self, refusal_judge: bool = False, **judge: Any) -> tuple[int, dict[str, Any], str]:
        report, comment = self.folder / "report.json", self.folder / "comment.md"
        config = self.config(refusal_judge, **judge)
        code = main(["run", "--config", str(config), "--report", str(report), "--comment-file", str(comment)])
        self.capsys.readouterr()
        return code, json.loads(report.read_text(encoding="utf-8")), comment.read_text(encoding="utf-8")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[World]:
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI(evidence_responder(other=other_judges), api_key=KEY) as fake, RagServer(REPLIES) as rag:
        yield World(tmp_path, fake, rag, capsys)


def _calibration_warnings(report: dict[str, Any]) -> list[str]:
    return [w for w in report["warnings"] if w.startswith("judge calibration")]


def test_a_calibrated_judge_runs_without_a_warning(world: World) -> None:
    assert world.calibrate(agree=50) == 0
    assert world.fake.call_count == 0  # the labels carried the judge's scores
    code, report, _ = world.run()
    assert code == 0 and report["verdict"] == "pass"
    assert _calibration_warnings(report) == []


def test_a_changed_model_warns_in_the_report_and_the_comment(world: World) -> None:
    world.calibrate(agree=50)
    code, report, comment = world.run(model="gpt-4o")
    assert code == 0 and report["verdict"] == "pass"
    (warning,) = _calibration_warnings(report)
    assert "judge calibration stale" in warning and "(model gpt-4o-mini → gpt-4o)" in warning
    assert "judge calibration stale" in comment and "gpt-4o-mini → gpt-4o" in comment


def test_a_changed_prompt_is_refused_when_calibration_is_required(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.calibrate(agree=50, require_calibration=True)
    monkeypatch.setattr(fp, "prompt_sources", lambda: prompt_sources() + "\nBe generous.")
    code, report, comment = world.run(require_calibration=True)
    assert code == 3 and report["verdict"] == "error"
    assert world.fake.call_count == 0 and world.rag.seen == []  # nothing was called
    reasons = {c["id"]: c["failed_conditions"] for c in report["cases"]}
    assert set(reasons) == {"c0", "c1", "c2"}
    for conditions in reasons.values():
        (reason,) = conditions
        assert reason.startswith("not evaluated: judge calibration stale: the judge changed since")
        assert "prompt templates changed" in reason and reason.endswith("(judge.require_calibration: true)")
    assert all(c["status"] == "error" for c in report["cases"])
    assert "ERROR" in comment and "prompt templates changed" in comment


def test_a_missing_calibration_is_refused_or_warned(world: World) -> None:
    code, report, _ = world.run(require_calibration=True)
    assert code == 3 and report["verdict"] == "error"
    assert report["cases"][0]["failed_conditions"] == [
        f"not evaluated: judge calibration missing: no calibration record at {world.folder / 'calibration.json'} "
        "(judge.require_calibration: true)"
    ]
    code, report, comment = world.run()
    assert code == 0 and "judge calibration missing" in _calibration_warnings(report)[0]
    assert "judge calibration missing" in comment


def test_an_unfit_calibration_is_refused_or_warned(world: World) -> None:
    assert world.calibrate(agree=40) == 1  # 0.80 agreement, lower bound 0.67
    record = yaml.safe_load((world.folder / "calibration.json").read_text(encoding="utf-8"))
    assert record["verdict"] == "unfit"
    code, report, _ = world.run(require_calibration=True)
    assert code == 3
    assert report["cases"][0]["failed_conditions"][0].startswith(
        "not evaluated: judge calibration unfit: the calibration on "
    )
    assert "agreement ci95 lower bound 0.670 < 0.8" in report["cases"][0]["failed_conditions"][0]
    code, report, _ = world.run()
    assert code == 0 and "judge calibration unfit" in _calibration_warnings(report)[0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"combined": False}, "judge.combined true → false"),
        ({"refusal_judge": True}, "endpoint.refusal.judge false → true"),
    ],
)
def test_changing_how_the_judge_is_asked_after_calibrating_warns(
    world: World, change: dict[str, Any], words: str
) -> None:
    world.calibrate(agree=50)
    code, report, comment = world.run(**change)
    assert code == 0
    (warning,) = _calibration_warnings(report)
    assert "judge calibration stale" in warning and f"({words})" in warning
    assert words in comment


def test_recalibrating_after_a_change_clears_the_warning(world: World) -> None:
    world.calibrate(agree=50)
    assert _calibration_warnings(world.run(model="gpt-4o")[1])
    world.calibrate(agree=50, model="gpt-4o")
    assert _calibration_warnings(world.run(model="gpt-4o")[1]) == []


def test_calibrating_with_the_refusal_question_records_it_and_clears_the_warning(world: World) -> None:
    world.calibrate(agree=50, refusal_judge=True)
    record = json.loads((world.folder / "calibration.json").read_text(encoding="utf-8"))
    assert record["components"]["refusal_judge"] is True
    assert _calibration_warnings(world.run(refusal_judge=True)[1]) == []


def test_calibrate_judges_with_the_refusal_question_the_gate_asks(tmp_path: Path) -> None:
    from ragjudge.commands.calibrate import _Judges
    from ragjudge.config.loader import load_config
    from ragjudge.judge.openai_judge import OpenAIJudge

    for asked in (False, True):
        path = run_config(tmp_path, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/ask", CASES,
                          endpoint={"refusal": {"judge": asked}})  # fmt: skip
        judge = _Judges(load_config(path)).judge()
        assert isinstance(judge, OpenAIJudge) and judge.classify_refusal is asked


def test_the_reference_switch_and_the_criteria_text_are_part_of_the_fingerprint() -> None:
    from ragjudge.calibrate.fingerprint import _changes  # the words a stale record is reported with

    criterion = {"question": "Asks for the order number?", "score_1": "never", "score_5": "always"}
    base = fingerprint_of(_judge())
    off = fingerprint_of(_judge(reference=False))
    with_criteria = fingerprint_of(_judge(criteria={"asks_for_order": criterion}))
    reworded = fingerprint_of(_judge(criteria={"asks_for_order": {**criterion, "score_5": "every time"}}))
    assert len({base.digest, off.digest, with_criteria.digest, reworded.digest}) == 4
    assert off.components["reference"] is False and "reference" not in base.components
    assert _changes(base.components, off.components) == ["judge.reference true → false"]
    assert _changes(with_criteria.components, reworded.components) == ["judge.criteria changed"]
