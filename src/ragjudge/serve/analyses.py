"""The analyses the service runs: started in the background, one running per canary name, at most
`serve.max_concurrent` at once, the latest `serve.keep` remembered per name, at most `serve.max_names`
names (a new one drops the name whose last analysis finished longest ago; one running is never dropped).

Each analysis is `ragjudge canary` itself (`run_canary`): the same config, statistics and report.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from ragjudge.canary.release import CanaryOutcome, CanaryRequest, run_canary
from ragjudge.config.canary_config import CanaryConfig, FeedbackConfig
from ragjudge.config.model import Config
from ragjudge.errors import ConfigError, ExitCode, RagjudgeError
from ragjudge.serve.origins import check_named_urls, endpoint_origins, fill, keeps_headers
from ragjudge.serve.state import Analysis, AnalysisSpec

Runner = Callable[[CanaryRequest], CanaryOutcome]
Log = Callable[[dict[str, Any]], None]

# Retry-After when no analysis has finished yet to estimate from.
DEFAULT_RETRY_AFTER_S = 30


class Busy(Exception):
    """`serve.max_concurrent` analyses are running: HTTP 429."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"{retry_after_s}")
        self.retry_after_s = retry_after_s


class NamesFull(Exception):
    """`serve.max_names` names are kept and every one has an analysis running: HTTP 503."""

    def __init__(self, max_names: int) -> None:
        super().__init__(
            f"{max_names} canary names are kept (serve.max_names) and each has an analysis running; "
            "retry once one finishes"
        )


