"""What a canary's judge spent, and the ceiling it was held to (`judge.budget_usd`, `judge.max_calls`).

Each canary analysis is its own budget, as each gate run (or shard) is: `ragjudge canary` once, or every analysis
`ragjudge serve` runs. A call that would pass a ceiling is not made, nor any after it; the sample's endpoint calls
all go on (latency is measured on every one), and each answer left unjudged says why ("budget exhausted: ...").
A canary that ran out is never promoted: it is `inconclusive` and exits 3 (could not evaluate), as a judge that
failed inside ragjudge is; a rule that already failed on what was measured still rolls back.

The judge's calls are counted whether or not a ceiling is set, so the report says what the canary cost; a model
without a price under `judge.prices` costs unknown (null), never 0, with one warning naming the key to set.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragjudge.canary.sample import ARMS, ArmRun
from ragjudge.judge.budget import EXHAUSTED, Budget


def unjudged(runs: Mapping[str, ArmRun]) -> int:
    """Answers the budget left without a judgement (a faithfulness call refused, or an escalation)."""
    return sum(EXHAUSTED in (o.unscored or "") for arm in ARMS for o in runs[arm].observations)


def ran_out(spend: Budget, runs: Mapping[str, ArmRun]) -> str | None:
    """Why the canary cannot be promoted, when its budget ran out; None when it held."""
    if spend.exhausted is None:
        return None
    answered = sum(len(runs[arm].latencies) for arm in ARMS)
    cut = unjudged(runs)
    return (
        f"{spend.reason()} after {answered - cut} of {answered} answers; {cut} not judged are errors: "
        "the canary cannot be promoted (raise judge.budget_usd or judge.max_calls, or shrink canary.sample)"
    )
