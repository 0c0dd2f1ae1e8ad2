"""The suite's figures over the report's cases, and each rule's outcome: the `suite` and `rules` blocks."""

from __future__ import annotations

from typing import Literal

from ragjudge.report.block import Block


class SuiteBlock(Block):
    """The suite's metrics over the report's cases (a shard's report: that shard's cases only).

    Beside these fields, `run` and `merge` write the judge's usage over every run of every case: `judge_calls`,
    `judge_cache_hits`, `judge_tokens` and `judge_cost_usd` (USD, to 6 decimals), the `--bias-check` calls
    included; and with `--bias-check`, `position_bias` (the check's figures). A report without them still loads.
    """

    cases: int
    """Cases in the report: evaluated ones, passed, failed or errored."""
    passed: int
    """Cases whose (final) status is `pass`."""
    failed: int
    """Cases whose (final) status is `fail`."""
    errored: int
    """Cases whose (final) status is `error`: no usable reply, or a judgement a rule needs could not be made."""
    pass_rate: float | None
    """`passed / cases`, 0 to 1 (an error counts against it); null when there are no cases."""
    faithfulness: float | None
    """Mean of the per-case faithfulness (0 to 1) over judged answers that made claims; null when none did
    (refusals and answers without claims are left out, never counted as 0 or 1)."""
    rejection_accuracy: float | None
    """Share (0 to 1) of the cases that got a reply where out-of-scope was refused and in-scope answered; null
    when no case got a reply."""
    p50_latency_ms: float | None
    """Nearest-rank median of the first runs' latencies in ms (measured by ragjudge), to 0.1 ms, over cases
    whose first run got a reply; null when none did."""
    p95_latency_ms: float | None
    """Nearest-rank 95th percentile, as `p50_latency_ms`; rules compare the unrounded value."""
    judge_error_rate: float | None
    """Share (0 to 1) of the judged cases (a reply and a judgement) with at least one unscored judgement; null
    when no case was judged."""
    endpoint_error_rate: float | None
    """Share (0 to 1) of the cases with no usable reply; null when there are no cases."""
    cost_usd: float | None
    """Total cost in USD, to 6 decimals: the endpoint's reported costs and the judge's costs, over every run;
    null when neither reported any cost."""
    flaky_cases: int = 0
    """Cases that passed only after repeats (`repeat`)."""
    answer_correctness: float | None = None
    """Mean of the per-case answer correctness (0 to 1: covered points plus half the partial ones, over the
    reference's points) over the judged cases whose reference was judged; null when none was. With criteria,
    each criterion's mean over the cases it was scored for is written beside it as `criteria.NAME_mean`."""
    reference_contradictions: int | None = None
    """Reference points contradicted, summed over the cases whose reference was judged; null when none was."""
    p50_ttft_ms: float | None = None
    """Nearest-rank median of the streamed replies' time to the first token in ms (`trace.ttft_ms`), to 0.1 ms;
    null when no reply was streamed."""
    p95_ttft_ms: float | None = None
    """Nearest-rank 95th percentile, as `p50_ttft_ms`; rules compare the unrounded value."""
    tool_condition_accuracy: float | None = None
    """Share (0 to 1) of the replies to cases with `tools:` conditions whose conditions all held; null when no
    such case got a reply that exposes tool calls (those are left out, never counted as held or failed)."""


class RuleBlock(Block):
    """One rule's outcome: the report's `rules` hold the case and suite rules, `comparison.rules` the regression
    rules."""

    scope: Literal["case", "suite", "regression"]
    """`case` (`gate.case`), `suite` (`gate.suite`) or `regression` (`gate.regression`, in `comparison.rules`)."""
    metric: str
    """The metric as written in the config: `context_recall`, `p95_latency_ms`, `newly_failing`, ..."""
    op: str
    """`>=`, `>`, `<=`, `<` or `==`."""
    threshold: float
    """The rule's number, in the metric's unit."""
    value: float | None
    """A case rule: how many cases failed it (a JSON number such as `2.0`). A suite rule: the metric's value
    (latencies to 0.1 ms), null when it has none. A regression rule: the count of `regression` cases for
    `newly_failing`, else the delta or ratio; null when not gated."""
    passed: bool | None
    """Whether the rule held. A suite rule whose metric has no value is false, never passed silently; null only
    for a regression rule not gated (its figure not comparable or not measured in both reports)."""
    reason: str
    """The outcome in a sentence, e.g. `p95_latency_ms 3012 > 3000`, or the failing cases' ids."""
