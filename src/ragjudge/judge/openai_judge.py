"""The model judge: rubric and claim-level faithfulness through any OpenAI-compatible server.

With `judge.combined: true` (the default) an answered case costs one call: the rubric scores,
their reasons and the claim verdicts come in one reply (see `combined_system.j2`). A refusal
has no claims to check and gets the rubric alone (the negative rubric for an out-of-scope
case). `combined: false` asks the two judges separately.

A reply is validated before it is believed. One that fails is asked once more
with the validation error appended; if it still fails, the judgement is
unscored with the reason (both judgements, for a combined reply). Never 0, NaN or a pass.
With `judge.samples` above 1 each question is asked that many times and `samples.py` makes one verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragjudge.cases.case import Case
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.asking import Asker, Tally
from ragjudge.judge.budget import Budget
from ragjudge.judge.cache import JudgeCache
from ragjudge.judge.chat import MODES, CallFailed, ChatCaller, Completion, Target, Throttle
from ragjudge.judge.criteria import criteria_for
from ragjudge.judge.interface import NO_SOURCES_NOTE, AnswerCut, Claim, Judgement, LogFn, Threshold, Unscored
from ragjudge.judge.prompting import (
    GATE_TEMPLATES,
    RubricPlan,
    combined_messages,
    faithfulness_messages,
    rubric_messages,
    rubric_plan,
    template,
    trim_notes,
)
from ragjudge.judge.reference import ReferencePoint
from ragjudge.judge.replies import (
    declined_of,
    parse_claims,
    parse_combined,
    parse_judged,
    parse_rubric,
    response_format,
)
from ragjudge.judge.samples import (
    faithfulness_median,
    faithfulness_of,
    majority,
    note_dropped,
    points_median,
    rubric_median,
)
from ragjudge.metrics.names import FAITHFULNESS

# The transport lives in chat.py and the validated ask in asking.py; re-exported for callers of this module.
__all__ = ["MODES", "CallFailed", "ChatCaller", "Completion", "OpenAIJudge", "Target", "Throttle"]


class OpenAIJudge:
    """Rubric + faithfulness judges over the `openai` SDK; thread-safe."""

    lexical = False

    def __init__(
        self,
        config: JudgeConfig,
        rules: Sequence[Threshold] = (),
        caller: ChatCaller | None = None,
        classify_refusal: bool = False,
        spend: Budget | None = None,
    ) -> None:
        self.config = config
        self.classify_refusal = classify_refusal
        """`endpoint.refusal.judge`: the rubric (or combined) reply also says whether the answer declined."""
        self.name = config.model
        self.rules = list(rules)
        self.caller = caller or ChatCaller(config)
        self.asker = Asker(config, self.caller, JudgeCache(config.cache), spend)
        self.primary = Target(config.model, config.base_url)
        esc = config.escalate
        self.escalate = Target(esc.model, esc.base_url or config.base_url, escalation=True) if esc else None

    # ------------------------------------------------------------- judgements
    def _plan(self, case: Case, trace: Trace) -> RubricPlan:
        """What is asked of this reply: the rubric, and for an in-scope answer the reference and the criteria."""
        return rubric_plan(case, trace, criteria_for(case, self.config.criteria), self.config.reference)

    def _rubric(self, case: Case, trace: Trace, target: Target, log: LogFn, tally: Tally, ask: bool = False) -> _Both:
        plan = self._plan(case, trace)
        c = self.config
        messages = rubric_messages(case, trace, plan, c.max_passage_chars, ask, c.max_passages, c.max_answer_chars)
        schema = response_format("rubric", plan.asked, ask, plan.reference is not None)

        def parse(text: str) -> tuple[Any, ...]:
            if plan.reference is None:
                parsed = parse_rubric(text, plan.asked, ask)
                # The classification rides along only when asked, so the log's `parsed` is unchanged otherwise.
                return (*parsed, None, declined_of(text)) if ask else (*parsed, None)
            judged = parse_judged(text, plan.asked, None, ask, plan.reference, self._shown_answer(trace))
            return (judged.scores, judged.reasoning, judged.points, judged.declined)

        samples: list[tuple[dict[str, int], dict[str, str]]] = []
        points: list[tuple[ReferencePoint, ...] | None] = []
        votes: list[bool | None] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                parsed = self.asker.ask(target, "rubric", messages, schema, parse, i, log, tally)
                samples.append((parsed[0], parsed[1]))
                points.append(parsed[2])
                votes.append(parsed[3] if ask else None)
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
        if not samples:
            assert failure is not None
            raise failure
        note_dropped(tally, "rubric", self.config.samples, len(samples), failure)
        scores, reasoning, spread = rubric_median(samples, plan.asked)
        return _Both(*_split(plan, scores, reasoning, spread), None, [], majority(votes), points_median(points))

    def _faithfulness(self, trace: Trace, target: Target, log: LogFn, tally: Tally) -> tuple[float | None, list[Claim]]:
        c = self.config
        messages = faithfulness_messages(trace, c.max_passage_chars, c.max_passages, c.max_answer_chars)
        schema = response_format("claims")
        ids = [p.id for p in trace.evidence[: self.config.max_passages]]
        results: list[tuple[float | None, list[Claim]]] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                verdicts = self.asker.ask(
                    target, FAITHFULNESS, messages, schema, lambda text: parse_claims(text, ids), i, log, tally
                )
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
                continue
            results.append(faithfulness_of(verdicts))
        if not results:
            assert failure is not None
            raise failure
        note_dropped(tally, FAITHFULNESS, self.config.samples, len(results), failure)
        return faithfulness_median(results)

    def _combined(self, case: Case, trace: Trace, plan: RubricPlan, target: Target, log: LogFn, tally: Tally) -> _Both:
        """Rubric and claims from one reply per sample; medians across samples as for the separate calls."""
        ask = self.classify_refusal  # only answers with claims come here: nothing else said they declined
        c = self.config
        messages = combined_messages(case, trace, plan, c.max_passage_chars, ask, c.max_passages, c.max_answer_chars)
        schema = response_format("combined", plan.asked, ask, plan.reference is not None)
        ids = [p.id for p in trace.evidence[: self.config.max_passages]]

        def parse(text: str) -> tuple[Any, ...]:
            if plan.reference is None:
                parsed = parse_combined(text, plan.asked, ids, ask)
                return (*parsed, declined_of(text)) if ask else parsed
            judged = parse_judged(text, plan.asked, ids, ask, plan.reference, self._shown_answer(trace))
            assert judged.claims is not None
            return (judged.scores, judged.reasoning, judged.claims, judged.declined, judged.points)

        rubrics: list[tuple[dict[str, int], dict[str, str]]] = []
        faiths: list[tuple[float | None, list[Claim]]] = []
        points: list[tuple[ReferencePoint, ...] | None] = []
        votes: list[bool | None] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                parsed = self.asker.ask(target, "combined", messages, schema, parse, i, log, tally)
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
                continue
            rubrics.append((parsed[0], parsed[1]))
            faiths.append(faithfulness_of(parsed[2]))
            votes.append(parsed[3] if ask else None)
            points.append(parsed[4] if len(parsed) > 4 else None)
        if not rubrics:
            assert failure is not None
            raise failure
        note_dropped(tally, "combined", self.config.samples, len(rubrics), failure)
        declined = majority(votes)
        rubric = _split(plan, *rubric_median(rubrics, plan.asked))
        if declined:
            # A decline is not scored for faithfulness, nor against the reference, however it was recognised.
            return _Both(*rubric, None, [], declined, None)
        return _Both(*rubric, *faithfulness_median(faiths), declined, points_median(points))

    def _borderline(self, metric: str, value: float) -> bool:
        if self.escalate is None or self.config.escalate is None:
            return False
        band = self.config.escalate.band
        scale = 1.0 if metric == FAITHFULNESS else 4.0  # rubric scores span 1..5
        # The tolerance keeps a value exactly on the band's edge inside it (0.8 - 0.7 is 0.10000000000000009).
        return any(r.metric == metric and abs(value - r.threshold) <= band * scale + 1e-9 for r in self.rules)

    def warm_up(self) -> None:
        # With answers already in the cache a rerun may make no call at all, and importing the SDK for nothing
        # would take the processor from the endpoint calls: then the first call that misses imports it.
        if self.asker.cache.holds_entries():
            return
        for target in (self.primary, self.escalate):
            if target is not None:
                self.caller.client(target.base_url)
        for name in GATE_TEMPLATES:
            template(name)  # compiled here, not by the first judgements, which would each compile it

    def _shown_answer(self, trace: Trace) -> str:
        """The answer as far as the judge is shown it (`judge.max_answer_chars`): what its quotes must come from."""
        return trace.answer[: self.config.max_answer_chars]

    def judge(self, case: Case, trace: Trace, log: LogFn, rubric: bool = True) -> Judgement:
        """Both judges; `rubric=False` asks only for faithfulness (calibrating binary labels needs no more).

        With `judge.combined`, an answer with claims to check is judged in one call whatever
        `rubric` says: calibration then measures the very call the gate makes. The reference's points and the
        team's criteria ride on the call that carries the rubric. An answer longer than `judge.max_answer_chars`
        is shown cut, and the judgement records it (`answer_cut`).
        """
        judgement = self._judge(case, trace, log, rubric)
        limit = self.config.max_answer_chars
        if len(trace.answer) <= limit:
            return judgement
        return replace(judgement, answer_cut=AnswerCut(limit, len(trace.answer)))

    def _judge(self, case: Case, trace: Trace, log: LogFn, rubric: bool) -> Judgement:
        tally = Tally()
        c = self.config
        tally.notes.extend(trim_notes(case, trace, c.max_passage_chars, c.max_passages, c.max_answer_chars))
        plan = self._plan(case, trace)
        if trace.passages_unknown and _has_claims(trace):
            # Claims cannot be checked against passages nobody was shown: faithfulness is unassessable, not 0.
            tally.notes.append(NO_SOURCES_NOTE)
        elif self.config.combined and _has_claims(trace):
            return self._judge_combined(case, trace, plan, log, tally)
        unscored: list[Unscored] = []
        escalated: list[str] = []
        both = _Both({}, {}, {}, {}, {}, None, [])
        # Asked only of answers nothing in the reply itself marked as declined (see endpoint/refusal.py).
        ask = self.classify_refusal and rubric and _has_claims(trace)
        try:
            if rubric:
                both = self._rubric(case, trace, self.primary, log, tally, ask)
        except CallFailed as exc:
            unscored += _rubric_unscored(plan, exc.reason)
        if self.escalate and both.scores:
            borderline = self._borderline_scores(both)
            if borderline:
                try:
                    both = self._rubric(case, trace, self.escalate, log, tally, ask)
                    escalated.append(f"rubric by {self.escalate.model}")
                except CallFailed as exc:
                    # A borderline score is exactly what escalation is there to check: without the
                    # stronger verdict it is unscored, never left standing on the cheap model's word.
                    why = f"escalation to {self.escalate.model} failed: {exc.reason}"
                    unscored += _drop_borderline(both, borderline, why)
        faithfulness: float | None = None
        claims: list[Claim] = []
        if _has_claims(trace) and not both.declined and not trace.passages_unknown:
            try:
                faithfulness, claims = self._faithfulness(trace, self.primary, log, tally)
            except CallFailed as exc:
                unscored.append(Unscored(FAITHFULNESS, exc.reason))
            if self.escalate and faithfulness is not None and self._borderline(FAITHFULNESS, faithfulness):
                try:
                    faithfulness, claims = self._faithfulness(trace, self.escalate, log, tally)
                    escalated.append(f"faithfulness by {self.escalate.model}")
                except CallFailed as exc:
                    faithfulness, claims = None, []
                    unscored.append(Unscored(FAITHFULNESS, f"escalation to {self.escalate.model} failed: {exc.reason}"))
        points = None if both.declined else both.points
        both = replace(both, faithfulness=faithfulness, claims=claims, points=points)
        return self._judgement(both, plan, unscored, escalated, tally)

    def _borderline_scores(self, both: _Both) -> list[str]:
        """The scores near a rule's threshold, as rule metrics: `judge.<dimension>`, `criteria.<name>`."""
        return [f"judge.{d}" for d, v in both.scores.items() if self._borderline(f"judge.{d}", v)] + [
            f"criteria.{n}" for n, v in both.criteria.items() if self._borderline(f"criteria.{n}", v)
        ]

    def _judge_combined(self, case: Case, trace: Trace, plan: RubricPlan, log: LogFn, tally: Tally) -> Judgement:
        unscored: list[Unscored] = []
        escalated: list[str] = []
        try:
            both = self._combined(case, trace, plan, self.primary, log, tally)
        except CallFailed as exc:
            # One reply carried both judgements: when it cannot be used, neither can be scored.
            unscored += [*_rubric_unscored(plan, exc.reason), Unscored(FAITHFULNESS, exc.reason)]
            return self._judgement(_Both({}, {}, {}, {}, {}, None, []), plan, unscored, escalated, tally)
        if self.escalate is None:
            return self._judgement(both, plan, unscored, escalated, tally)
        borderline = self._borderline_scores(both)
        faith_borderline = both.faithfulness is not None and self._borderline(FAITHFULNESS, both.faithfulness)
        if not (borderline or faith_borderline):
            return self._judgement(both, plan, unscored, escalated, tally)
        try:
            # One call re-judges both; the stronger model's verdict stands for both.
            both = self._combined(case, trace, plan, self.escalate, log, tally)
            escalated += [f"rubric by {self.escalate.model}", f"faithfulness by {self.escalate.model}"]
        except CallFailed as exc:
            # What was borderline is unscored, never left standing on the cheap model's word.
            why = f"escalation to {self.escalate.model} failed: {exc.reason}"
            unscored += _drop_borderline(both, borderline, why)
            if faith_borderline:
                both = replace(both, faithfulness=None, claims=[])
                unscored.append(Unscored(FAITHFULNESS, why))
        return self._judgement(both, plan, unscored, escalated, tally)

    def _judgement(
        self, both: _Both, plan: RubricPlan, unscored: list[Unscored], escalated: list[str], tally: Tally
    ) -> Judgement:
        return Judgement(
            judge=self.name,
            faithfulness=both.faithfulness,
            claims=tuple(both.claims),
            scores=both.scores,
            reasoning=both.reasoning,
            unassessable=plan.unassessable,
            unscored=tuple(unscored),
            tokens=tally.tokens,
            cost_usd=round(tally.cost, 6),
            calls=tally.calls,
            cache_hits=tally.cache_hits,
            escalated=tuple(escalated),
            escalation=(tally.escalation_calls, tally.escalation_tokens, tally.escalation_cost),
            spread=both.spread,
            notes=tuple(tally.notes),
            declined=both.declined,
            reference_points=both.points,
            criteria=both.criteria,
            criteria_reasoning=both.criteria_reasoning,
        )


