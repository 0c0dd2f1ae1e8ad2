"""The run against the baseline: the `comparison` block, its deltas, its regressions and the baseline it names."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragjudge.report.block import Block, GivenKeysBlock
from ragjudge.report.case_block import CaseBaselineBlock
from ragjudge.report.suite_block import RuleBlock


class DeltaBlock(Block):
    """One metric now against the baseline, with its uncertainty."""

    metric: str
    """`pass_rate`, `faithfulness`, `judge.<dimension>` (deltas) or `p95_latency_ms`, `cost_usd` (ratios)."""
    base: float | None
    """The baseline's figure over the paired cases: the mean (pass rate, faithfulness, a judge dimension), the
    nearest-rank p95 of first-run latencies (ms) or the total endpoint cost of first runs (USD). Null when the
    figure is not comparable, except that a judge-based figure whose judge changed still shows each mean."""
    now: float | None
    """This report's figure, as `base`."""
    delta: float | None
    """now - base for deltas; now / base for ratios. Null when the figure is not comparable."""
    ci_low: float | None
    """Lower bound of the paired bootstrap interval at `confidence`; null when not comparable."""
    ci_high: float | None
    """Upper bound of that interval; null when not comparable."""
    p_value: float | None
    """Exact McNemar (pass rate) or Wilcoxon signed-rank (the means) p-value; null for ratios (no test gives one)
    and when not comparable."""
    significant: bool | None
    """Deltas: p-value below `gate.significance`; ratios: the interval excludes 1. Null when not comparable."""
    test: str
    """How the interval and p-value were made, in words; empty when not comparable."""
    comparable: bool
    """False when the figure cannot be compared: the judge changed (judge-based figures), no case has it in both
    reports, or a value is negative. Such a figure is shown, never gated."""
    reason: str
    """The sentence the comment shows; for a metric not comparable, why not."""
    kind: Literal["delta", "ratio"] = "delta"
    """`delta` (now - base) or `ratio` (now / base)."""
    cases: int = 0
    """Paired cases the figure is computed over."""
    better: int | None = None
    """Of those, how many are better now than on the baseline (pass rate: fixed; a score: higher; latency and
    cost: lower); null when not comparable."""
    worse: int | None = None
    """Of those, how many are worse now (pass rate: broken; a score: lower; latency and cost: higher); null when
    not comparable."""


class BaselineBlock(GivenKeysBlock):
    """The baseline a run was compared with (`comparison.baseline`)."""

    commit: str | None = None
    """The baseline's git commit (its `provenance.git_commit`); null when it recorded none."""
    ref: str | None = None
    """The baseline's git ref (its `provenance.git_ref`); null when it recorded none."""
    created_at: str | None = None
    """When the baseline was made (ISO 8601); null when it is undated."""
    age_days: float | None = None
    """Its age in days (to 0.01) at this report's creation; null when undated or dated more than 5 minutes after
    this report."""
    path: str | None = None
    """The file the baseline was read from; null when it was given in memory."""


class RegressionBlock(GivenKeysBlock):
    """A case that passed on the baseline and fails now (`change: regression`), listed first for the reader."""

    id: str
    """The case's id."""
    category: str | None = None
    """The case's category; null when it has none."""
    failed_conditions: list[str] = Field(default_factory=list)
    """Why it fails now, as the case's `failed_conditions`."""
    k_of_n: str | None = None
    """`1 of 3 passed` when the case was run more than once now; else null."""
    baseline: CaseBaselineBlock | None = None
    """What the baseline said of the case."""


class PairwiseBlock(Block):
    """This run's changed answers against main's, judged pairwise (`comparison.pairwise`)."""

    compared: int
    """Cases whose changed answer the judge compared with main's and gave a verdict."""
    better: int
    """Of those, judged better than main's in both orders."""
    worse: int
    """Judged worse than main's in both orders."""
    tie: int
    """Judged a tie, or a winner that changed with the order."""
    unscored: int = 0
    """Pairs the judge could not compare (an invalid reply twice, a failed call)."""
    loss_rate: float | None = None
    """`worse / compared`; null when none was compared. The `pairwise_loss_rate` regression rule reads it."""
    loss_rate_interval: list[float] | None = None
    """Its 95% Wilson interval `[lo, hi]`; null when none was compared."""
    position_consistency: float | None = None
    """Share of the compared pairs whose verdict did not change with the order the answers were shown in: 0 for a
    judge that always prefers the first (or the second) answer."""


class ComparisonBlock(Block):
    """The run against the baseline (`--baseline`)."""

    baseline: BaselineBlock
    """Which report the run was compared with, and how old it is."""
    judge_comparable: bool
    """Whether the judge fingerprints match; when not (or one report has none), judge-based deltas are shown,
    not gated."""
    judge_not_comparable_reason: str | None = None
    """Why the judges differ, in words (`the judge differs from the baseline's: model A -> B`); null when they
    match."""
    regressions: list[RegressionBlock] = Field(default_factory=list)
    """The `regression` cases, in report order."""
    new_cases: list[str] = Field(default_factory=list)
    """Ids of the cases only in this report, in report order."""
    removed_cases: list[str] = Field(default_factory=list)
    """Ids of the cases only in the baseline, in the baseline's order."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Cases per `change` value, every value present (0 included); `removed` counts `removed_cases`."""
    deltas: list[DeltaBlock] = Field(default_factory=list)
    """pass_rate, then faithfulness and each judge dimension (when scored or a rule reads it), p95_latency_ms,
    and cost_usd (when a case reports a cost or a rule reads it)."""
    rules: list[RuleBlock] = Field(default_factory=list)
    """The regression rules' outcomes (scope `regression`)."""
    pairwise: PairwiseBlock | None = None
    """This run's changed answers against main's, judged pairwise; null without a model judge or when no answer
    changed."""
    baseline_rules: list[RuleBlock] = Field(default_factory=list)
    """The baseline's suite rules with their outcomes, as the baseline recorded them: which rules were already
    failing on main (`headline.rules_failing_on_main`)."""
    notices: list[str] = Field(default_factory=list)
    """What limits the comparison, in sentences: an old, undated or future-dated baseline, a changed case set
    (other ids, or the same ids under another `case_set_hash`), different rules, a different judge."""
    confidence: float = 0.95
    """Two-sided level of every interval (1 - gate.significance)."""
