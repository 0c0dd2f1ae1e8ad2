"""The JSON report: `schema_version` 1. Field names here, and in the blocks' modules, are the public contract.

The blocks: `headline_block` (what a reviewer reads first), `suite_block` (the suite and the rules), `case_block`
(a case, its turns and runs), `trace_block` (the endpoint's reply), `judge_block` (what the judge said),
`comparison_block` (the run against the baseline) and `provenance_block` (where the report comes from, and its
judge).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragjudge import __version__
from ragjudge.report.block import Block
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.comparison_block import ComparisonBlock
from ragjudge.report.headline_block import FailureGroupBlock, HeadlineBlock
from ragjudge.report.provenance_block import JudgeInfoBlock, JudgeTrustBlock, ProvenanceBlock
from ragjudge.report.suite_block import RuleBlock, SuiteBlock


class ShardBlock(Block):
    """Which part of the case set a `run --shard i/n` evaluated, so `merge` can tell a missing shard."""

    index: int
    """Which shard this is, from 1 to `count`."""
    count: int
    """How many shards the case set was split into."""
    total_cases: int
    """Cases in the whole set, before sharding."""
    positions: list[int] = Field(default_factory=list)
    """Each case's place in the whole set, parallel to `cases`: `merge` restores the set's order."""


class InterruptedBlock(Block):
    """Present when a signal stopped the run: the report holds only the cases finished before it."""

    signal: str
    """What stopped the run: `SIGINT` or `SIGTERM`."""
    cases_done: int
    """Cases finished before the signal: the report's cases."""
    cases_total: int
    """Cases the run set out to evaluate (a shard's: that shard's)."""
    reason: str
    """`interrupted after N of M cases`; the same sentence opens `warnings`."""


class Report(Block):
    """The whole report as written by `--report`."""

    schema_version: Literal[1] = 1
    """Always 1: names never change within it; fields may be added."""
    verdict: Literal["pass", "fail", "error"]
    """`error` when no case could be evaluated, more than `gate.max_error_rate` of the cases errored
    (`error_reason` says which error dominated), the judge failed inside ragjudge on a case, or the run was
    interrupted; else `fail` when a suite rule or a
    regression rule failed; else `pass`. A shard's verdict covers that shard only."""
    suite: SuiteBlock
    """The suite's metrics."""
    rules: list[RuleBlock]
    """Every case rule, then every suite rule, with its outcome (regression rules are in `comparison.rules`)."""
    cases: list[CaseBlock]
    """Every evaluated case, in case-set order (a merged report: the whole set's order)."""
    judge_info: JudgeInfoBlock = Field(default_factory=JudgeInfoBlock)
    """The judge that judged the cases. A merged report has the first shard's."""
    warnings: list[str] = Field(default_factory=list)
    """Sentences about the run a person should read (no baseline, a mapping key that found nothing, an
    uncalibrated judge, ...); empty when there is nothing to say."""
    error_reason: str | None = None
    """Why the verdict is `error` because of the cases' errors: every case errored, or more than
    `gate.max_error_rate` of them did (`13 of 15 cases errored (87%), over gate.max_error_rate 0.5: the verdict is
    error; the error that dominated (12 of 13): endpoint error: ...`), or the judge failed inside ragjudge on one
    (`the judge failed inside ragjudge on 1 of 3 cases: the verdict is error; the first, case 'c1': ...`); the
    same sentence opens `warnings`. Null otherwise (an interrupted run says why in `interrupted`)."""
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "ragjudge", "version": __version__})
    """{name: `ragjudge`, version}: the ragjudge that wrote the report."""
    generated_at: str = ""
    """When the report was built: ISO 8601 in UTC, to the second; empty only in reports written without it."""
    shard: ShardBlock | None = None
    """Set by `run --shard i/n`; null otherwise, and in a merged report."""
    interrupted: InterruptedBlock | None = None
    """Set when SIGINT or SIGTERM stopped the run; null otherwise."""
    provenance: ProvenanceBlock = Field(default_factory=ProvenanceBlock)
    """Where the report comes from; empty in reports written before it was recorded. A merged report has the
    first shard's."""
    comparison: ComparisonBlock | None = None
    """The run against the baseline; null without a baseline, and for a shard or an interrupted run."""
    headline: HeadlineBlock | None = None
    """Why the gate blocked, what changed against the baseline and how far from green, in one sentence and its
    figures; the first line of the comment, the job summary, stdout and the HTML report. Null only in reports
    written before it was recorded."""
    judge_trust: JudgeTrustBlock | None = None
    """The judge's credentials: model, prompt fingerprint, the calibration it is gated on (agreement with people,
    its interval, labels, date, stale) and this run's flip rate and position consistency when measured. Null in
    reports written before it was recorded. A merged report has the first shard's."""
    failure_groups: list[FailureGroupBlock] = Field(default_factory=list)
    """The failing and errored cases grouped by the condition they failed on, the largest group first; empty
    when every case passed."""


def mark_interrupted(report: Report, signal: str, total: int) -> Report:
    """The verdict of a stopped run is `error`, whatever the finished cases say; the reason says how far it got."""
    done = len(report.cases)
    reason = f"interrupted after {done} of {total} cases"
    return report.model_copy(
        update={
            "verdict": "error",
            "warnings": [f"{reason} ({signal}): the report holds the finished cases only", *report.warnings],
            "interrupted": InterruptedBlock(signal=signal, cases_done=done, cases_total=total, reason=reason),
        }
    )
