"""`comparison.pairwise`: the pairwise verdicts of the changed answers, counted (the regression rules
`pairwise_loss_rate` and `pairwise_worse` read it)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragjudge.metrics.names import JUDGE_COST_USD
from ragjudge.report.case_block import CaseBlock, PairwiseCaseBlock
from ragjudge.report.comparison_block import PairwiseBlock
from ragjudge.report.model import Report
from ragjudge.stats.intervals import wilson_interval


def with_pairs(report: Report, pairs: Mapping[str, Any]) -> Report:
    """The report with each compared case's `pairwise` (`PairVerdict`s by case id), and the calls they cost in
    the suite's usage."""
    if not pairs:
        return report
    cases = [
        c.model_copy(update={"pairwise": PairwiseCaseBlock.model_validate(pairs[c.id].as_dict())})
        if c.id in pairs
        else c
        for c in report.cases
    ]
    extra = dict(report.suite.model_extra or {})
    for key, add in (
        ("judge_calls", sum(p.calls for p in pairs.values())),
        ("judge_tokens", sum(p.tokens for p in pairs.values())),
        ("judge_cache_hits", sum(p.cache_hits for p in pairs.values())),
        (JUDGE_COST_USD, round(sum(p.cost_usd for p in pairs.values()), 6)),
    ):
        extra[key] = (extra.get(key) or 0) + add
    suite = report.suite.model_validate({**report.suite.model_dump(exclude=set(extra)), **extra})
    return report.model_copy(update={"cases": cases, "suite": suite})


def summary(cases: Sequence[CaseBlock]) -> PairwiseBlock | None:
    """`comparison.pairwise` from the cases' verdicts; None when no case was compared pairwise."""
    judged = [c.pairwise for c in cases if c.pairwise is not None]
    if not judged:
        return None
    scored = [p for p in judged if p.verdict is not None]
    worse = sum(p.verdict == "worse" for p in scored)
    n = len(scored)
    ci = wilson_interval(worse, n, 0.95) if n else None
    interval: list[float] | None = None
    if ci is not None and math.isfinite(ci.lo) and math.isfinite(ci.hi):
        interval = [round(ci.lo, 4), round(ci.hi, 4)]
    fields: dict[str, Any] = {
        "compared": n,
        "better": sum(p.verdict == "better" for p in scored),
        "worse": worse,
        "tie": sum(p.verdict == "tie" for p in scored),
        "unscored": len(judged) - n,
        "loss_rate": worse / n if n else None,
        "loss_rate_interval": interval,
        "position_consistency": sum(p.consistent for p in scored) / n if n else None,
    }
    return PairwiseBlock.model_validate(fields)
