"""Which failed conditions only the judge decides: a `judge.<dimension>`, faithfulness, the reference or a
criterion, or a contradicted reference point. A rejudge asks about them again (`gate.rejudge`); an uncalibrated
judge's are reported without blocking when the team says so (`gate.advisory`)."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.metrics import registry
from ragjudge.rules import Rule

_CONTRADICTED = "contradicts the reference"
_TURN_PREFIX = "turn "


def judge_metrics(rules: Sequence[Rule]) -> tuple[str, ...]:
    """The case rules' metrics only a judge gives a value."""
    return tuple(r.metric for r in rules if registry.needs_judge(r.metric))


def by_the_judge(condition: str, judged: Sequence[str]) -> bool:
    """Whether `condition` (as a case's `failed_conditions` words it) is one only the judge decided."""
    return condition.startswith(_CONTRADICTED) or any(condition.startswith(metric + " ") for metric in judged)
