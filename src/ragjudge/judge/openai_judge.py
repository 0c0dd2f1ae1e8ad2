"""The model judge: rubric and claim-level faithfulness through any OpenAI-compatible server.

With `judge.combined: true` (the default) an answered case costs one call: the rubric scores,
their reasons and the claim verdicts come in one reply (see `combined_system.j2`). A refusal
has no claims to check and gets the rubric alone (the negative rubric for an out-of-scope
case). `combined: false` asks the two judges separately.

A reply is validated before it is believed. One that fails is asked once more
with the validation error appended; if it still fails, the judgement is
unscored with the reason (both judgements, for a combined reply). Never 0, NaN or a pass.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.cases import Case
from ragjudge.config.model import JudgeConfig
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.asking import Asker, Tally
from ragjudge.judge.cache import JudgeCache
from ragjudge.judge.chat import MODES, CallFailed, ChatCaller, Completion, Target, Throttle
from ragjudge.judge.interface import Claim, Judgement, LogFn, Threshold, Unscored
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
from ragjudge.judge.replies import (
    ClaimVerdict,
    declined_of,
    parse_claims,
    parse_combined,
    parse_rubric,
    response_format,
)

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
    ) -> None:
        self.config = config
        self.classify_refusal = classify_refusal
        """`endpoint.refusal.judge`: the rubric (or combined) reply also says whether the answer declined."""
        self.name = config.model
        self.rules = list(rules)
        self.caller = caller or ChatCaller(config)
        self.asker = Asker(config, self.caller, JudgeCache(config.cache))
        self.primary = Target(config.model, config.base_url)
        esc = config.escalate
        self.escalate = Target(esc.model, esc.base_url or config.base_url) if esc else None

    # ------------------------------------------------------------- judgements
    def _rubric(
        self, case: Case, trace: Trace, target: Target, log: LogFn, tally: Tally, ask: bool = False
    ) -> tuple[dict[str, float], dict[str, str], dict[str, float], bool | None]:
        plan = rubric_plan(case, trace)
        messages = rubric_messages(
            case, trace, plan, self.config.max_passage_chars, ask, max_passages=self.config.max_passages
        )
        schema = response_format("rubric", plan.dimensions, ask)

        def parse(text: str) -> tuple[Any, ...]:
            parsed = parse_rubric(text, plan.dimensions, ask)
            # The classification rides along only when asked, so the log's `parsed` is unchanged otherwise.
            return (*parsed, declined_of(text)) if ask else parsed

        samples: list[tuple[dict[str, int], dict[str, str]]] = []
        votes: list[bool | None] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                parsed = self.asker.ask(target, "rubric", messages, schema, parse, i, log, tally)
                samples.append((parsed[0], parsed[1]))
                votes.append(parsed[2] if ask else None)
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
        if not samples:
            assert failure is not None
            raise failure
        _note_dropped(tally, "rubric", self.config.samples, len(samples), failure)
        return (*_rubric_median(samples, plan.dimensions), _majority(votes))

    def _faithfulness(self, trace: Trace, target: Target, log: LogFn, tally: Tally) -> tuple[float | None, list[Claim]]:
        messages = faithfulness_messages(trace, self.config.max_passage_chars, self.config.max_passages)
        schema = response_format("claims")
        ids = [p.id for p in trace.evidence[: self.config.max_passages]]
        results: list[tuple[float | None, list[Claim]]] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                verdicts = self.asker.ask(
                    target, "faithfulness", messages, schema, lambda text: parse_claims(text, ids), i, log, tally
                )
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
                continue
            results.append(_faithfulness_of(verdicts))
        if not results:
            assert failure is not None
            raise failure
        _note_dropped(tally, "faithfulness", self.config.samples, len(results), failure)
        return _faithfulness_median(results)

    def _combined(self, case: Case, trace: Trace, plan: RubricPlan, target: Target, log: LogFn, tally: Tally) -> _Both:
        """Rubric and claims from one reply per sample; medians across samples as for the separate calls."""
        ask = self.classify_refusal  # only answers with claims come here: nothing else said they declined
        messages = combined_messages(
            case, trace, plan, self.config.max_passage_chars, ask, max_passages=self.config.max_passages
        )
        schema = response_format("combined", plan.dimensions, ask)
        ids = [p.id for p in trace.evidence[: self.config.max_passages]]

        def parse(text: str) -> tuple[Any, ...]:
            parsed = parse_combined(text, plan.dimensions, ids, ask)
            return (*parsed, declined_of(text)) if ask else parsed

        rubrics: list[tuple[dict[str, int], dict[str, str]]] = []
        faiths: list[tuple[float | None, list[Claim]]] = []
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
            faiths.append(_faithfulness_of(parsed[2]))
            votes.append(parsed[3] if ask else None)
        if not rubrics:
            assert failure is not None
            raise failure
        _note_dropped(tally, "combined", self.config.samples, len(rubrics), failure)
        declined = _majority(votes)
        if declined:
            # A decline is not scored for faithfulness, however it was recognised.
            return _Both(*_rubric_median(rubrics, plan.dimensions), None, [], declined)
        return _Both(*_rubric_median(rubrics, plan.dimensions), *_faithfulness_median(faiths), declined)

    def _borderline(self, metric: str, value: float) -> bool:
        if self.escalate is None or self.config.escalate is None:
            return False
        band = self.config.escalate.band
        scale = 1.0 if metric == "faithfulness" else 4.0  # rubric scores span 1..5
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

    def judge(self, case: Case, trace: Trace, log: LogFn, rubric: bool = True) -> Judgement:
        """Both judges; `rubric=False` asks only for faithfulness (calibrating binary labels needs no more).

        With `judge.combined`, an answer with claims to check is judged in one call whatever
        `rubric` says: calibration then measures the very call the gate makes.
        """
        tally = Tally()
        tally.notes.extend(trim_notes(trace, self.config.max_passage_chars, self.config.max_passages))
        plan = rubric_plan(case, trace)
        if self.config.combined and _has_claims(trace):
            return self._judge_combined(case, trace, plan, log, tally)
        unscored: list[Unscored] = []
        escalated: list[str] = []
        scores: dict[str, float] = {}
        reasoning: dict[str, str] = {}
        spread: dict[str, float] = {}
        # Asked only of answers nothing in the reply itself marked as declined (see endpoint/refusal.py).
        ask = self.classify_refusal and rubric and _has_claims(trace)
        declined: bool | None = None
        try:
            if rubric:
                scores, reasoning, spread, declined = self._rubric(case, trace, self.primary, log, tally, ask)
        except CallFailed as exc:
            unscored.append(Unscored("rubric", exc.reason))
        if self.escalate and scores:
            borderline = [d for d, v in scores.items() if self._borderline(f"judge.{d}", v)]
            if borderline:
                try:
                    scores, reasoning, spread, declined = self._rubric(case, trace, self.escalate, log, tally, ask)
                    escalated.append(f"rubric by {self.escalate.model}")
                except CallFailed as exc:
                    # A borderline score is exactly what escalation is there to check: without the
                    # stronger verdict it is unscored, never left standing on the cheap model's word.
                    why = f"escalation to {self.escalate.model} failed: {exc.reason}"
                    for d in borderline:
                        scores.pop(d, None)
                        reasoning.pop(d, None)
                        spread.pop(d, None)
                        unscored.append(Unscored(f"judge.{d}", why))
        faithfulness: float | None = None
        claims: list[Claim] = []
        if _has_claims(trace) and not declined:
            try:
                faithfulness, claims = self._faithfulness(trace, self.primary, log, tally)
            except CallFailed as exc:
                unscored.append(Unscored("faithfulness", exc.reason))
            if self.escalate and faithfulness is not None and self._borderline("faithfulness", faithfulness):
                try:
                    faithfulness, claims = self._faithfulness(trace, self.escalate, log, tally)
                    escalated.append(f"faithfulness by {self.escalate.model}")
                except CallFailed as exc:
                    faithfulness, claims = None, []
                    unscored.append(
                        Unscored("faithfulness", f"escalation to {self.escalate.model} failed: {exc.reason}")
                    )
        both = _Both(scores, reasoning, spread, faithfulness, claims, declined)
        return self._judgement(both, plan, unscored, escalated, tally)

    def _judge_combined(self, case: Case, trace: Trace, plan: RubricPlan, log: LogFn, tally: Tally) -> Judgement:
        unscored: list[Unscored] = []
        escalated: list[str] = []
        try:
            both = self._combined(case, trace, plan, self.primary, log, tally)
        except CallFailed as exc:
            # One reply carried both judgements: when it cannot be used, neither can be scored.
            unscored += [Unscored("rubric", exc.reason), Unscored("faithfulness", exc.reason)]
            return self._judgement(_Both({}, {}, {}, None, []), plan, unscored, escalated, tally)
        if self.escalate is None:
            return self._judgement(both, plan, unscored, escalated, tally)
        borderline = [d for d, v in both.scores.items() if self._borderline(f"judge.{d}", v)]
        faith_borderline = both.faithfulness is not None and self._borderline("faithfulness", both.faithfulness)
        if not (borderline or faith_borderline):
            return self._judgement(both, plan, unscored, escalated, tally)
        try:
            # One call re-judges both; the stronger model's verdict stands for both.
            both = self._combined(case, trace, plan, self.escalate, log, tally)
            escalated += [f"rubric by {self.escalate.model}", f"faithfulness by {self.escalate.model}"]
        except CallFailed as exc:
            # What was borderline is unscored, never left standing on the cheap model's word.
            why = f"escalation to {self.escalate.model} failed: {exc.reason}"
            for d in borderline:
                both.scores.pop(d, None)
                both.reasoning.pop(d, None)
                both.spread.pop(d, None)
                unscored.append(Unscored(f"judge.{d}", why))
            if faith_borderline:
                both = _Both(both.scores, both.reasoning, both.spread, None, [], both.declined)
                unscored.append(Unscored("faithfulness", why))
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
            spread=both.spread,
            notes=tuple(tally.notes),
            declined=both.declined,
        )


@dataclass(frozen=True)
class _Both:
    """A rubric verdict and a faithfulness verdict, as one judgement needs them."""

    scores: dict[str, float]
    reasoning: dict[str, str]
    spread: dict[str, float]
    faithfulness: float | None
    claims: list[Claim]
    declined: bool | None = None
    """The judge's refusal classification, when it was asked (`endpoint.refusal.judge`)."""


