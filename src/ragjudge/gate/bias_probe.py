"""`ragjudge run --bias-check N`: the evidence judge's position bias, measured on this run's cases.

The passages of N sampled cases (at least two passages with text each) are scored with the
question as the claim, in the order retrieved and reversed: one extra call per case, plus the
in-order call when LLM context precision did not already make it. The result goes into the
report's suite block as `position_bias`, a line into the comment, and its calls, tokens and
cost into the run's usage. It needs the model judge: with the offline judge it is skipped
with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.scoring import CaseResult
from ragjudge.gate.suite_figures import RunUsage, with_run_usage
from ragjudge.judge.bias import MAX_FLIP_RATE, BiasItem, BiasResult, position_bias, sample
from ragjudge.judge.interface import Judge
from ragjudge.judge.precision import EvidenceJudgement, PrecisionJudge
from ragjudge.report.model import Report
from ragjudge.report.suite_block import SuiteBlock

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer, PassageScore


class BiasCheck:
    """One run's `--bias-check`: prepared before the cases, run after them, attached to the report."""

    def __init__(self, scorer: EvidenceScorer, n: int, seed: int, concurrency: int) -> None:
        self.scorer = scorer
        self.n = n
        self.seed = seed
        self.concurrency = concurrency
        self.result: BiasResult | None = None

    @classmethod
    def prepare(cls, config: JudgeConfig, judge: Judge, n: int, seed: int, warnings: list[str]) -> BiasCheck | None:
        """The check, or None (with a warning when it was asked for but cannot run)."""
        if n <= 0:
            return None
        if config.provider != "openai":
            warnings.append(
                f"--bias-check {n} skipped: the position-bias check needs the model judge "
                "(judge.provider: openai); the offline judge is lexical and has no position to be biased by"
            )
            return None
        if isinstance(judge, PrecisionJudge):
            scorer = judge.scorer
        else:
            from ragjudge.judge.evidence import EvidenceScorer  # imports the SDK: only for the model judge

            scorer = EvidenceScorer(config, caller=getattr(judge, "caller", None))
        return cls(scorer, n, seed, config.concurrency)

    def run(self, results: Sequence[CaseResult], log: EventLog, warnings: list[str]) -> None:
        self.result = run_bias_check(self.scorer, results, self.n, self.seed, log, self.concurrency)
        if self.result.biased and not self.result.inconclusive:
            warnings.append(f"the judge looks position-biased: {self.result.summary()}")

    def attach(self, report: Report) -> Report:
        if self.result is None:
            return report
        bias = self.result
        # The bias check's calls are judge calls like any other: they count in the run's usage and cost.
        totals = with_run_usage(report.suite.model_dump(), RunUsage(bias.calls, bias.tokens, bias.cost_usd))
        suite = SuiteBlock.model_validate({**totals, "position_bias": bias.as_dict()})
        return report.model_copy(update={"suite": suite})


def _forward_from(judgement: Any, count: int) -> list[PassageScore] | None:
    """In-order scores already made for LLM context precision, for the first `count` passages with text."""
    from ragjudge.judge.evidence import PassageScore

    if not isinstance(judgement, EvidenceJudgement) or not judgement.evidence:
        return None
    rows = [row for row in judgement.evidence if "note" not in row]  # passages with text, in rank order
    if len(rows) < count:
        return None
    return [PassageScore(k, row.get("score"), unscored=row.get("unscored")) for k, row in enumerate(rows[:count])]


def run_bias_check(
    scorer: EvidenceScorer,
    results: Sequence[CaseResult],
    n: int,
    seed: int,
    log: EventLog,
    concurrency: int,
) -> BiasResult:
    """Reverse the passages of `n` sampled cases (the question as the claim) and count score flips."""
    from ragjudge.judge.evidence import MAX_BATCH

    asked = [r for result in results for r in (result.turns or (result,))]  # a conversation's turns each count
    eligible = [r for r in asked if r.endpoint.trace is not None and len(r.endpoint.trace.evidence) >= 2]
    picked = sample(eligible, n, seed)
    items = {
        r.case.id: BiasItem(r.case.id, r.case.question, tuple(p.text for p in r.endpoint.trace.evidence[:MAX_BATCH]))
        for r in picked
        if r.endpoint.trace is not None
    }
    judgements = {r.case.id: r.judgement for r in picked}

    def in_order(item: BiasItem) -> list[PassageScore] | None:
        return _forward_from(judgements[item.id], len(item.passages))

    def write(case_id: str, fields: dict[str, Any]) -> None:
        log.write("judge", case_id, fields)

    return position_bias(list(items.values()), scorer, write, MAX_FLIP_RATE, concurrency, in_order, "bias_check")
