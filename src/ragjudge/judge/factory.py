"""Choosing the judge named by `judge.provider`."""

from __future__ import annotations

from ragjudge.config import JudgeConfig
from ragjudge.judge.interface import Judge
from ragjudge.judge.offline import OfflineJudge


def make_judge(config: JudgeConfig) -> Judge:
    if config.provider == "offline":
        return OfflineJudge(config.min_overlap)
    from ragjudge.judge.openai_judge import OpenAIJudge  # imported late: the SDK is slow to import

    return OpenAIJudge(config)
