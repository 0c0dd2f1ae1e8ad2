"""One canary analysis as the service keeps it, and its JSON view (`GET /v1/analyses/{name}`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ragjudge.canary.report import CanaryReport
from ragjudge.canary.values import Verdict

Status = Literal["running", "done", "error"]


@dataclass(frozen=True)
class AnalysisSpec:
    """What to analyse: the canary's identity and the per-canary overrides of the config."""

    name: str
    namespace: str
    checksum: str | None = None
    """Flagger's canary revision checksum (or any revision id a caller sends); None when not given."""
    treatment: str | None = None
    """The canary's URL; None: `canary.treatment` with `{name}`/`{namespace}` filled in."""
    control: str | None = None
    """The stable version's URL; None: `canary.control`, likewise."""
    sample_size: int | None = None
    """Ask only the first N questions of `canary.sample`."""
    feedback_url: str | None = None
    """Read the feedback counts JSON from this URL instead of `canary.feedback`."""


@dataclass(frozen=True)
class Analysis:
    """One analysis: running, done (with a verdict) or error (with why)."""

    id: str
    spec: AnalysisSpec
    status: Status
    started_at: str
    """ISO 8601, UTC, to the second."""
    started: float
    """`time.monotonic()` at the start."""
    finished_at: str | None = None
    finished: float | None = None
    verdict: Verdict | None = None
    reasons: tuple[str, ...] = ()
    error: str | None = None
    """Why there is no verdict: `interrupted`, `could not evaluate: …`, a config or feedback error."""
    report: CanaryReport | None = None
    """The same report `ragjudge canary --report` writes; None while running or when nothing ran."""

    @property
    def duration_s(self) -> float | None:
        return None if self.finished is None else self.finished - self.started


def view(analysis: Analysis) -> dict[str, Any]:
    """The JSON answer: the fields docs/serve.md promises (`name`, `status`, `verdict`, `reasons`, `metrics`,
    `started_at`, `finished_at`, `checksum`) and `id`, `namespace`, `error`, `warnings`, `duration_s`."""
    report = analysis.report
    duration = analysis.duration_s
    return {
        "id": analysis.id,
        "name": analysis.spec.name,
        "namespace": analysis.spec.namespace,
        "checksum": analysis.spec.checksum,
        "status": analysis.status,
        "verdict": analysis.verdict,
        "reasons": list(analysis.reasons),
        "error": analysis.error,
        "metrics": {k: v.model_dump() for k, v in report.metrics.items()} if report else {},
        "warnings": list(report.warnings) if report else [],
        "decision": report.decision if report else None,
        "confidence": report.confidence if report else None,
        "started_at": analysis.started_at,
        "finished_at": analysis.finished_at,
        "duration_s": round(duration, 3) if duration is not None else None,
    }
