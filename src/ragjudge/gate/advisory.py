"""An uncalibrated judge reports, it does not block (`judge.uncalibrated: report`).

With a model judge whose calibration is missing, stale or unfit, and `judge.require_calibration` off, a team may
say that the conditions only that judge decides are findings to read, not reasons to block: each case's such
conditions move to its `advisory_conditions`, and a case that failed on nothing else passes. The default
(`gate`) blocks on them, as before. Errors (a judgement that could not be made) are never made advisory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragjudge.gate.judge_decided import by_the_judge, judge_metrics
from ragjudge.gate.scoring import CaseResult
from ragjudge.rules import Rule


def advisory(results: Sequence[CaseResult], rules: Sequence[Rule], state: str) -> tuple[list[CaseResult], str | None]:
    """The results with the judge-only conditions of failing cases made advisory, and the warning that says so
    (None when nothing moved)."""
    judged = judge_metrics(rules)
    out: list[CaseResult] = []
    moved = cases = 0
    for result in results:
        if result.status != "fail" or result.turns:
            out.append(result)
            continue
        kept = tuple(c for c in result.failed_conditions if not by_the_judge(c, judged))
        told = tuple(c for c in result.failed_conditions if by_the_judge(c, judged))
        if not told:
            out.append(result)
            continue
        moved += len(told)
        cases += 1
        out.append(replace(result, status="fail" if kept else "pass", failed_conditions=kept, advisory=told))
    if not moved:
        return out, None
    return out, (
        f"the judge is not calibrated ({state}): {moved} condition(s) only it decided, on {cases} case(s), are "
        "reported as advisory, not blocking (judge.uncalibrated: report); calibrate it to gate on them"
    )
