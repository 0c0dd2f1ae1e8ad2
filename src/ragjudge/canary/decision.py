"""The canary decision: every rule decided in the configured mode, then one verdict.

The verdict is `rollback` if any rule fails, `promote` if every rule passes, else `inconclusive`.
Its reasons are those of the failing rules (rollback), of the undecided rules (inconclusive) or,
in statistical mode, of every rule (promote). Point mode gives the reasons of the plain point-estimate
rule (`canary/point.py`): only the broken conditions, the latency one once, and none for a promote.
"""

from __future__ import annotations

from ragjudge.canary import point, statistical
from ragjudge.canary.thresholds import CanaryRule
from ragjudge.canary.values import Decision, Evidence, MetricResult, Settings, Verdict, verdict_of


def _reasons(verdict: Verdict, metrics: tuple[MetricResult, ...], settings: Settings) -> tuple[str, ...]:
    wanted = {"rollback": "fail", "inconclusive": "inconclusive", "promote": "pass"}[verdict]
    if settings.mode == "point" and verdict == "promote":
        return ()
    reasons: list[str] = []
    for m in metrics:
        if m.decision == wanted and m.reason not in reasons:
            reasons.append(m.reason)
    return tuple(reasons)


def decide(evidence: Evidence, rules: tuple[CanaryRule, ...], settings: Settings) -> Decision:
    """Decide every rule and the verdict. Missing or too little data is inconclusive, never a promote."""
    module = point if settings.mode == "point" else statistical
    metrics = tuple(module.decide_metric(rule, evidence, settings) for rule in rules)
    verdict = verdict_of(tuple(m.decision for m in metrics))
    return Decision(
        verdict=verdict,
        reasons=_reasons(verdict, metrics, settings),
        metrics=metrics,
        mode=settings.mode,
        confidence=settings.confidence,
    )
