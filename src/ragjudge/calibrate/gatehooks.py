"""What calibration adds to `ragjudge run`: the calibration check, LLM context precision, `--bias-check`.

Kept here so that the gate itself changes by a few lines:

* the calibration record is checked for `judge.provider: openai` (see `fingerprint`); with
  `judge.require_calibration: true` a missing, unfit or stale calibration refuses the run:
  every case errors with the reason, no endpoint or judge call is made, the verdict is `error`;
* with a `context_precision` case rule, cases without golden ids get LLM context precision
  from the evidence judge (see `judge.precision`); without such a rule nothing reads it, so no
  call is spent on it;
* `--bias-check N` scores the passages of N sampled cases in reversed order (one extra call
  each, plus the in-order call when LLM context precision did not already make it) and puts
  `position_bias` into the report's suite block and a line into the comment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragjudge.calibrate.bias import MAX_FLIP_RATE, BiasItem, BiasResult, position_bias, sample
from ragjudge.calibrate.fingerprint import calibration_gate
from ragjudge.cases import Case
from ragjudge.config import Config
from ragjudge.endpoint.client import EndpointResult
from ragjudge.eventlog import EventLog
from ragjudge.judge.interface import Judge
from ragjudge.judge.precision import EvidenceJudgement, PrecisionJudge
from ragjudge.report.model import Report, SuiteBlock
from ragjudge.rules import Rule
from ragjudge.scoring import CaseResult

if TYPE_CHECKING:
    from ragjudge.calibrate.evidence import EvidenceScorer, PassageScore


class RunExtras:
    """The calibration pieces of one gate run."""

    def __init__(
        self,
        judge: Judge,
        refusal: str | None,
        scorer: EvidenceScorer | None,
        bias_check: int,
        seed: int,
        concurrency: int,
    ) -> None:
        self.judge = judge
        """The judge to run: the configured one, wrapped for LLM context precision when needed."""
        self.refusal = refusal
        """Why the gate refuses to evaluate (require_calibration), or None."""
        self.scorer = scorer
        self.bias_check = bias_check
        self.seed = seed
        self.concurrency = concurrency
        self.position_bias: BiasResult | None = None

    @classmethod
    def prepare(
        cls,
        config: Config,
        case_rules: Sequence[Rule],
        judge: Judge,
        bias_check: int,
        seed: int,
        warnings: list[str],
    ) -> RunExtras:
        refusal = calibration_gate(config.judge, warnings)
        wants_precision = any(r.metric == "context_precision" for r in case_rules)
        scorer: EvidenceScorer | None = None
        if config.judge.provider == "openai" and (wants_precision or bias_check > 0):
            from ragjudge.calibrate.evidence import EvidenceScorer  # imports the SDK: only for the model judge

            scorer = EvidenceScorer(config.judge, caller=getattr(judge, "caller", None))
            if wants_precision:
                judge = PrecisionJudge(judge, scorer)
        elif bias_check > 0:
            warnings.append(
                f"--bias-check {bias_check} skipped: the position-bias check needs the model judge "
                "(judge.provider: openai); the offline judge is lexical and has no position to be biased by"
            )
        return cls(judge, refusal, scorer, bias_check, seed, config.judge.concurrency)

    def refused(self, cases: Sequence[Case]) -> list[CaseResult]:
        """Every case as an error with the refusal's reason: nothing was called."""
        reason = self.refusal or "not evaluated"
        empty = EndpointResult(None, reason, 0, 0.0, 0.0, None)
        return [CaseResult(case, "error", (reason,), {}, empty, None) for case in cases]

    def check_bias(self, results: Sequence[CaseResult], log: EventLog, warnings: list[str]) -> None:
        """`--bias-check N`: reverse the passages of N sampled cases and count score flips."""
        if self.scorer is None or self.bias_check <= 0 or self.refusal:
            return
        self.position_bias = run_bias_check(self.scorer, results, self.bias_check, self.seed, log, self.concurrency)
        if self.position_bias.biased and not self.position_bias.inconclusive:
            warnings.append(f"the judge looks position-biased: {self.position_bias.summary()}")

    def attach(self, report: Report) -> Report:
        if self.position_bias is None:
            return report
        bias = self.position_bias
        totals = report.suite.model_dump()
        # The bias check's calls are judge calls like any other: they count in the run's usage and cost.
        totals["judge_calls"] = totals.get("judge_calls", 0) + bias.calls
        totals["judge_tokens"] = totals.get("judge_tokens", 0) + bias.tokens
        totals["judge_cost_usd"] = round(totals.get("judge_cost_usd", 0.0) + bias.cost_usd, 6)
        if bias.cost_usd:
            totals["cost_usd"] = round((totals.get("cost_usd") or 0.0) + bias.cost_usd, 6)
        suite = SuiteBlock.model_validate({**totals, "position_bias": bias.as_dict()})
        return report.model_copy(update={"suite": suite})


def _forward_from(judgement: Any, count: int) -> list[PassageScore] | None:
    """In-order scores already made for LLM context precision, for the first `count` passages with text."""
    from ragjudge.calibrate.evidence import PassageScore

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
    from ragjudge.calibrate.evidence import MAX_BATCH

    eligible = [r for r in results if r.endpoint.trace is not None and len(r.endpoint.trace.evidence) >= 2]
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
