"""Main's judgement of the very same reply, counted as one of a rejudged case's votes (`judge.rejudge`).

A service that did not change gives the same answer from the same passages; when main's run judged that very
reply, with the same judge and the same case rules, main's outcome is one more judgement of it, and costs no
call. So a judge flip on an unchanged answer shows as a split (main's vote against this run's), and a split alone
never makes a regression. Anything that could make the two judgements differ for a reason other than the judge's
noise takes the vote away: another answer or other passages (ids, or the text as the report keeps it), another
case (its hash), another judge (model or prompt fingerprint), other case rules, a conversation, or a main run
that did not judge the case (an error, a skip). Main's votes are named by the samples main asked, so a judgement
this run reads from a cache shared with main's is main's vote, counted once, not a fresh one.
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
from ragjudge.gate.votes import Vote
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
    """Main's judgements of a reply this run judges too: each one of this run's votes, at no call."""

    status: str
    """Main's outcome for the case (`pass` or `fail`)."""
    votes: tuple[Vote, ...]
    """Main's rubric votes, by the samples main's run asked (its first alone when its report kept no votes)."""


def _votes_of(base: CaseBlock, judged: Sequence[str]) -> tuple[Vote, ...] | None:
    """Main's rubric votes from its report; None when a report of old judged the case again and kept no votes."""
    runs = base.judge_runs
    if runs is not None and "votes" in runs.model_fields_set:
        return tuple(
            Vote("rubric", int(v["sample"]), bool(v["good"]), "main", tuple(v.get("conditions") or ()))
            for v in runs.votes
            if v.get("source") == "rubric" and v.get("by", "this run") in ("this run", "main")
        )
    if runs is not None:
        return None
    conditions = tuple(c for c in base.failed_conditions if by_the_judge(c, judged))
    return (Vote("rubric", 0, not conditions, "main", conditions),)


def main_votes(
    results: Sequence[CaseResult], baseline: Report, rules: Sequence[Rule], judge: JudgeConfig
) -> dict[str, MainVote]:
    """Main's votes for each case whose very reply main judged, by case id.

    A judgement main made is main's vote however this run came to hold it (its own call, or a judge cache shared
    with main's run, which returns main's very reply): one judgement, one vote (`gate.votes`).
    """
    if not same_judge(baseline, judge) or not same_case_rules(baseline, rules):
        return {}
    judged = judge_metrics(rules)
    base_by_id = {c.id: c for c in baseline.cases}
    found: dict[str, MainVote] = {}
    for result in results:
        base = base_by_id.get(result.case.id)
        if base is None or base.status not in ("pass", "fail") or base.case_hash != case_hash(result.case):
            continue
        if not same_reply(result, base) or result.judgement is None:
            continue
        votes = _votes_of(base, judged)
        if votes:
            found[result.case.id] = MainVote(base.status, votes)
    return found
