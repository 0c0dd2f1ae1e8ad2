"""The report of one run, built from the walk's results: one case block per case, the suite, the rules."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from ragjudge.cases.case import Case
from ragjudge.cases.hashing import case_hash
from ragjudge.endpoint.spans import SpansSeen
from ragjudge.endpoint.trace import Passage
from ragjudge.gate.scoring import CaseResult, not_evaluated_reason
from ragjudge.gate.suite import RuleOutcome, SuiteResult
from ragjudge.gate.tool_checks import tool_state
from ragjudge.judge.interface import Judgement
from ragjudge.report.case_block import CaseBlock, TurnBlock
from ragjudge.report.judge_block import JudgeBlock
from ragjudge.report.model import Report
from ragjudge.report.provenance_block import JudgeInfoBlock
from ragjudge.report.spans_block import SpansBlock, SpanToolCallBlock
from ragjudge.report.suite_block import RuleBlock, SuiteBlock
from ragjudge.report.trace_block import PASSAGE_CHARS, PassageBlock, ToolCallBlock, TraceBlock
from ragjudge.report.workspace import workspace_path


def _k_of_n(result: CaseResult) -> str | None:
    if not result.runs:
        return None
    passed = sum(run.status == "pass" for run in result.runs)
    return f"{passed} of {len(result.runs)} passed"


def _passage(passage: Passage, dropped: bool) -> PassageBlock:
    # Text the run let go is left out of the record, not written as "": an empty text would read as a reply
    # that gave none (a mapping mistake).
    marked = {"source": "trace"} if passage.from_trace else {}
    if dropped:
        return PassageBlock(id=passage.id, **marked)
    return PassageBlock(id=passage.id, title=passage.title, text=passage.text[:PASSAGE_CHARS], **marked)


def _judge_block(judgement: Judgement) -> JudgeBlock:
    """The `judge` block of a judged answer: the keys the judgement has (`Judgement.as_dict`)."""
    return JudgeBlock.model_validate(judgement.as_dict())


def _not_judged(judge: str, reason: str) -> JudgeBlock:
    """The `judge` block of a case the judge never saw: every key a judged case has, empty, and why."""
    return JudgeBlock.model_validate(
        {**Judgement(judge=judge, notes=(f"not judged: {reason}",)).as_dict(), "judged": False}
    )


def _trace_block(result: CaseResult) -> TraceBlock:
    trace = result.endpoint.trace
    return TraceBlock(
        answer=trace.answer if trace else None,
        refused=trace.refused if trace else None,
        confidence=trace.confidence if trace else None,
        retrieved_ids=list(trace.retrieved_ids) if trace else [],
        latency_ms=round(trace.latency_ms, 1) if trace else None,
        cost_usd=trace.cost_usd if trace else None,
        error=result.endpoint.error,
        attempts=result.endpoint.attempts,
        retry_wait_ms=result.endpoint.retry_wait_ms,
        server_latency_ms=trace.server_latency_ms if trace else None,
        passages=[_passage(p, trace.passage_text_dropped) for p in trace.passages] if trace else [],
        refused_by=trace.refused_by if trace else None,
        positional_ids=bool(trace and trace.read.positional_ids),
        warnings=list(trace.warnings) if trace else [],
        ttft_ms=round(trace.ttft_ms, 1) if trace and trace.ttft_ms is not None else None,
        conversation_id=trace.conversation_id if trace else None,
        passages_unknown=bool(trace and trace.passages_unknown),
        protocol=trace.stream.protocol if trace and trace.stream else None,
        finish_reason=trace.stream.finish_reason if trace and trace.stream else None,
        reasoning=trace.stream.reasoning if trace and trace.stream else None,
        tool_calls=None
        if trace is None or trace.tool_calls is None
        else [
            ToolCallBlock(name=c.name, arguments=c.arguments, result=c.result, position=c.position)
            for c in trace.tool_calls
        ],
        spans=spans_block(trace.spans) if trace and trace.spans else None,
    )


def spans_block(seen: SpansSeen) -> SpansBlock:
    return SpansBlock(
        trace_id=seen.trace_id,
        parent_span_id=seen.span_id,
        conversation_ids=list(seen.conversation_ids),
        arrived=seen.arrived,
        joined_by=list(seen.joined_by),
        conventions=list(seen.conventions),
        passages_from=seen.passages_from,
        passage_ids=list(seen.passage_ids),
        passages_used=seen.passages_used,
        tool_calls=[SpanToolCallBlock(name=c.name, arguments=c.arguments, result=c.result) for c in seen.tool_calls],
        input_tokens=seen.input_tokens,
        output_tokens=seen.output_tokens,
        cost_usd=seen.cost_usd,
        server_ms=seen.server_ms,
        retrieval_ms=seen.retrieval_ms,
        generation_ms=seen.generation_ms,
        ttfc_ms=seen.ttfc_ms,
    )


def _expected(case: Case) -> str | list[str] | None:
    return list(case.expected) if isinstance(case.expected, tuple) else case.expected


def _turn_blocks(result: CaseResult, judge: str) -> list[TurnBlock]:
    """Every turn of a conversation: the asked ones as scored, the rest `not evaluated` with the reason."""
    blocks = []
    for turn in result.case.turns:
        asked = result.turns[turn.turn - 1] if turn.turn <= len(result.turns) else None
        blocks.append(
            TurnBlock(
                turn=turn.turn,
                question=turn.question,
                status=asked.status if asked else "not evaluated",
                failed_conditions=list(asked.failed_conditions) if asked else [not_evaluated_reason(len(result.turns))],
                metrics=dict(asked.metrics) if asked else {},
                judge=_judge_block(asked.judgement)
                if asked and asked.judgement
                else _not_judged(judge, "no usable reply" if asked and asked.endpoint.trace is None else "not asked"),
                trace=_trace_block(asked)
                if asked
                else TraceBlock(
                    answer=None,
                    refused=None,
                    confidence=None,
                    retrieved_ids=[],
                    latency_ms=None,
                    cost_usd=None,
                    error=None,
                ),
                category=turn.category,
                should_answer=turn.should_answer,
                tools=turn.tools.as_dict() if turn.tools else None,
                tools_held=tool_state(turn, asked.endpoint.trace) if asked else None,
                expected=_expected(turn),
                golden_context_ids=list(turn.golden_context_ids),
                must_mention=list(turn.must_mention),
                must_not_mention=list(turn.must_not_mention),
            )
        )
    return blocks


def _why_not_judged(result: CaseResult) -> str:
    if result.turns:
        return "a conversation is judged turn by turn (see turns)"
    return "no usable reply" if result.endpoint.trace is None else "the gate did not ask the judge"


def _case_block(result: CaseResult, judge: str) -> CaseBlock:
    return CaseBlock(
        id=result.case.id,
        category=result.case.category,
        status=result.status,
        failed_conditions=list(result.failed_conditions),
        metrics=dict(result.metrics),
        judge=_judge_block(result.judgement) if result.judgement else _not_judged(judge, _why_not_judged(result)),
        question=result.case.question,
        difficulty=result.case.difficulty,
        should_answer=result.case.should_answer,
        tools=result.case.tools.as_dict() if result.case.tools else None,
        tools_held=tool_state(result.case, result.endpoint.trace),
        expected=_expected(result.case),
        golden_context_ids=list(result.case.golden_context_ids),
        must_mention=list(result.case.must_mention),
        must_not_mention=list(result.case.must_not_mention),
        trace=_trace_block(result),
        flaky=result.flaky,
        runs=[run.as_saved() for run in result.runs],
        k_of_n=_k_of_n(result),
        turns=_turn_blocks(result, judge) if result.case.turns else [],
        case_hash=case_hash(result.case),
        judge_runs=result.judge_runs.as_dict() if result.judge_runs else None,
        # Undecided votes on a case that fails on nothing: it passes, and no one need read it as the judge's noise.
        judge_split=bool(result.judge_runs and result.judge_runs.undecided and result.status == "fail"),
        advisory_conditions=list(result.advisory),
        review=result.case.review,
        **_place(result.case),
    )


def _place(case: Case) -> dict[str, object]:
    """`file` (relative to the workspace; as given when it lies outside) and `line` of a case read from a case
    file; nothing otherwise."""
    if case.file is None:
        return {}
    return {"file": workspace_path(case.file) or case.file, "line": case.line}


def rule_blocks(outcomes: Sequence[RuleOutcome]) -> list[RuleBlock]:
    """The report's view of the suite's rule outcomes (`run` and `merge` alike)."""
    return [
        RuleBlock(
            scope=o.rule.scope,
            metric=o.rule.metric,
            op=o.rule.op,
            threshold=o.rule.threshold,
            value=o.value,
            passed=o.passed,
            reason=o.reason,
        )
        for o in outcomes
    ]


def build_report(
    results: Iterable[CaseResult],
    suite: SuiteResult,
    judge_info: JudgeInfoBlock,
    warnings: Sequence[str],
) -> Report:
    m = suite.metrics
    block = SuiteBlock.model_validate(m)
    return Report(
        verdict=suite.verdict,
        suite=block,
        rules=rule_blocks(suite.rules),
        cases=[_case_block(r, judge_info.judge or "") for r in results],
        judge_info=judge_info,
        # The reason opens the warnings too, where the comment, the summary and the annotations show them.
        warnings=[*([suite.error_reason] if suite.error_reason else []), *warnings],
        error_reason=suite.error_reason,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