@dataclass(frozen=True)
class Started:
    analysis: Analysis
    created: bool
    """False: one was already running for this name, and this is it."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _fill_feedback(feedback: FeedbackConfig, spec: AnalysisSpec) -> FeedbackConfig:
    """`{name}`/`{namespace}` in the feedback URL and PromQL queries: one config serves many canaries."""
    if feedback.url is not None:
        return feedback.model_copy(update={"url": fill(feedback.url, spec)})
    if feedback.prometheus is not None:
        prom = feedback.prometheus
        queries = ("treatment_dislikes", "treatment_responses", "control_dislikes", "control_responses")
        filled = prom.model_copy(update={q: fill(getattr(prom, q), spec) for q in queries})
        return feedback.model_copy(update={"prometheus": filled})
    return feedback


def canary_request(config: Config, spec: AnalysisSpec) -> CanaryRequest:
    """The `ragjudge canary` request for this canary: URLs filled in, per-canary overrides applied, and the
    configured headers kept only for the origins they were configured for (origins.py)."""
    canary = config.canary or CanaryConfig()
    treatment = spec.treatment or fill(canary.treatment, spec)
    control = spec.control or fill(canary.control, spec)
    home = endpoint_origins(config, spec)
    named = {arm: url for arm, url in (("treatment", spec.treatment), ("control", spec.control)) if url is not None}
    without_headers = frozenset(arm for arm, url in named.items() if not keeps_headers(url, home))
    feedback = canary.feedback
    if spec.feedback_url is not None:
        # The configured headers (e.g. a token for the metrics service) go only where they were configured for.
        configured = fill(feedback.url, spec) if feedback is not None else None
        same = feedback is not None and configured is not None and keeps_headers(spec.feedback_url, (configured,))
        feedback = FeedbackConfig(url=spec.feedback_url, headers=feedback.headers if same and feedback else {})
    elif feedback is not None:
        feedback = _fill_feedback(feedback, spec)
    if feedback is not canary.feedback:
        config = config.model_copy(update={"canary": canary.model_copy(update={"feedback": feedback})})
    return CanaryRequest(
        config=config,
        treatment=treatment,
        control=control,
        sample_size=spec.sample_size,
        without_headers=without_headers,
        # A caller's URL is data: sent as the text whose host check_named_urls read, never rendered.
        literal_arms=frozenset(named),
    )


def check_urls(config: Config, request: CanaryRequest, needs_arms: bool) -> None:
    """Both URLs are known when the rules send requests: found before the analysis starts."""
    if not needs_arms:
        return
    for arm, url in (("treatment", request.treatment), ("control", request.control)):
        if not url:
            raise ConfigError(
                f"no {arm} URL",
                tip=f'send "{arm}" or set canary.{arm} in the config (it may use {{name}} and {{namespace}})',
            )


class Registry:
    """Every analysis the service knows, by canary name; thread-safe."""

    def __init__(
        self,
        config: Config,
        needs_arms: bool = True,
        runner: Runner = run_canary,
        log: Log | None = None,
    ) -> None:
        self.config = config
        self.needs_arms = needs_arms
        self._runner = runner
        self._log = log or (lambda event: None)
        self._lock = threading.Lock()
        self._by_name: dict[str, deque[Analysis]] = {}
        self._requests: dict[tuple[str, str], int] = {}
        self._ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._stopping = False

    # ------------------------------------------------------------------ reading

    def history(self, name: str) -> tuple[Analysis, ...]:
        """Latest first."""
        with self._lock:
            return tuple(self._by_name.get(name, ()))

    def latest(self, name: str) -> Analysis | None:
        found = self.history(name)
        return found[0] if found else None

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._by_name)

    def requests_sent(self) -> dict[tuple[str, str], int]:
        """(name, arm) -> requests sent over every finished analysis."""
        with self._lock:
            return dict(self._requests)

    def running(self) -> list[Analysis]:
        with self._lock:
            return self._running_locked()

    def _running_locked(self) -> list[Analysis]:
        return [a for runs in self._by_name.values() for a in runs if a.status == "running"]

    def alive_threads(self) -> int:
        return sum(t.is_alive() for t in self._threads)

    # ------------------------------------------------------------------ starting

    def start(self, spec: AnalysisSpec) -> Started:
        """Start an analysis, or return the one running for this name.

        Raises ConfigError (the request cannot be analysed: HTTP 400), Busy (HTTP 429) or NamesFull (HTTP 503).
        """
        check_named_urls(self.config, spec)
        request = canary_request(self.config, spec)
        check_urls(self.config, request, self.needs_arms)
        with self._lock:
            if self._stopping:
                raise Busy(DEFAULT_RETRY_AFTER_S)
            for analysis in self._by_name.get(spec.name, ()):
                if analysis.status == "running":
                    return Started(analysis, created=False)
            running = self._running_locked()
            if len(running) >= self.config.serve.max_concurrent:
                raise Busy(self._retry_after_locked(running))
            if spec.name not in self._by_name and len(self._by_name) >= self.config.serve.max_names:
                self._forget_oldest_locked()
            analysis = Analysis(
                id=f"{spec.name}-{next(self._ids)}",
                spec=spec,
                status="running",
                started_at=_now(),
                started=time.monotonic(),
            )
            self._by_name.setdefault(spec.name, deque(maxlen=self.config.serve.keep)).appendleft(analysis)
            thread = threading.Thread(target=self._run, args=(analysis, request), name=f"analysis-{analysis.id}")
            # Daemon: a stuck endpoint call must not keep the process alive after SIGTERM.
            thread.daemon = True
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        self._log({"event": "analysis_started", **_ids(analysis)})
        thread.start()
        return Started(analysis, created=True)

    def _forget_oldest_locked(self) -> None:
        """Drop the name whose last analysis finished longest ago, with its counters; raises NamesFull."""
        finished = {
            name: max(a.finished or 0.0 for a in runs)
            for name, runs in self._by_name.items()
            if all(a.status != "running" for a in runs)
        }
        if not finished:
            raise NamesFull(self.config.serve.max_names)
        oldest = min(finished, key=lambda name: finished[name])
        del self._by_name[oldest]
        for arm in ("treatment", "control"):
            self._requests.pop((oldest, arm), None)
        self._log({"event": "name_forgotten", "name": oldest, "max_names": self.config.serve.max_names})

    def _retry_after_locked(self, running: list[Analysis]) -> int:
        """Seconds until the oldest running analysis should be done, judged by the last one that finished."""
        finished = [a for runs in self._by_name.values() for a in runs if a.duration_s is not None]
        if not finished:
            return DEFAULT_RETRY_AFTER_S
        typical = max(finished, key=lambda a: a.finished or 0.0).duration_s or 0.0
        elapsed = max(time.monotonic() - a.started for a in running)
        return max(1, math.ceil(typical - elapsed))

    # ------------------------------------------------------------------ running

    def _run(self, analysis: Analysis, request: CanaryRequest) -> None:
        try:
            outcome = self._runner(request)
        except RagjudgeError as exc:
            self._finish(analysis.id, analysis.spec.name, status="error", error=exc.message)
        except Exception as exc:  # a bug in one analysis must not take the service down
            self._finish(analysis.id, analysis.spec.name, status="error", error=f"internal error: {type(exc).__name__}")
        else:
            report = outcome.report
            if outcome.exit_code == ExitCode.COULD_NOT_EVALUATE:
                # `ragjudge canary` exits 3: no verdict to act on, only why.
                first = report.reasons[0] if report.reasons else "no data"
                self._finish(
                    analysis.id,
                    analysis.spec.name,
                    status="error",
                    error=f"could not evaluate: {first}",
                    reasons=tuple(report.reasons),
                    report=report,
                )
            else:
                self._finish(
                    analysis.id,
                    analysis.spec.name,
                    status="done",
                    verdict=report.verdict,
                    reasons=tuple(report.reasons),
                    report=report,
                )

    def _finish(self, analysis_id: str, name: str, **fields: Any) -> None:
        with self._lock:
            runs = self._by_name.get(name, deque())
            i = next((k for k, a in enumerate(runs) if a.id == analysis_id), None)
            if i is None:  # pushed out of the history meanwhile
                return
            analysis = runs[i]
            if analysis.status != "running":  # interrupted meanwhile: that mark stands
                return
            done = replace(analysis, finished_at=_now(), finished=time.monotonic(), **fields)
            runs[i] = done
            if done.report is not None:
                for arm, block in (("treatment", done.report.arms.treatment), ("control", done.report.arms.control)):
                    self._requests[(name, arm)] = self._requests.get((name, arm), 0) + block.requests
        self._log({"event": "analysis_finished", **_ids(done), **_outcome(done)})

    def interrupt(self) -> list[Analysis]:
        """Stop taking analyses and mark every running one `error: interrupted` (SIGTERM)."""
        marked: list[Analysis] = []
        with self._lock:
            self._stopping = True
            for runs in self._by_name.values():
                for i, analysis in enumerate(runs):
                    if analysis.status == "running":
                        runs[i] = replace(
                            analysis, status="error", error="interrupted", finished_at=_now(), finished=time.monotonic()
                        )
                        marked.append(runs[i])
        for analysis in marked:
            self._log({"event": "analysis_finished", **_ids(analysis), **_outcome(analysis)})
        return marked


def _ids(analysis: Analysis) -> dict[str, Any]:
    spec = analysis.spec
    return {"id": analysis.id, "name": spec.name, "namespace": spec.namespace, "checksum": spec.checksum}


def _outcome(analysis: Analysis) -> dict[str, Any]:
    duration = analysis.duration_s
    return {
        "status": analysis.status,
        "verdict": analysis.verdict,
        "error": analysis.error,
        "duration_s": round(duration, 3) if duration is not None else None,
    }
