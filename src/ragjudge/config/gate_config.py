"""`gate:`, `baseline:` and `repeat:`: the rules a run must meet, main's report it is compared with, and
re-running what fails."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from ragjudge.config.section import Section
from ragjudge.metrics.names import CONTEXT_RECALL, LATENCY_MS, P95_LATENCY_MS, PASS_RATE, REJECTION_ACCURACY

DEFAULT_CASE_RULES: dict[str, str] = {CONTEXT_RECALL: ">= 1.0", LATENCY_MS: "<= 10000"}
DEFAULT_SUITE_RULES: dict[str, str] = {
    PASS_RATE: ">= 0.9",
    REJECTION_ACCURACY: ">= 0.9",
    P95_LATENCY_MS: "<= 3000",
}


class GateConfig(Section):
    """Threshold rules: `metric: "OP number"` per case and per suite, and against the baseline."""

    case: dict[str, str] | None = Field(
        None,
        description="Rules each case must meet; given, they replace the defaults (context_recall >= 1.0, "
        "latency_ms <= 10000).",
    )
    suite: dict[str, str] | None = Field(
        None,
        description="Rules on the suite's metrics; given, they replace the defaults (pass_rate >= 0.9, "
        "rejection_accuracy >= 0.9, p95_latency_ms <= 3000), and pass_rate >= 1.0 is added if absent.",
    )
    regression: dict[str, str] | None = Field(
        None, description="Rules against the baseline (see docs/regressions.md); default newly_failing <= 0."
    )
    significance: float = Field(
        0.05, gt=0, le=0.5, description="A delta or ratio rule fails only when the change is also significant."
    )
    max_error_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description="The error budget, 0 to 1: when a larger share of the cases errored, the verdict is `error` "
        "(exit 3) naming the error that dominated, whatever the cases left say; a run where every case errored "
        "is `error` whatever the budget.",
    )


class BaselineConfig(Section):
    """The report from main that a run is compared with."""

    report: Path | None = Field(
        None,
        description="Main's JSON report (relative to the config file's folder); `--baseline` overrides. Unset: "
        "no comparison; a file that does not exist is a warning.",
    )
    max_age_days: float = Field(7.0, gt=0, description="An older baseline is compared, with a warning.")


class RepeatConfig(Section):
    """Re-running what fails, to tell a flaky case from a broken one."""

    max: int = Field(1, ge=1, le=10, description="Runs at most per case; 1 runs every case once.")
    pass_at: int = Field(1, ge=1, le=10, description="Passing runs a case needs.")

    @model_validator(mode="after")
    def _reachable(self) -> RepeatConfig:
        if self.pass_at > self.max:
            raise ValueError(f"pass_at ({self.pass_at}) must not exceed max ({self.max})")
        return self
