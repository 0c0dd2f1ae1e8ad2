"""The case metrics: what one reply (a conversation: its turns) is measured by."""

from __future__ import annotations

import re

from ragjudge.metrics import names as n
from ragjudge.metrics.families import JUDGE_DIMENSIONS, MEMBER
from ragjudge.metrics.spec import Computed, Mean, MetricSpec, Total

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        n.CONTEXT_RECALL,
        ("case",),
        "fraction",
        "higher",
        "Share of the case's golden passages the service retrieved.",
        needs=("passages", "golden ids"),
    ),
    MetricSpec(
        n.CONTEXT_PRECISION,
        ("case",),
        "fraction",
        "higher",
        "Share of the retrieved passages that are golden (or, without golden ids, that the judge found relevant).",
        needs=("passages",),
    ),
    MetricSpec(n.LATENCY_MS, ("case",), "ms", "lower", "The reply's wall-clock time, to the last byte."),
    MetricSpec(
        n.TTFT_MS,
        ("case",),
        "ms",
        "lower",
        "Time to the first answer text of a streamed reply.",
        needs=("stream",),
    ),
    MetricSpec(
        n.COST_USD,
        ("case", "suite"),
        "usd",
        "lower",
        "What the endpoint reported the call cost; for the suite, every run's endpoint and judge cost.",
        needs=("cost",),
        over_cases=Computed(),
    ),
    MetricSpec(
        n.FAITHFULNESS,
        ("case", "suite", "canary"),
        "fraction",
        "higher",
        "Share of the answer's claims the retrieved passages support; the suite's and canary's is the mean.",
        needs=("judge", "passages"),
        missing="faithfulness not applicable: no answer made a claim",
        over_cases=Mean(n.FAITHFULNESS),
    ),
    MetricSpec(
        n.ANSWER_CORRECTNESS,
        ("case", "suite"),
        "fraction",
        "higher",
        "Reference points the answer covers (a partial one counts half), over the points; the suite's is the mean.",
        needs=("judge", "reference"),
        over_cases=Mean(n.ANSWER_CORRECTNESS),
    ),
    MetricSpec(
        n.REFERENCE_CONTRADICTIONS,
        ("case", "suite"),
        "count",
        "lower",
        "Reference points the answer contradicts; the suite's is the total.",
        needs=("judge", "reference"),
        over_turns="sum",
        over_cases=Total(n.REFERENCE_CONTRADICTIONS),
    ),
    MetricSpec(
        n.JUDGE_PREFIX + "<dimension>",
        ("case",),
        "score",
        "higher",
        "The judge's 1-5 score on one rubric dimension: " + ", ".join(JUDGE_DIMENSIONS) + ".",
        needs=("judge",),
        pattern=re.escape(n.JUDGE_PREFIX) + "(" + "|".join(JUDGE_DIMENSIONS) + ")",
    ),
    MetricSpec(
        n.CRITERIA_PREFIX + "<name>",
        ("case",),
        "score",
        "higher",
        "The judge's 1-5 score on one of the team's criteria.",
        needs=("judge", "criteria"),
        pattern=re.escape(n.CRITERIA_PREFIX) + MEMBER,
    ),
)
