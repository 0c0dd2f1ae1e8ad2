"""The judge's credentials in the report (`judge_trust`) and in the comment's footer."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tests.fakes.rag import make_case, make_trace, ok_result
from tests.fakes.reports import make_report

from ragjudge.calibrate.fingerprint import fingerprint_of, judge_trust, new_record, write_record
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.gate.scoring import score_case
from ragjudge.judge.prompting import prompt_sources
from ragjudge.report.markdown import render_comment
from ragjudge.report.provenance_block import JudgeTrustBlock

PROMPT = hashlib.sha256(prompt_sources().encode("utf-8")).hexdigest()[:12]


def _judge(tmp_path: Path, **kw: Any) -> JudgeConfig:
    return JudgeConfig(
        provider="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1", calibration=tmp_path / "c.json", **kw
    )


def test_a_calibrated_judge_brings_its_agreement_labels_and_date(tmp_path: Path) -> None:
    judge = _judge(tmp_path)
    record = new_record(fingerprint_of(judge), "fit", n=120, agreement=0.91, ci95=[0.84, 0.95])
    write_record(record.model_copy(update={"calibrated_at": "2026-11-30T09:00:00+00:00"}), tmp_path / "c.json")
    assert judge_trust(judge, config="ci/ragjudge.yml") == {
        "model": "gpt-4o-mini",
        "prompt_fingerprint": PROMPT,
        "calibration": "ok",
        "calibrated": True,
        "stale": False,
        "config": "ci/ragjudge.yml",
        "agreement": 0.91,
        "agreement_interval": [0.84, 0.95],
        "labels": 120,
        "calibrated_at": "2026-11-30T09:00:00+00:00",
    }


def test_a_changed_judge_is_stale_and_not_calibrated(tmp_path: Path) -> None:
    write_record(new_record(fingerprint_of(_judge(tmp_path)), "fit", n=10, agreement=0.9), tmp_path / "c.json")
    trust = judge_trust(_judge(tmp_path, temperature=0.7))
    assert (trust["calibration"], trust["calibrated"], trust["stale"], trust["labels"]) == ("stale", False, True, 10)


def test_no_record_is_missing_and_the_offline_judge_needs_none(tmp_path: Path) -> None:
    assert judge_trust(_judge(tmp_path))["calibration"] == "missing"
    assert judge_trust(JudgeConfig()) == {"model": "offline-lexical", "calibration": "not applicable", "config": None}


def _comment(trust: dict[str, Any], warnings: list[str] | None = None) -> list[str]:
    result = score_case(make_case("a"), ok_result(make_trace()), None, [])
    report = make_report([result], warnings=warnings or [], judge_info={"judge": "gpt-4o-mini", "lexical": False})
    report = report.model_copy(update={"judge_trust": JudgeTrustBlock.model_validate(trust)})
    return render_comment(report).splitlines()


def test_the_footer_says_who_judged_and_how_well_it_agrees_with_people() -> None:
    trust = {"model": "gpt-4o-mini", "prompt_fingerprint": "3f2a91c0ffee", "calibration": "ok", "calibrated": True}
    trust |= {"agreement": 0.91, "agreement_interval": [0.84, 0.95], "labels": 120, "calibrated_at": "2026-11-30T09"}
    assert _comment(trust)[-1] == (
        "<sub>Judge gpt-4o-mini · prompt 3f2a91 · agrees with people 0.910 [0.840–0.950] on 120 labels, "
        "2026-11-30</sub>"
    )


def test_an_uncalibrated_judge_names_the_config_that_ran() -> None:
    warning = (
        "judge calibration missing: no calibration record at .ragjudge/calibration.json; run `ragjudge calibrate "
        "--config ci/gate.yml --labels LABELS.jsonl` (see docs/calibrate.md) (set judge.require_calibration: true "
        "to refuse to gate)"
    )
    lines = _comment(
        {"model": "gpt-4o-mini", "prompt_fingerprint": "3f2a91c0ffee", "calibration": "missing"}, [warning]
    )
    assert lines[-1].startswith("<sub>Judge gpt-4o-mini · prompt 3f2a91 · judge calibration missing: ")
    assert "--config ci/gate.yml --labels LABELS.jsonl" in lines[-1]
    assert sum("judge calibration missing" in line for line in lines) == 1  # in the footer only


def test_the_pairwise_calibration_is_among_the_credentials(tmp_path: Path) -> None:
    judge = _judge(tmp_path)
    pairwise = {"n": 40, "agreement": 0.8, "ci95": [0.65, 0.9], "position_consistency": 0.95}
    write_record(
        new_record(fingerprint_of(judge), "fit", n=120, agreement=0.91, pairwise=pairwise), tmp_path / "c.json"
    )
    trust = judge_trust(judge)
    assert (trust["pairwise_agreement"], trust["pairwise_agreement_interval"], trust["pairwise_labels"]) == (
        0.8,
        [0.65, 0.9],
        40,
    )
    footer = _comment({**trust, "prompt_fingerprint": "3f2a91c0ffee", "agreement_interval": None})[-1]
    assert footer.startswith("<sub>Judge gpt-4o-mini · prompt 3f2a91 · agrees with people 0.910 on 120 labels, ")
    assert footer.endswith(" · pairwise agrees 0.800 on 40 pairs</sub>")
    # A record without the pairwise measure says nothing of it.
    write_record(new_record(fingerprint_of(judge), "fit", n=120, agreement=0.91), tmp_path / "c.json")
    assert "pairwise_agreement" not in judge_trust(judge)
