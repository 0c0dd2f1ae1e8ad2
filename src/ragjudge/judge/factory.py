"""Choosing the judge named by `judge.provider`."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.config import JudgeConfig
from ragjudge.judge.interface import Judge
from ragjudge.judge.offline import OfflineJudge
from ragjudge.rules import Rule


def make_judge(config: JudgeConfig, rules: Sequence[Rule] = (), classify_refusal: bool = False) -> Judge:
    """The configured judge; `rules` tell the model judge which scores are borderline (escalation).

    `classify_refusal` (`endpoint.refusal.judge`) has the model judge say whether an answer declined.
    """
    if config.provider == "offline":
        return OfflineJudge(config.min_overlap)
    from ragjudge.judge.openai_judge import OpenAIJudge  # imported late: the SDK is slow to import

    return OpenAIJudge(config, rules, classify_refusal=classify_refusal)
