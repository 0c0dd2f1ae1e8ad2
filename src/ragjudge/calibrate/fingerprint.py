"""The judge fingerprint, the calibration record, and the gate's check of one against the other.

A fingerprint is the sha256 of what decides how the model judge scores: the model, the host of
`base_url`, the text of every prompt template, the temperature, and whether the rubric and the
claims are asked in one call (`judge.combined`): the combined reply is a different instrument
from the two separate ones, so a calibration made one way is stale the other way. The same goes for
`endpoint.refusal.judge`, which adds the refusal question to the rubric call; it enters the hash only when
it is on, so records made before it was counted stay valid for judges that do not ask it. `ragjudge calibrate`
writes it into the calibration record (`judge.calibration`, by default
`.ragjudge/calibration.json` in the working directory) with its verdict. `ragjudge run` with
`judge.provider: openai` compares the current fingerprint with the record: a missing record,
an unfit verdict or a stale fingerprint is a warning in the report and the comment, or, with
`judge.require_calibration: true`, a refusal to gate (every case errors with the reason, the
verdict is `error`, exit 3).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.errors import RagjudgeError, UsageError
from ragjudge.judge.interface import host_of
from ragjudge.judge.prompting import prompt_sources
from ragjudge.repofiles.bounded import Bound, read_bounded

DEFAULT_RECORD = Path(".ragjudge/calibration.json")


def calibrate_tip(config: str | None = None) -> str:
    """What to run, with the config the run actually read (`ragjudge.yml` when it was built in code)."""
    where = config if config and config != "(defaults)" else "ragjudge.yml"
    return f"run `ragjudge calibrate --config {where} --labels LABELS.jsonl` (see docs/calibrate.md)"


_NAMES = {
    "model": "model",
    "base_url_host": "base_url host",
    "temperature": "temperature",
    "provider": "provider",
    "combined": "judge.combined",
    "refusal_judge": "endpoint.refusal.judge",
    "reference": "judge.reference",
    "criteria_sha256": "judge.criteria",
    "max_answer_chars": "judge.max_answer_chars",
    "max_passage_chars": "judge.max_passage_chars",
}
_SHOWN = ("max_answer_chars", "max_passage_chars")
"""The judge's bounds on what it is shown, in the fingerprint when not the default."""


@dataclass(frozen=True)
class Fingerprint:
    """What the judge is, hashed."""

    digest: str
    """sha256 hex of the components."""
    components: Mapping[str, Any]
    """model, base_url_host, temperature, combined, prompts_sha256 and, when on, refusal_judge (or the offline
    judge's settings); reference, and criteria_sha256 when there are criteria."""


def fingerprint_of(judge: JudgeConfig, refusal_judge: bool = False) -> Fingerprint:
    """`refusal_judge` is `endpoint.refusal.judge`: the judge is then also asked whether the answer declined."""
    if judge.provider == "offline":
        components: dict[str, Any] = {
            "provider": "offline",
            "model": "offline-lexical",
            "min_overlap": judge.min_overlap,
        }
    else:
        components = {
            "provider": judge.provider,
            "model": judge.model,
            "base_url_host": host_of(judge.base_url),
            "temperature": judge.temperature,
            "combined": judge.combined,
            "prompts_sha256": hashlib.sha256(prompt_sources().encode("utf-8")).hexdigest(),
        }
        if refusal_judge:
            components["refusal_judge"] = True
        # How much of the answer and of each passage the model is shown decides what it can find: entered only
        # when not the default, so records made before they were counted stay valid for judges at the defaults.
        for key in _SHOWN:
            if getattr(judge, key) != JudgeConfig.model_fields[key].default:
                components[key] = getattr(judge, key)
    # Whether answers are judged against their reference, and the team's criteria word for word, decide what
    # the judge is asked: a calibration made without them measured another instrument.
    # Entered only when off (it is on by default), as refusal_judge only when on.
    if not judge.reference:
        components["reference"] = False

    if judge.criteria:
        criteria = {name: c.model_dump(mode="json") for name, c in sorted(judge.criteria.items())}
        components["criteria_sha256"] = hashlib.sha256(
            json.dumps(criteria, sort_keys=True, ensure_ascii=False).encode("utf-8")
        ).hexdigest()
    blob = json.dumps(components, sort_keys=True, separators=(",", ":"))
    return Fingerprint(hashlib.sha256(blob.encode("utf-8")).hexdigest(), components)


def record_path(judge: JudgeConfig) -> Path:
    return judge.calibration if judge.calibration is not None else DEFAULT_RECORD


class CalibrationRecord(BaseModel):
    """The calibration record file: the last `ragjudge calibrate --labels` result for a judge."""

    model_config = ConfigDict(extra="allow")

    schema_version: Literal[1] = 1
    judge_fingerprint: str
    components: dict[str, Any] = Field(default_factory=dict)
    """The fingerprint's inputs, so that a stale record can say what changed."""
    verdict: Literal["fit", "unfit"]
    calibrated_at: str = ""
    n: int | None = None
    agreement: float | None = None
    ci95: list[float] | None = None
    labels: str | None = None
    reasons: list[str] = Field(default_factory=list)
    """Why the verdict is what it is (each bar, each bias check)."""
    pairwise: dict[str, Any] | None = None
    """The pairwise judge against people's preferences (`--pairwise`): `n`, `agreement`, `ci95`,
    `position_consistency`; null when it was never measured for this judge."""


def new_record(fingerprint: Fingerprint, verdict: Literal["fit", "unfit"], **fields: Any) -> CalibrationRecord:
    return CalibrationRecord(
        judge_fingerprint=fingerprint.digest,
        components=dict(fingerprint.components),
        verdict=verdict,
        calibrated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        **fields,
    )


