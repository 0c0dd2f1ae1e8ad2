"""Feedback counts from Prometheus: four PromQL instant queries through `GET /api/v1/query`.

Each query's result is summed over its series (so `ragjudge_dislikes_total{arm="treatment"}` works
across pods without a `sum()`), and rounded to a whole count (`increase()` extrapolates). A query
that returns no series leaves its arm without counts: the dislike rule is then inconclusive, with
a reason naming the query. A query Prometheus rejects is a config error (exit 2); Prometheus
unreachable or failing is "could not evaluate" (exit 3).
"""

from __future__ import annotations

import math
from typing import Any

import requests
from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.canary.feedback import ARMS, TIMEOUT_S, ArmFeedback, Feedback, check_arm, session
from ragjudge.config.canary_config import FeedbackPrometheus
from ragjudge.errors import ConfigError, EvaluationError, FeedbackError
from ragjudge.transport.sessions import CutOff, bounded_request
from ragjudge.transport.urls import public_url

_EMPTY_TIP = 'if no series means zero, end the query with "or vector(0)"'


class _Data(BaseModel):
    model_config = ConfigDict(extra="ignore")

    resultType: str  # Prometheus' own field name
    result: Any


class _Reply(BaseModel):
    """The Prometheus HTTP API envelope."""

    model_config = ConfigDict(extra="ignore")

    status: str
    data: _Data | None = None
    errorType: str | None = None
    error: str | None = None


def _sample_value(sample: Any, where: str) -> float:
    """The number of one `[timestamp, "value"]` pair."""
    if not (isinstance(sample, list) and len(sample) == 2):
        raise EvaluationError(f"{where}: unexpected sample {str(sample)[:80]!r} in the Prometheus reply")
    try:
        return float(sample[1])
    except (TypeError, ValueError):
        raise EvaluationError(f"{where}: sample value {str(sample[1])[:40]!r} is not a number") from None


def _total(data: _Data, where: str) -> float | None:
    """Sum of an instant vector (None when it has no series), or a scalar's value."""
    if data.resultType == "scalar":
        return _sample_value(data.result, where)
    if data.resultType != "vector":
        raise ConfigError(
            f"{where}: the query returned a {data.resultType}, not an instant vector",
            tip='write an instant query, e.g. sum(ragjudge_dislikes_total{arm="treatment"}), without a [range]',
        )
    if not isinstance(data.result, list):
        raise EvaluationError(f"{where}: unexpected vector in the Prometheus reply")
    if not data.result:
        return None
    values = []
    for series in data.result:
        value = series.get("value") if isinstance(series, dict) else None
        values.append(_sample_value(value, where))
    return math.fsum(values)


class PrometheusSource:
    """Runs the four queries of `canary.feedback.prometheus` against one server."""

    def __init__(self, config: FeedbackPrometheus, timeout_s: float = TIMEOUT_S) -> None:
        self.config = config
        self.timeout_s = timeout_s
        self.base = config.url.rstrip("/")
        self.source = f"prometheus {public_url(config.url)}"

    def query(self, key: str) -> float | None:
        """The summed result of the query under `key` (e.g. `treatment_dislikes`); None when it has no series."""
        promql: str = getattr(self.config, key)
        where = f"{self.source}: canary.feedback.prometheus.{key}"
        try:
            with session() as s:
                response = bounded_request(
                    s,
                    "GET",
                    f"{self.base}/api/v1/query",
                    self.timeout_s,
                    params={"query": promql},
                    headers={"Accept": "application/json", **self.config.headers},
                )
        except CutOff as exc:
            raise EvaluationError(
                f"{self.source}: {exc}", tip="check that Prometheus is healthy and reachable from here"
            ) from None
        except requests.RequestException as exc:
            raise EvaluationError(
                f"{self.source}: cannot reach Prometheus ({type(exc).__name__})",
                tip="check canary.feedback.prometheus.url and that Prometheus is reachable from here",
            ) from None
        try:
            reply = _Reply.model_validate_json(response.content)
        except ValidationError:
            raise EvaluationError(
                f"{where}: HTTP {response.status_code}, and the reply is not the Prometheus API's JSON",
                tip="canary.feedback.prometheus.url is the server's base URL, e.g. http://prometheus:9090",
            ) from None
        if reply.status != "success":
            detail = f"{reply.errorType or 'error'}: {(reply.error or '').strip()[:300]}"
            if reply.errorType == "bad_data":
                raise ConfigError(f"{where}: Prometheus rejected the query: {detail}", tip="fix the PromQL")
            raise EvaluationError(f"{where}: the query failed (HTTP {response.status_code}, {detail})")
        if reply.data is None:
            raise EvaluationError(f"{where}: the Prometheus reply has no data")
        return _total(reply.data, where)

    def _count(self, key: str, value: float) -> int:
        if not math.isfinite(value):
            raise FeedbackError(f"{self.source}: {key}: the query returned {value}, not a count")
        return round(value)

    def fetch(self) -> Feedback:
        arms: dict[str, ArmFeedback | None] = {}
        missing: list[str] = []
        for arm in ARMS:
            dislikes = self.query(f"{arm}_dislikes")
            responses = self.query(f"{arm}_responses")
            empty = [k for k, v in (("dislikes", dislikes), ("responses", responses)) if v is None]
            if dislikes is None or responses is None:
                arms[arm] = None
                queries = ", ".join(f"{arm}_{k} `{getattr(self.config, f'{arm}_{k}')}`" for k in empty)
                missing.append(f"no {arm} counts: Prometheus returned no series for {queries} ({_EMPTY_TIP})")
                continue
            arms[arm] = check_arm(
                f"{self.source} ({arm}_dislikes / {arm}_responses)",
                arm,
                self._count(f"{arm}_dislikes", dislikes),
                self._count(f"{arm}_responses", responses),
            )
        return Feedback(self.source, arms["treatment"], arms["control"], tuple(missing))


def from_prometheus(config: FeedbackPrometheus) -> Feedback:
    return PrometheusSource(config).fetch()
