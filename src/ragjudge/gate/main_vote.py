"""Main's judgement of the very same reply, counted as one of a rejudged case's votes (`judge.rejudge`).

A service that did not change gives the same answer from the same passages; when main's run judged that very
reply, with the same judge and the same case rules, main's outcome is one more judgement of it, and costs no
call. So a judge flip on an unchanged answer shows as a split (main's vote against this run's), and a split alone
never makes a regression. Anything that could make the two judgements differ for a reason other than the judge's
noise takes the vote away: another answer or other passages (ids, or the text as the report keeps it), another
case (its hash), another judge (model or prompt fingerprint), other case rules, a conversation, or a main run
that did not judge the case (an error, a skip). So does a first judgement read from the judge cache: shared
between main's run and this one, it may be main's very judgement, which must not count twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.cases.hashing import case_hash
from ragjudge.compare.comparison import judge_difference
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.gate.judge_decided import by_the_judge, judge_metrics
from ragjudge.gate.provenance import judge_fingerprint
from ragjudge.gate.scoring import CaseResult
from ragjudge.report.case_block import CaseBlock
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import JudgeFingerprintBlock
from ragjudge.report.trace_block import PASSAGE_CHARS
from ragjudge.rules import Rule


def same_words(a: str, b: str) -> bool:
    """Whether two answers say the same, whitespace aside: an answer reflowed is not a changed answer (the
    pairwise judge compares only changed answers, by this test too)."""
    return a.split() == b.split()


def same_reply(result: CaseResult, base: CaseBlock) -> bool:
    """Whether main's case saw this very reply: the same answer (whitespace aside) from the same passages."""
    trace = result.endpoint.trace
    if trace is None or trace.answer is None or base.trace.answer is None or result.turns or base.turns:
        return False
    if not same_words(trace.answer, base.trace.answer) or len(trace.passages) != len(base.trace.passages):
        return False
    # Main's report keeps each passage's text trimmed; a report that kept no text cannot vouch for the passages.
    return all(
        p.id == b.id and b.text and p.text[:PASSAGE_CHARS] == b.text
        for p, b in zip(trace.passages, base.trace.passages, strict=True)
    )


def same_judge(baseline: Report, judge: JudgeConfig) -> bool:
    """Whether main's run was judged by this judge: the fingerprint the comparison reads (`judge_difference`)."""
    now = JudgeFingerprintBlock.model_validate(judge_fingerprint(judge))
    return judge_difference(now, baseline.provenance.judge_fingerprint) is None


def same_case_rules(baseline: Report, rules: Sequence[Rule]) -> bool:
    """Whether main's run checked its cases against these very case rules."""
    then = {(r.metric, r.op, float(r.threshold)) for r in baseline.rules if r.scope == "case"}
    return then == {(r.metric, r.op, float(r.threshold)) for r in rules if r.scope == "case"}


@dataclass(frozen=True)
class MainVote:
    """Main's judgement of a reply this run judged again."""

    status: str
    """`pass` when main failed the case on no condition the judge decides and this run's first judgement failed
    it on no other; else `fail`."""
    conditions: tuple[str, ...]
    """The conditions the vote fails the case on: main's that only the judge decides, and this run's that the judge
    does not decide (the same reply fails those either way)."""


def main_votes(
    results: Sequence[CaseResult], baseline: Report, rules: Sequence[Rule], judge: JudgeConfig
) -> dict[str, MainVote]:
    """Main's vote for each case whose very reply main judged, by case id."""
    if not same_judge(baseline, judge) or not same_case_rules(baseline, rules):
        return {}
    judged = judge_metrics(rules)
    base_by_id = {c.id: c for c in baseline.cases}
    votes: dict[str, MainVote] = {}
    for result in results:
        base = base_by_id.get(result.case.id)
        if base is None or base.status not in ("pass", "fail") or base.case_hash != case_hash(result.case):
            continue
        # A first judgement read from the judge cache may be main's very sample: it cannot vote twice.
        if not same_reply(result, base) or result.judgement is None or result.judgement.cache_hits:
            continue
        conditions = (
            *(c for c in base.failed_conditions if by_the_judge(c, judged)),
            *(c for c in result.failed_conditions if not by_the_judge(c, judged)),
        )
        votes[result.case.id] = MainVote("fail" if conditions else "pass", conditions)
    return votes
