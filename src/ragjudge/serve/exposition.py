"""`GET /metrics`: the latest results in Prometheus's text exposition format (version 0.0.4).

For the `serve.metrics_names` canary names (50) whose latest analysis finished most recently, from that
analysis (a scrape needs the canaries rolling out now; every kept name, up to `serve.max_names`, made
the body 924 kB at 1000 short names and 8.2 MB at 1000 of the longest):
- `ragjudge_canary_verdict{name,namespace,verdict}`: 1 for the verdict, 0 for the other two (all 0 when
  that analysis ended in error);
- `ragjudge_canary_metric{name,metric,arm}`, with `_ci_low`/`_ci_high` where the rule has an interval:
  each rule's compared value on `arm="treatment"` (a ratio rule's value is the treatment's ratio to the
  control), and each arm's own figure (`dislike_rate`, `p95_latency_ms`, `faithfulness`);
- `ragjudge_canary_analysis_seconds{name}`: how long that analysis took;
and `ragjudge_canary_requests_total{name,arm}` (every analysis of that name since start), and
`ragjudge_canary_analyses_running`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ragjudge.canary.report import CanaryReport
from ragjudge.metrics.names import DISLIKE_RATE_RATIO, FAITHFULNESS, P95_LATENCY_MS, P95_LATENCY_RATIO
from ragjudge.serve.analyses import Registry
from ragjudge.serve.state import Analysis

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
VERDICTS = ("promote", "rollback", "inconclusive")
# The arm figure reported beside each rule: a ratio's arms have their own quantity.
ARM_FIGURE = {
    DISLIKE_RATE_RATIO: "dislike_rate",
    P95_LATENCY_RATIO: P95_LATENCY_MS,
    P95_LATENCY_MS: P95_LATENCY_MS,
    FAITHFULNESS: FAITHFULNESS,
}

Series = tuple[float, float | None, float | None]
"""value, ci low, ci high."""


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def _number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x))


def metric_series(report: CanaryReport) -> dict[tuple[str, str], Series]:
    """(metric, arm) -> value and interval; a figure with an interval wins over the same one without."""
    series: dict[tuple[str, str], Series] = {}

    def put(key: tuple[str, str], value: float | None, lo: float | None = None, hi: float | None = None) -> None:
        if value is None:
            return
        if key in series and series[key][1] is not None and lo is None:
            return
        series[key] = (value, lo, hi)

    for metric, block in report.metrics.items():
        lo = hi = None
        if block.ci is not None:
            # The report writes an unbounded end as null.
            lo = block.ci[0] if block.ci[0] is not None else -math.inf
            hi = block.ci[1] if block.ci[1] is not None else math.inf
        put((metric, "treatment"), block.value, lo, hi)
        figure = ARM_FIGURE.get(metric, metric)
        if figure != metric:
            put((figure, "treatment"), block.treatment)
        put((figure, "control"), block.control)
    return series


def _family(name: str, kind: str, help_text: str, samples: Iterable[str]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples]


def exposed(registry: Registry) -> list[Analysis]:
    """The latest finished analysis of each of the `serve.metrics_names` names whose latest analysis finished
    most recently, in name order."""
    latest: list[Analysis] = []
    for name in registry.names():
        finished = next((a for a in registry.history(name) if a.status != "running"), None)
        if finished is not None:
            latest.append(finished)
    latest.sort(key=lambda a: a.finished or 0.0, reverse=True)
    return sorted(latest[: registry.config.serve.metrics_names], key=lambda a: a.spec.name)


def exposition(registry: Registry) -> str:
    latest = exposed(registry)
    shown = {a.spec.name for a in latest}

    verdicts = [
        f"ragjudge_canary_verdict{_labels(name=a.spec.name, namespace=a.spec.namespace, verdict=v)} "
        f"{1 if a.verdict == v else 0}"
        for a in latest
        for v in VERDICTS
    ]
    values: list[str] = []
    lows: list[str] = []
    highs: list[str] = []
    for a in latest:
        if a.report is None:
            continue
        for (metric, arm), (value, lo, hi) in sorted(metric_series(a.report).items()):
            labels = _labels(name=a.spec.name, metric=metric, arm=arm)
            values.append(f"ragjudge_canary_metric{labels} {_number(value)}")
            if lo is not None and hi is not None:
                lows.append(f"ragjudge_canary_metric_ci_low{labels} {_number(lo)}")
                highs.append(f"ragjudge_canary_metric_ci_high{labels} {_number(hi)}")
    requests = [
        f"ragjudge_canary_requests_total{_labels(name=name, arm=arm)} {count}"
        for (name, arm), count in sorted(registry.requests_sent().items())
        if name in shown
    ]
    seconds = [
        f"ragjudge_canary_analysis_seconds{_labels(name=a.spec.name)} {_number(a.duration_s)}"
        for a in latest
        if a.duration_s is not None
    ]
    lines = [
        *_family(
            "ragjudge_canary_verdict",
            "gauge",
            "Verdict of the latest finished analysis per canary: 1 for the verdict, 0 for the others.",
            verdicts,
        ),
        *_family(
            "ragjudge_canary_metric",
            "gauge",
            "Each rule's compared value (arm=treatment) and each arm's own figure, latest finished analysis.",
            values,
        ),
        *_family("ragjudge_canary_metric_ci_low", "gauge", "Lower end of the rule's interval.", lows),
        *_family("ragjudge_canary_metric_ci_high", "gauge", "Upper end of the rule's interval.", highs),
        *_family(
            "ragjudge_canary_requests_total", "counter", "Sample requests sent to each arm since start.", requests
        ),
        *_family(
            "ragjudge_canary_analysis_seconds",
            "gauge",
            "Wall time of the latest finished analysis per canary.",
            seconds,
        ),
        *_family(
            "ragjudge_canary_analyses_running",
            "gauge",
            "Analyses running now.",
            [f"ragjudge_canary_analyses_running {len(registry.running())}"],
        ),
    ]
    return "\n".join(lines) + "\n"
