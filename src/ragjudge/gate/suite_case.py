"""A case as the suite reads it: from a live result (`run`) or a saved case block (`merge`).

Each case is first read into a `SuiteCase` (what it holds, nothing worked out); every suite figure is made from
those (`gate.suite_figures`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ragjudge.cases.scope import expects_answer
from ragjudge.gate.scoring import CaseResult, RunRecord, Status
from ragjudge.gate.tool_checks import tool_state
from ragjudge.judge.interface import Judgement
from ragjudge.judge.reference import ReferencePoint, answer_correctness, contradictions
from ragjudge.report.case_block import CaseBlock, TurnBlock
from ragjudge.report.judge_block import JudgeBlock


@dataclass(frozen=True)
class Reply:
    """What the suite reads of the reply a case's result stands on."""

    refused: bool
    latency_ms: float
    cost_usd: float | None
    """What the endpoint said the call cost; None when it said nothing."""
    ttft_ms: float | None = None
    """A streamed reply's time to the first token; None for one JSON body."""


@dataclass(frozen=True)
class Judged:
    """What the suite reads of a case's judgement."""

    faithfulness: float | None
    unscored: bool
    """Some judgement could not be made: a judge error, counted by `judge_error_rate`."""
    cost_usd: float
    calls: int
    cache_hits: int
    tokens: int
    answer_correctness: float | None = None
    """Judged against the reference: (covered + half of partial) / points; None when not judged."""
    contradictions: int | None = None
    """Reference points the answer contradicts; None when the reference was not judged."""
    criteria: Mapping[str, float] = field(default_factory=dict)
    """The team's criteria, 1 to 5, by name."""

    @classmethod
    def of(cls, judgement: Judgement) -> Judged:
        points = judgement.reference_points
        return cls(
            faithfulness=judgement.faithfulness,
            unscored=bool(judgement.unscored),
            cost_usd=judgement.cost_usd,
            calls=judgement.calls,
            cache_hits=judgement.cache_hits,
            tokens=judgement.tokens,
            answer_correctness=answer_correctness(points) if points is not None else None,
            contradictions=contradictions(points) if points is not None else None,
            criteria=dict(judgement.criteria),
        )

    @classmethod
    def of_saved(cls, judge: JudgeBlock) -> Judged:
        """Read back from a report's `judge` block; a criterion whose score is not a number is left out."""
        points = None
        if judge.reference_points is not None:
            points = tuple(ReferencePoint(p.point, p.verdict, "", "") for p in judge.reference_points)
        return cls(
            faithfulness=judge.faithfulness,
            unscored=bool(judge.unscored),
            cost_usd=judge.cost_usd or 0.0,  # unknown (null) is said by `gate.spending`, never summed as 0
            calls=judge.calls,
            cache_hits=judge.cache_hits,
            tokens=judge.tokens,
            answer_correctness=answer_correctness(points) if points is not None else None,
            contradictions=contradictions(points) if points is not None else None,
            criteria={name: float(c.score) for name, c in judge.criteria.items() if c.score is not None},
        )


@dataclass(frozen=True)
class SuiteCase:
    """One case as the suite reads it, from a live result (`run`) or a saved case block (`merge`).

    Both give only what they hold, unworked: every figure made of these values (whether the decline was
    right, which latency the percentiles use, what the runs cost) is made below, once, for both.
    """

    id: str
    status: Status
    failed_conditions: tuple[str, ...]
    should_answer: bool
    reply: Reply | None
    """None when the case got no usable reply."""
    judged: Judged | None
    runs: tuple[RunRecord, ...] = ()
    """Every run when the case was repeated; empty otherwise."""
    flaky: bool = False
    turns: tuple[SuiteCase, ...] = ()
    """A conversation's asked turns, each read as a case: the suite's figures count turns."""
    tools_held: str | None = None
    """Whether its tool conditions held (`held`, `failed`, `unknown`); None when it has none."""

    @classmethod
    def of_result(cls, result: CaseResult) -> SuiteCase:
        trace = result.endpoint.trace
        if result.turns:
            return cls(
                id=result.case.id,
                status=result.status,
                failed_conditions=tuple(result.failed_conditions),
                should_answer=result.case.should_answer,
                reply=None,
                judged=None,
                runs=result.runs,
                flaky=result.flaky,
                turns=tuple(cls.of_result(t) for t in result.turns),
            )
        return cls(
            id=result.case.id,
            status=result.status,
            failed_conditions=tuple(result.failed_conditions),
            should_answer=result.case.should_answer,
            reply=Reply(trace.refused, trace.latency_ms, trace.cost_usd, trace.ttft_ms) if trace is not None else None,
            judged=Judged.of(result.judgement) if result.judgement is not None else None,
            runs=result.runs,
            flaky=result.flaky,
            tools_held=tool_state(result.case, trace),
        )

    @classmethod
    def of_block(cls, block: CaseBlock | TurnBlock) -> SuiteCase:
        """A saved case (or turn): its reply's latency and cost as the report keeps them (latency to 0.1 ms)."""
        trace = block.trace
        reply = None
        if trace.latency_ms is not None and trace.refused is not None:
            reply = Reply(trace.refused, trace.latency_ms, trace.cost_usd, trace.ttft_ms)
        if isinstance(block, TurnBlock):
            status: Status = "error" if block.status == "not evaluated" else block.status
            runs: tuple[RunRecord, ...] = ()
            turns: tuple[SuiteCase, ...] = ()
            flaky, ident = False, f"{block.turn}"
        else:
            status, ident, flaky = block.status, block.id, block.flaky
            runs = tuple(RunRecord.of_saved(run) for run in block.runs)
            turns = tuple(cls.of_block(t) for t in block.turns if t.status != "not evaluated")
        return cls(
            id=ident,
            status=status,
            failed_conditions=tuple(block.failed_conditions),
            # Reports written before should_answer was recorded leave it to the category, as case files do.
            should_answer=expects_answer(block.should_answer, block.category),
            reply=None if turns else reply,
            # `judged: false` marks a case the judge never saw (reports before it: an empty block).
            judged=Judged.of_saved(block.judge) if block.judge.was_judged() and not turns else None,
            runs=runs,
            flaky=flaky,
            turns=turns,
            tools_held=block.tools_held,
        )
