"""The metric registry: one `MetricSpec` per metric, and the lookups every consumer uses.

Adding a metric is its name (`names.py`), its spec here and, unless its `over_cases` says how the suite
makes it, its computation; the rules, the report, the comment, the comparison, the canary and the docs
read the rest from the spec.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragjudge.metrics import names as n
from ragjudge.metrics.spec import Computed, Mean, MetricSpec, Percentile, Scope, Total

JUDGE_DIMENSIONS = ("grounding", "relevance", "calibration", "citations", "tone")
"""The judge's rubric dimensions, each a case metric `judge.<dimension>` and a delta `judge.<dimension>_delta`."""
_MEMBER = r"([A-Za-z_][A-Za-z0-9_]{0,63})"
"""A criterion's name, as `criteria` in the config allows it."""

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
        pattern=re.escape(n.CRITERIA_PREFIX) + _MEMBER,
    ),
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
        pattern=re.escape(n.CRITERIA_PREFIX) + _MEMBER + re.escape(n.MEAN_SUFFIX),
        over_cases=Computed(),
    ),
    MetricSpec(
        n.NEWLY_FAILING,
        ("regression",),
        "count",
        "lower",
        "Cases that passed on the baseline and fail now.",
        needs=("baseline",),
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
        pattern=re.escape(n.CRITERIA_PREFIX) + _MEMBER + re.escape(n.DELTA_SUFFIX),
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
        n.DISLIKE_RATE_RATIO,
        ("canary",),
        "multiple",
        "lower",
        "The canary's dislike rate over the stable deployment's, from user feedback.",
        needs=("feedback",),
    ),
)

_BY_NAME = {s.name: s for s in SPECS if not s.is_family()}
# The suffixed families first: `criteria.x_mean` is also a well-formed criterion's name.
_FAMILIES = sorted(
    ((re.compile(s.pattern), s) for s in SPECS if s.pattern is not None), key=lambda f: -len(f[0].pattern)
)


def of_scope(scope: Scope) -> Iterator[MetricSpec]:
    """The specs a rule of `scope` may name, in the registry's order."""
    return (s for s in SPECS if scope in s.scopes)


def lookup(name: str, scope: Scope | None = None) -> MetricSpec | None:
    """The spec of a metric (a family's member too: `judge.grounding`), in `scope` if given; None if unknown."""
    candidates = [_BY_NAME[name]] if name in _BY_NAME else [s for pattern, s in _FAMILIES if pattern.fullmatch(name)]
    return next((s for s in candidates if scope is None or scope in s.scopes), None)


def spec(name: str) -> MetricSpec:
    """The spec of a metric ragjudge itself names (a `KeyError` is a bug, not a user's mistake)."""
    found = lookup(name)
    if found is None:
        raise KeyError(name)
    return found


def member(name: str, scope: Scope | None = None) -> str | None:
    """The dimension or criterion a family metric names, as `scope` reads it: `criteria.asks_mean` is the
    criterion `asks` in the suite, `asks_mean` per case; None for a metric that is no family's."""
    found = lookup(name, scope)
    if found is None or found.pattern is None:
        return None
    match = re.fullmatch(found.pattern, name)
    return match.group(1) if match else None


def is_judge_dimension(name: str) -> bool:
    """`judge.<dimension>`, a case metric the rubric scores."""
    return name.startswith(n.JUDGE_PREFIX) and lookup(name, "case") is not None


def is_criterion(name: str) -> bool:
    """`criteria.<name>`, a case metric of the team's criteria."""
    return name.startswith(n.CRITERIA_PREFIX) and lookup(name, "case") is not None


def is_scored(name: str) -> bool:
    """A judge dimension's or a criterion's 1-5 score (per case, mean or delta)."""
    return name.startswith((n.JUDGE_PREFIX, n.CRITERIA_PREFIX))


def needs_judge(name: str) -> bool:
    """Whether a case rule on `name` makes the run call the judge."""
    found = lookup(name)
    return found is not None and "judge" in found.needs


def reads(name: str) -> frozenset[str]:
    """Every metric `name` is made of, itself included (`p95_latency_ratio` -> it, p95_latency_ms, latency_ms)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        found = lookup(current)
        if found is None:
            continue
        if found.compares:
            todo.append(found.compares)
        if isinstance(found.over_cases, Percentile | Mean | Total):
            todo.append(found.over_cases.of)
    return frozenset(seen)


def delta_of(name: str) -> str:
    """The regression metric comparing a judge dimension or criterion: `judge.tone` -> `judge.tone_delta`."""
    return name + n.DELTA_SUFFIX


def mean_of(name: str) -> str:
    """The suite metric averaging a criterion: `criteria.x` -> `criteria.x_mean`."""
    return name + n.MEAN_SUFFIX


def compared(name: str) -> str | None:
    """The figure a regression rule reads: `pass_rate_delta` -> `pass_rate`, `judge.tone_delta` -> `judge.tone`;
    None for one that compares no figure (`newly_failing`)."""
    found = lookup(name, "regression")
    if found is None:
        return None
    if found.compares:
        return found.compares
    if found.is_family():
        return name.removesuffix(n.DELTA_SUFFIX)
    return None
