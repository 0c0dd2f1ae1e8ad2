"""The judge's credentials for the report (`judge_trust`): its model, its prompts' fingerprint and the calibration
it is gated on, read from the calibration record the gate already checks."""

from __future__ import annotations

import hashlib
from typing import Any

from ragjudge.calibrate.fingerprint import check_calibration, read_record, record_path
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.prompting import prompt_sources


def judge_trust(judge: JudgeConfig, refusal_judge: bool = False, config: str | None = None) -> dict[str, Any]:
    """The `judge_trust` block's keys for this judge."""
    if judge.provider != "openai":
        return {"model": "offline-lexical", "calibration": "not applicable", "config": config}
    status = check_calibration(judge, refusal_judge, config)
    trust: dict[str, Any] = {
        "model": judge.model,
        "prompt_fingerprint": hashlib.sha256(prompt_sources().encode("utf-8")).hexdigest()[:12],
        "calibration": status.state,
        "calibrated": status.state == "ok",
        "stale": status.state == "stale",
        "config": config,
    }
    record = read_record(record_path(judge))
    if not isinstance(record, str) and status.state != "missing":
        trust.update(
            agreement=record.agreement,
            agreement_interval=list(record.ci95) if record.ci95 else None,
            labels=record.n,
            calibrated_at=record.calibrated_at or None,
        )
    return trust