def _majority(votes: Sequence[bool | None]) -> bool | None:
    """Across samples, a decline needs more than half the votes; None when it was not asked."""
    cast = [v for v in votes if v is not None]
    return sum(cast) * 2 > len(cast) if cast else None


def _has_claims(trace: Trace) -> bool:
    """Faithfulness applies: the answer is neither a refusal nor empty."""
    return not trace.refused and bool(trace.answer.strip())


def _faithfulness_of(verdicts: Sequence[ClaimVerdict]) -> tuple[float | None, list[Claim]]:
    claims = [Claim(v.claim, v.supported, v.evidence_id, v.reason) for v in verdicts]
    return (sum(c.supported for c in claims) / len(claims) if claims else None), claims


def _rubric_median(
    samples: Sequence[tuple[dict[str, int], dict[str, str]]], dimensions: Sequence[str]
) -> tuple[dict[str, float], dict[str, str], dict[str, float]]:
    """Median score per dimension, the first sample's reasons, and the spread when there are several samples."""
    scores = {d: _tidy(statistics.median(s[0][d] for s in samples)) for d in dimensions}
    spread = {d: float(max(s[0][d] for s in samples) - min(s[0][d] for s in samples)) for d in dimensions}
    return scores, dict(samples[0][1]), spread if len(samples) > 1 else {}


def _faithfulness_median(results: Sequence[tuple[float | None, list[Claim]]]) -> tuple[float | None, list[Claim]]:
    """The median faithfulness across samples, with the claims of the sample closest to it."""
    scored = [r for r in results if r[0] is not None]
    if not scored:
        return None, results[0][1]
    median = statistics.median(r[0] for r in scored if r[0] is not None)
    closest = min(scored, key=lambda r: abs((r[0] or 0.0) - median))
    return float(median), closest[1]


def _note_dropped(tally: Tally, kind: str, asked: int, got: int, failure: CallFailed | None) -> None:
    """Samples that failed are left out of the median, and the report says so."""
    if got < asked and failure is not None:
        tally.notes.append(f"{kind}: {asked - got} of {asked} samples unscored ({failure.reason}); median of the rest")


def _tidy(value: float) -> float:
    """A whole median stays an integer score (4, not 4.0); an even-sample median may be 3.5."""
    return int(value) if float(value).is_integer() else float(value)
