"""The suite metrics: figures of the whole run, each made of the cases as its `over_cases` says."""

from __future__ import annotations

import re

from ragjudge.metrics import names as n
from ragjudge.metrics.families import MEMBER
from ragjudge.metrics.spec import Computed, MetricSpec, Percentile

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        n.PASS_RATE,
        ("suite",),
        "fraction",
        "higher",
        "Share of the cases that passed every case rule.",
        over_cases=Computed(),
    ),
    MetricSpec(
        n.REJECTION_ACCURACY,
        ("suite",),
        "fraction",
        "higher",
        "Share of replies that answered or declined as the case expected.",
        over_cases=Computed(),
    ),
    MetricSpec(
        n.TOOL_CONDITION_ACCURACY,
        ("suite",),
        "fraction",
        "higher",
        "Share of the replies to cases with `tools:` conditions whose conditions all held (called, not_called, "
        "args, order); replies that exposed no tool calls are left out.",
        needs=("tool calls",),
        missing="tool_condition_accuracy has no value: no case with `tools:` conditions got a reply that exposes "
        "tool calls",
        over_cases=Computed(),
    ),
    MetricSpec(
        n.P50_LATENCY_MS,
        ("suite",),
        "ms",
        "lower",
        "Median latency over every asked turn's first run (nearest rank).",
        over_cases=Percentile(n.LATENCY_MS, 50),
    ),
    MetricSpec(
        n.P95_LATENCY_MS,
        ("suite", "canary"),
        "ms",
        "lower",
        "95th-percentile latency over every asked turn's first run (nearest rank); the canary's over its sample.",
        over_cases=Percentile(n.LATENCY_MS, 95),
    ),
    MetricSpec(
        n.P99_LATENCY_MS,
        ("suite",),
        "ms",
        "lower",
        "99th-percentile latency over every asked turn's first run (nearest rank): the tail p95 does not see.",
        over_cases=Percentile(n.LATENCY_MS, 99),
    ),
    MetricSpec(
        n.P50_TTFT_MS,
        ("suite",),
        "ms",
        "lower",
        "Median time to the first token over the streamed replies.",
        needs=("stream",),
        over_cases=Percentile(n.TTFT_MS, 50),
    ),
    MetricSpec(
        n.P95_TTFT_MS,
        ("suite", "canary"),
        "ms",
        "lower",
        "95th-percentile time to the first token over the streamed replies.",
        needs=("stream",),
        over_cases=Percentile(n.TTFT_MS, 95),
    ),
    MetricSpec(
        n.JUDGE_ERROR_RATE,
        ("suite",),
        "fraction",
        "lower",
        "Share of the judged replies with a judgement that could not be made.",
        needs=("judge",),
        over_cases=Computed(),
    ),
    MetricSpec(
        n.JUDGE_COST_USD,
        ("suite",),
        "usd",
        "lower",
        "What the judge's calls cost in the run, every kind (first judgements, rejudges, pairwise, escalation, the "
        "bias check), at `judge.prices`; null (unknown, never 0) when a judge model has no price.",
        needs=("judge",),
        over_cases=Computed(),
    ),
    MetricSpec(
        n.ENDPOINT_ERROR_RATE,
        ("suite",),
        "fraction",
        "lower",
        "Share of the asked turns that got no usable reply.",
        over_cases=Computed(),
    ),
    MetricSpec(
        n.CRITERIA_PREFIX + "<name>" + n.MEAN_SUFFIX,
        ("suite",),
        "score",
        "higher",
        "The mean of one criterion's scores over the judged replies.",
        needs=("judge", "criteria"),
        pattern=re.escape(n.CRITERIA_PREFIX) + MEMBER + re.escape(n.MEAN_SUFFIX),
        over_cases=Computed(),
    ),
)