@dataclass(frozen=True)
class _Both:
    """A rubric verdict and a faithfulness verdict, as one judgement needs them."""

    scores: dict[str, float]
    reasoning: dict[str, str]
    spread: dict[str, float]
    criteria: dict[str, float]
    """The team's criteria, scored beside the rubric."""
    criteria_reasoning: dict[str, str]
    faithfulness: float | None
    claims: list[Claim]
    declined: bool | None = None
    """The judge's refusal classification, when it was asked (`endpoint.refusal.judge`)."""
    points: tuple[ReferencePoint, ...] | None = None
    """The reference's points with their verdicts, when the reference was asked."""


def _split(
    plan: RubricPlan, scores: dict[str, float], reasoning: dict[str, str], spread: dict[str, float]
) -> tuple[dict[str, float], dict[str, str], dict[str, float], dict[str, float], dict[str, str]]:
    """The reply's scores parted into the rubric's dimensions and the team's criteria (both share `scores`)."""
    names = {c.name for c in plan.criteria}
    return (
        {k: v for k, v in scores.items() if k not in names},
        {k: v for k, v in reasoning.items() if k not in names},
        spread,
        {k: v for k, v in scores.items() if k in names},
        {k: v for k, v in reasoning.items() if k in names},
    )


def _rubric_unscored(plan: RubricPlan, reason: str) -> list[Unscored]:
    """What a failed rubric reply leaves unscored: the rubric, and the reference and criteria it carried."""
    out = [Unscored("rubric", reason)]
    if plan.reference is not None:
        out.append(Unscored("reference", reason))
    out += [Unscored(f"criteria.{c.name}", reason) for c in plan.criteria]
    return out


def _drop_borderline(both: _Both, borderline: Sequence[str], why: str) -> list[Unscored]:
    """Borderline scores whose escalation failed leave `both` (mutated in place) and are unscored."""
    for metric in borderline:
        kind, _, name = metric.partition(".")
        scores, reasons = (both.scores, both.reasoning) if kind == "judge" else (both.criteria, both.criteria_reasoning)
        scores.pop(name, None)
        reasons.pop(name, None)
        both.spread.pop(name, None)
    return [Unscored(metric, why) for metric in borderline]


def _has_claims(trace: Trace) -> bool:
    """Faithfulness applies: the answer is neither a refusal nor empty."""
    return not trace.refused and bool(trace.answer.strip())
