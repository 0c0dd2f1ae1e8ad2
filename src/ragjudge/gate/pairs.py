"""This run's answers against main's, judged pairwise (`judge.pairwise`): the calls, made during the run (the
figures the regression rules read are `compare.pairwise_summary`'s).

Only answers whose text changed are compared: an unchanged answer is neither better nor worse, and costs no call.
A conversation is not compared (its turns' answers rest on one another). Main's passages are shown when its
report kept their text; otherwise the judge sees main's answer alone, and the reasons say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from ragjudge.gate.eventlog import EventLog
from ragjudge.gate.main_vote import same_words
from ragjudge.gate.scoring import CaseResult
from ragjudge.judge.pairwise import PairVerdict, PairwiseJudge, Side
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.model import Report
from ragjudge.report.trace_block import PASSAGE_CHARS

NO_MAIN_PASSAGES = "main's report kept no passage text: main's answer was shown without its passages"


def _points(expected: str | Sequence[str] | None) -> list[str]:
    if expected is None:
        return []
    return [expected] if isinstance(expected, str) else list(expected)


def changed(result: CaseResult, base: CaseBlock | None) -> bool:
    """Whether this run's answer differs from main's (both one question, both answered)."""
    trace = result.endpoint.trace
    if base is None or result.turns or base.turns or trace is None or trace.answer is None:
        return False
    return base.trace.answer is not None and not same_words(trace.answer, base.trace.answer)


def judge_pairs(
    results: Sequence[CaseResult],
    baseline: Report,
    judge: PairwiseJudge,
    log: EventLog,
    workers: int,
    rounds: int = 1,
) -> dict[str, PairVerdict]:
    """A verdict for each case whose answer changed since main, by case id; up to `rounds` rounds of both orders
    while they leave the verdict unsettled (`judge.pairwise.settle`)."""
    base_by_id = {c.id: c for c in baseline.cases}
    # A case pending review gates nothing, so its answer is not worth two judge calls.
    todo = [r for r in results if r.case.gates and changed(r, base_by_id.get(r.case.id))]

    def one(result: CaseResult) -> PairVerdict:
        base = base_by_id[result.case.id]
        trace = result.endpoint.trace
        assert trace is not None and trace.answer is not None and base.trace.answer is not None
        main_passages = tuple(p.text for p in base.trace.passages if p.text)
        verdict = judge.compare(
            result.case.question,
            _points(result.case.expected),
            Side(base.trace.answer, main_passages),
            # Main's report keeps each passage's first PASSAGE_CHARS: this run's are cut alike, so neither side
            # is judged on more of its evidence than the other.
            Side(trace.answer, tuple(p.text[:PASSAGE_CHARS] for p in trace.passages if p.text)),
            lambda fields: log.write("judge", result.case.id, fields),
            rounds,
        )
        if base.trace.passages and not main_passages:
            return replace(verdict, reasons=(*verdict.reasons, NO_MAIN_PASSAGES))
        return verdict

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="pairwise") as pool:
        return {r.case.id: v for r, v in zip(todo, pool.map(one, todo), strict=True)}