def write_record(record: CalibrationRecord, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the calibration record ({exc.strerror})") from None


PAIRWISE_KEPT = ("n", "agreement", "ci95", "position_consistency")


def kept_pairwise(figures: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the record keeps of `calibrate --pairwise`'s figures."""
    return {k: figures.get(k) for k in PAIRWISE_KEPT} if figures else None


def add_pairwise(path: Path, fingerprint: Fingerprint, figures: Mapping[str, Any]) -> str | None:
    """Adds the pairwise judge's figures to the record of this very judge; why not (a sentence) otherwise."""
    record = read_record(path)
    if isinstance(record, str):
        return record + ": calibrate with --labels and --pairwise together to make one"
    if record.judge_fingerprint != fingerprint.digest:
        return f"the calibration record {path} is of another judge: calibrate with --labels and --pairwise together"
    write_record(record.model_copy(update={"pairwise": kept_pairwise(figures)}), path)
    return None


_RECORD_BOUND = Bound(
    10_000_000, "over 10,000,000 bytes, more than any calibration record", tip="run `ragjudge calibrate` again"
)


def read_record(path: Path) -> CalibrationRecord | str:
    """The record, or why there is none usable (a sentence naming the file)."""
    if not path.exists():
        return f"no calibration record at {path}"
    try:
        # A repository file: a committed link to /dev/zero or to a FIFO is refused, not read forever.
        data = json.loads(read_bounded(path, _RECORD_BOUND).decode("utf-8"))
    except RagjudgeError as exc:
        return f"the calibration record {path} cannot be read ({exc.message.removeprefix(f'{path}: ')})"
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"the calibration record {path} cannot be read ({type(exc).__name__})"
    try:
        return CalibrationRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        return f"the calibration record {path} is not valid ({loc}: {first['msg']})"


State = Literal["ok", "missing", "stale", "unfit"]


@dataclass(frozen=True)
class CalibrationStatus:
    """Whether the current judge has a fit calibration, and if not, why and what to do."""

    state: State
    reason: str
    tip: str = ""


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    out = []
    for key in ("provider", "model", "base_url_host", "temperature", "combined"):
        if key in new and old.get(key) != new.get(key):
            out.append(f"{_NAMES[key]} {_shown(old.get(key, '?'))} → {_shown(new[key])}")
    was, now = old.get("refusal_judge", False), new.get("refusal_judge", False)  # absent means off
    if was != now:
        out.append(f"{_NAMES['refusal_judge']} {_shown(was)} → {_shown(now)}")
    was, now = old.get("reference", True), new.get("reference", True)  # absent means on
    if was != now:
        out.append(f"{_NAMES['reference']} {_shown(was)} → {_shown(now)}")
    for key in _SHOWN:
        default = JudgeConfig.model_fields[key].default
        was, now = old.get(key, default), new.get(key, default)  # absent means the default
        if was != now:
            out.append(f"{_NAMES[key]} {_shown(was)} → {_shown(now)}")
    if old.get("criteria_sha256") != new.get("criteria_sha256"):
        out.append("judge.criteria changed")
    if old.get("prompts_sha256") != new.get("prompts_sha256") and "prompts_sha256" in new:
        out.append("prompt templates changed")
    return out or ["fingerprint differs"]


def _shown(value: Any) -> str:
    # As written in ragjudge.yml: `true`/`false`, not Python's True/False.
    return str(value).lower() if isinstance(value, bool) else str(value)


def check_calibration(judge: JudgeConfig, refusal_judge: bool = False, config: str | None = None) -> CalibrationStatus:
    """Compare the configured judge with its calibration record: missing, stale, unfit or ok."""
    path = record_path(judge)
    record = read_record(path)
    if isinstance(record, str):
        return CalibrationStatus("missing", f"judge calibration missing: {record}", calibrate_tip(config))
    current = fingerprint_of(judge, refusal_judge)
    when = f" on {record.calibrated_at}" if record.calibrated_at else ""
    if record.judge_fingerprint != current.digest:
        what = ", ".join(_changes(record.components, current.components))
        return CalibrationStatus(
            "stale",
            f"judge calibration stale: the judge changed since it was calibrated{when} ({what})",
            f"calibrate it again: {calibrate_tip(config)}",
        )
    if record.verdict != "fit":
        why = " and ".join(record.reasons) or "below the bar"
        return CalibrationStatus(
            "unfit",
            f"judge calibration unfit: the calibration{when} found this judge unfit to gate ({why})",
            "fix the rubric or the model, then calibrate again",
        )
    return CalibrationStatus("ok", f"judge calibrated{when}: fit")


def calibration_gate(
    judge: JudgeConfig, warnings: list[str], refusal_judge: bool = False, config: str | None = None
) -> str | None:
    """The gate's check: appends a warning, and returns the reason to refuse when calibration is required.
    `config` is the config file the run read, for the command the warning says to run."""
    if judge.provider != "openai":
        if judge.require_calibration:
            warnings.append(
                "judge.require_calibration is set, but the offline judge is lexical and has no calibration "
                "to check; it applies to judge.provider: openai"
            )
        return None
    status = check_calibration(judge, refusal_judge, config)
    if status.state == "ok":
        return None
    if judge.require_calibration:
        warnings.append(f"{status.reason}; no case was evaluated (judge.require_calibration: true); {status.tip}")
        return f"not evaluated: {status.reason} (judge.require_calibration: true)"
    warnings.append(f"{status.reason}; {status.tip} (set judge.require_calibration: true to refuse to gate)")
    return None


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
        if record.pairwise:
            trust.update(
                pairwise_agreement=record.pairwise.get("agreement"),
                pairwise_agreement_interval=record.pairwise.get("ci95"),
                pairwise_labels=record.pairwise.get("n"),
            )
    return trust
