"""The run's bill in one phrase, for every output that shows it: "judge $0.41 · service $1.20".

Unknown is never zero: a judge whose model has no price reads "judge cost unknown", and a service cost is shown
only when the replies (or the service's traces) gave one.
"""

from __future__ import annotations

from ragjudge.metrics.names import JUDGE_COST_USD
from ragjudge.report.suite_block import SuiteBlock


def cost_words(suite: SuiteBlock) -> str:
    """The judge's and the service's cost, or "" when the run made no judge call and no service cost is known."""
    extra = suite.model_extra or {}
    return bill_words(
        extra.get("judge_calls"),
        extra.get(JUDGE_COST_USD),
        extra.get("service_cost_usd"),
        extra.get("service_trace_cost_usd"),
    )


def bill_words(judge_calls: object, judge_cost: object, service: object = None, traced: object = None) -> str:
    """The phrase from its figures (a gate run's suite, a canary's report): the judge's cost once it made a call,
    unknown when it has none; the service's as its replies reported it, else as its traces' tokens priced it."""
    parts = []
    if judge_calls:
        judge = _usd(judge_cost)
        parts.append("judge cost unknown" if judge is None else f"judge {dollars(judge)}")
    reported, from_traces = _usd(service), _usd(traced)
    if reported is not None:
        parts.append(f"service {dollars(reported)}")
    elif from_traces is not None:
        parts.append(f"service {dollars(from_traces)} (its traces' tokens)")
    return " · ".join(parts)


def dollars(usd: float) -> str:
    """To the cent, and a cost under a cent to four places: a small bill that was spent never reads as $0.00."""
    return f"${usd:.4f}" if 0 < usd < 0.01 else f"${usd:.2f}"


def _usd(value: object) -> float | None:
    """A figure from a report (read back, so anything): a number, else unknown."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
