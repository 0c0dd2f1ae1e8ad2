"""The metrics against another run: the baseline (`gate.regression`) or the stable deployment (`canary.rules`)."""

from __future__ import annotations

import re

from ragjudge.metrics import names as n
from ragjudge.metrics.families import JUDGE_DIMENSIONS, MEMBER
from ragjudge.metrics.spec import MetricSpec

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        n.NEWLY_FAILING,
        ("regression",),
        "count",
        "lower",
        "Cases that passed on the baseline and fail now.",
        needs=("baseline",),
    ),
    MetricSpec(
        n.PAIRWISE_LOSS_RATE,
        ("regression",),
        "fraction",
        "lower",
        "Share of the changed answers the judge found worse than main's in both orders (Wilson interval).",
        needs=("baseline", "judge"),
    ),
    MetricSpec(
        n.PAIRWISE_WORSE,
        ("regression",),
        "count",
        "lower",
        "Changed answers the judge found worse than main's in both orders.",
        needs=("baseline", "judge"),
    ),
    MetricSpec(
        n.PASS_RATE_DELTA,
        ("regression",),
        "delta",
        "higher",
        "Pass rate now minus the baseline's, over the cases in both (exact McNemar test).",
        needs=("baseline",),
        compares=n.PASS_RATE,
    ),
    MetricSpec(
        n.TOOL_CONDITION_ACCURACY_DELTA,
        ("regression",),
        "delta",
        "higher",
        "Tool-condition accuracy now minus the baseline's, over the cases whose `tools:` conditions were known in "
        "both (exact McNemar test).",
        needs=("baseline",),
        compares=n.TOOL_CONDITION_ACCURACY,
    ),
    MetricSpec(
        n.FAITHFULNESS_DELTA,
        ("regression",),
        "delta",
        "higher",
        "Mean paired difference of faithfulness (Wilcoxon signed-rank test).",
        needs=("baseline", "judge"),
        compares=n.FAITHFULNESS,
    ),
    MetricSpec(
        n.ANSWER_CORRECTNESS_DELTA,
        ("regression",),
        "delta",
        "higher",
        "Mean paired difference of answer correctness (Wilcoxon signed-rank test).",
        needs=("baseline", "judge", "reference"),
        compares=n.ANSWER_CORRECTNESS,
    ),
    MetricSpec(
        n.JUDGE_PREFIX + "<dimension>" + n.DELTA_SUFFIX,
        ("regression",),
        "delta",
        "higher",
        "Mean paired difference of one judge dimension.",
        needs=("baseline", "judge"),
        pattern=re.escape(n.JUDGE_PREFIX) + "(" + "|".join(JUDGE_DIMENSIONS) + ")" + re.escape(n.DELTA_SUFFIX),
    ),
    MetricSpec(
        n.CRITERIA_PREFIX + "<name>" + n.DELTA_SUFFIX,
        ("regression",),
        "delta",
        "higher",
        "Mean paired difference of one criterion.",
        needs=("baseline", "judge", "criteria"),
        pattern=re.escape(n.CRITERIA_PREFIX) + MEMBER + re.escape(n.DELTA_SUFFIX),
    ),
    MetricSpec(
        n.P95_LATENCY_RATIO,
        ("regression", "canary"),
        "multiple",
        "lower",
        "p95 latency now over the baseline's (the canary's over the stable deployment's), paired bootstrap interval.",
        needs=("baseline",),
        compares=n.P95_LATENCY_MS,
    ),
    MetricSpec(
        n.P95_TTFT_RATIO,
        ("regression", "canary"),
        "multiple",
        "lower",
        "p95 time to first token now over the baseline's (the canary's over the stable deployment's).",
        needs=("baseline", "stream"),
        compares=n.P95_TTFT_MS,
    ),
    MetricSpec(
        n.COST_RATIO,
        ("regression",),
        "multiple",
        "lower",
        "The endpoint's total reported cost now over the baseline's.",
        needs=("baseline", "cost"),
        compares=n.COST_USD,
    ),
    MetricSpec(
        n.JUDGE_COST_RATIO,
        ("regression",),
        "multiple",
        "lower",
        "The judge's total cost now over the baseline's (every kind of call; an unchanged answer that adopts main's "
        "judgements costs none), paired bootstrap interval.",
        needs=("baseline",),
        compares=n.JUDGE_COST_USD,
    ),
    MetricSpec(
        n.DISLIKE_RATE_RATIO,
        ("canary",),
        "multiple",
        "lower",
        "The canary's dislike rate over the stable deployment's, from user feedback.",
        needs=("feedback",),
    ),
)
