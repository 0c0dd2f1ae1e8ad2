"""Choosing the judge named by `judge.provider`."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.budget import Budget
from ragjudge.judge.interface import Judge, Threshold
from ragjudge.judge.offline import OfflineJudge
from ragjudge.metrics.names import CONTEXT_PRECISION


def make_judge(
    config: JudgeConfig, rules: Sequence[Threshold] = (), classify_refusal: bool = False, spend: Budget | None = None
) -> Judge:
    """The configured judge; `rules` tell the model judge which scores are borderline (escalation).

    `classify_refusal` (`endpoint.refusal.judge`) has the model judge say whether an answer declined.
    `spend`: the model judge's own budget (a canary's), else the gate run's (`judge.budget.running`).

    With a `context_precision` case rule the model judge is wrapped for LLM context precision
    (see `judge.precision`); without one nothing reads it, so no call is spent on it.
    """
    if config.provider == "offline":
        return OfflineJudge(config.min_overlap, config.reference, config.criteria)
    from ragjudge.judge.openai_judge import OpenAIJudge  # imported late: the SDK is slow to import

    judge = OpenAIJudge(config, rules, classify_refusal=classify_refusal, spend=spend)
    if not any(r.metric == CONTEXT_PRECISION for r in rules):
        return judge
    from ragjudge.judge.evidence import EvidenceScorer
    from ragjudge.judge.precision import PrecisionJudge

    # One caller for both: one 429 slows both, and the response-format fallback is learned once.
    return PrecisionJudge(judge, EvidenceScorer(config, caller=judge.caller, spend=spend))
