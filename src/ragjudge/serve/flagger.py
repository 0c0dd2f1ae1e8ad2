"""Flagger's webhooks, answered by Flagger's rules: only a 2xx counts as success.

- `pre-rollout`: start an analysis for this revision (checksum) unless one is running or done; 200.
- `rollout`: 200 unless the latest finished analysis of this revision says rollback (then 500 with the
  reasons, which Flagger counts toward its failure threshold); re-analyse after `serve.reanalyse_s`,
  or at once after an error.
- `confirm-promotion`: 200 only when that analysis says promote, else 403 with why (Flagger waits).
- `rollback`: 200 when that analysis says rollback (Flagger rolls back), else 404.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ragjudge.errors import ConfigError
from ragjudge.serve.analyses import Busy, NamesFull, Registry
from ragjudge.serve.state import Analysis, AnalysisSpec

HOOKS = ("pre-rollout", "rollout", "confirm-promotion", "rollback")


@dataclass(frozen=True)
class HookAnswer:
    status: int
    text: str
    """One line for Flagger's events and logs: the decision and its reasons."""
    retry_after_s: int | None = None


def describe(analysis: Analysis) -> str:
    """`promote`, `rollback: <reasons>`, `inconclusive: <reasons>`, `analysis running` or `error: <why>`."""
    if analysis.status == "running":
        return "analysis running"
    if analysis.status == "error":
        return f"error: {analysis.error}"
    reasons = "; ".join(analysis.reasons)
    return f"{analysis.verdict}: {reasons}" if reasons else str(analysis.verdict)


def _revision(spec: AnalysisSpec) -> str:
    return f"checksum {spec.checksum}" if spec.checksum else "this revision"


def _of_revision(registry: Registry, spec: AnalysisSpec) -> tuple[Analysis | None, Analysis | None]:
    """(the running one, the latest finished one) among this checksum's analyses."""
    mine = [a for a in registry.history(spec.name) if a.spec.checksum == spec.checksum]
    running = next((a for a in mine if a.status == "running"), None)
    finished = next((a for a in mine if a.status != "running"), None)
    return running, finished


def _start(registry: Registry, spec: AnalysisSpec) -> HookAnswer:
    try:
        started = registry.start(spec)
    except Busy as busy:
        return HookAnswer(429, "too many analyses running; try again later", busy.retry_after_s)
    except NamesFull as full:
        return HookAnswer(503, str(full))
    analysis = started.analysis
    if started.created:
        return HookAnswer(200, f"analysis {analysis.id} started for {_revision(spec)}")
    return HookAnswer(
        200,
        f"analysis {analysis.id} for {_revision(analysis.spec)} is still running; "
        f"the analysis of {_revision(spec)} starts at a later rollout hook",
    )


def pre_rollout(registry: Registry, spec: AnalysisSpec) -> HookAnswer:
    running, finished = _of_revision(registry, spec)
    existing = running or finished
    if existing is not None:
        return HookAnswer(200, f"analysis {existing.id} for {_revision(spec)}: {describe(existing)}")
    return _start(registry, spec)


def rollout(registry: Registry, spec: AnalysisSpec, reanalyse_s: float) -> HookAnswer:
    running, finished = _of_revision(registry, spec)
    latest = registry.latest(spec.name)
    note = ""
    # An error is not a verdict (e.g. Prometheus was down): try again at once rather than after reanalyse_s.
    stale = (
        finished is None
        or finished.status == "error"
        or finished.finished is None
        or time.monotonic() - finished.finished > reanalyse_s
    )
    if running is None and stale and (latest is None or latest.status != "running"):
        started = _start(registry, spec)
        note = " (no capacity for a fresh analysis now)" if started.status in (429, 503) else f"; {started.text}"
    if finished is not None and finished.verdict == "rollback":
        return HookAnswer(500, f"{describe(finished)}{note}")
    if finished is None:
        state = describe(running) if running is not None else f"no analysis of {_revision(spec)} yet"
        return HookAnswer(200, f"{state}{note}")
    return HookAnswer(200, f"latest analysis {finished.id}: {describe(finished)}{note}")


def confirm_promotion(registry: Registry, spec: AnalysisSpec) -> HookAnswer:
    running, finished = _of_revision(registry, spec)
    if finished is not None and finished.verdict == "promote":
        return HookAnswer(200, f"analysis {finished.id}: {describe(finished)}")
    if finished is not None:
        return HookAnswer(403, describe(finished))
    if running is not None:
        return HookAnswer(403, "analysis running")
    return HookAnswer(403, f"no analysis of {_revision(spec)} yet (a pre-rollout or rollout hook starts one)")


def rollback(registry: Registry, spec: AnalysisSpec) -> HookAnswer:
    running, finished = _of_revision(registry, spec)
    if finished is not None and finished.verdict == "rollback":
        return HookAnswer(200, describe(finished))
    latest = finished or running
    state = describe(latest) if latest is not None else f"no analysis of {_revision(spec)}"
    return HookAnswer(404, f"no rollback verdict ({state})")


def answer(hook: str, registry: Registry, spec: AnalysisSpec) -> HookAnswer:
    """The answer to one webhook call; raises ConfigError when the canary cannot be analysed (HTTP 400)."""
    if hook == "pre-rollout":
        return pre_rollout(registry, spec)
    if hook == "rollout":
        return rollout(registry, spec, registry.config.serve.reanalyse_s)
    if hook == "confirm-promotion":
        return confirm_promotion(registry, spec)
    if hook == "rollback":
        return rollback(registry, spec)
    raise ConfigError(f"unknown hook {hook!r}", tip=f"use one of {', '.join(HOOKS)}")
