"""`ragjudge run --dry-run`: what a gate run would ask and what it would cost, before anything is asked.

The case set is read and checked as `run` reads it; nothing is sent to the endpoint or the judge. Calls are
counted from the config: the first judgements exactly (one per reply, `judge.samples` each, two when
`judge.combined` is off), and what depends on the replies as a range, from none to its worst case: repeats,
rejudges (the consistency sample at least), pairwise rounds against a baseline, escalation. A first judgement's
prompt is rendered with the run's own templates for each case, with an assumed reply standing in for the one not
asked for (`ASSUMED_*`: an answer and passages of typical length), and counted at `CHARS_PER_TOKEN` characters a
token: an estimate, said to be one. The cost is those tokens at `judge.prices`; unknown (never $0) for a model
without a price.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.cases.case import Case
from ragjudge.cases.conversations import rehearsal
from ragjudge.config.model import Config
from ragjudge.endpoint.trace import Passage, Trace
from ragjudge.gate.spending import price_table, unpriced_models
from ragjudge.judge.budget import CHARS_PER_TOKEN
from ragjudge.judge.criteria import criteria_for
from ragjudge.judge.prompting import combined_messages, faithfulness_messages, rubric_messages, rubric_plan

ASSUMED_ANSWER_CHARS = 400
"""The answer an estimate assumes, in characters (a reply of two or three sentences)."""
ASSUMED_PASSAGES = 3
ASSUMED_PASSAGE_CHARS = 600
"""The passages an estimate assumes: how many, and each one's characters."""
REPLY_TOKENS = 250
"""A judge reply's tokens, estimated: scores, a reason each, and the claims."""
MAX_PAIR_ROUNDS = 4
"""A changed answer's pairwise rounds at the most (`gate.evaluation.MAX_PAIR_REASKS` + 1), two calls each."""


@dataclass(frozen=True)
class Calls:
    """A kind of judge call: how many, from `low` to `high`."""

    kind: str
    low: int
    high: int


@dataclass(frozen=True)
class DryRun:
    cases: int
    conversations: int
    replies: int
    """Endpoint calls of one pass over the set: one a question, one a conversation's turn."""
    endpoint_high: int
    """With every repeat the config allows."""
    judge: tuple[Calls, ...]
    prompt_tokens: int
    """Estimated prompt tokens of one first judgement, over the set's cases (mean)."""
    prices: tuple[float, float] | None
    """USD per million input and output tokens of the judge's model; None without a price (cost unknown)."""
    unpriced: tuple[str, ...]

    @property
    def judge_low(self) -> int:
        return sum(c.low for c in self.judge)

    @property
    def judge_high(self) -> int:
        return sum(c.high for c in self.judge)

    def cost(self, calls: int) -> float | None:
        if self.prices is None:
            return None
        return calls * (self.prompt_tokens * self.prices[0] + REPLY_TOKENS * self.prices[1]) / 1e6


def _assumed_trace(case: Case) -> Trace:
    # A reference answer is the best guess of an answer's length; else a typical one.
    size = len(case.expected) if isinstance(case.expected, str) else ASSUMED_ANSWER_CHARS
    passages = tuple(Passage(f"p{k}", f"passage {k}", "x" * ASSUMED_PASSAGE_CHARS) for k in range(ASSUMED_PASSAGES))
    return Trace("x" * max(size, 1), False, None, passages, (), None, None, 0.0)


def _prompt_chars(case: Case, config: Config) -> int:
    judge = config.judge
    trace = _assumed_trace(case)
    plan = rubric_plan(case, trace, criteria_for(case, judge.criteria), judge.reference)
    bounds = (judge.max_passage_chars, False, judge.max_passages, judge.max_answer_chars)
    if judge.combined:
        messages = combined_messages(case, trace, plan, *bounds)
    else:
        messages = [
            *rubric_messages(case, trace, plan, *bounds),
            *faithfulness_messages(trace, judge.max_passage_chars, judge.max_passages, judge.max_answer_chars),
        ]
    return sum(len(m["content"]) for m in messages)


def plan_run(config: Config, cases: Sequence[Case], repeat: tuple[int, int], baseline: bool) -> DryRun:
    judge = config.judge
    asked = [turn for case in cases for turn in rehearsal(case)]
    singles = [c for c in cases if not c.turns and c.gates]
    max_runs = repeat[0]
    per_judgement = judge.samples * (1 if judge.combined else 2)
    model = judge.provider == "openai"
    calls: list[Calls] = []
    prompt_tokens = 0
    if model:
        first = len(asked) * per_judgement
        calls.append(Calls("first judgements (rubric, claims, reference and criteria)", first, first))
        if max_runs > 1:
            calls.append(Calls(f"repeats (up to {max_runs} runs a failing case)", 0, first * (max_runs - 1)))
        if judge.rejudge > 0:
            sample = min(judge.consistency_sample, len(singles))
            worst = len(singles) * judge.rejudge * per_judgement
            calls.append(
                Calls(
                    f"rejudges (judge.rejudge {judge.rejudge}; the consistency sample at least)",
                    sample * per_judgement,
                    worst,
                )
            )
        if baseline and judge.pairwise:
            rounds = 1 + min(judge.rejudge, MAX_PAIR_ROUNDS - 1)
            calls.append(
                Calls(
                    f"pairwise against the baseline ({rounds} round(s) of 2 orders at most)",
                    0,
                    2 * rounds * len(singles),
                )
            )
        if judge.escalate is not None:
            calls.append(Calls("escalations (borderline judgements, to the stronger model)", 0, first))
        # A reply the judge's schema refuses is asked once more (`judge.asking`): any call above may cost two.
        asked_at_most = sum(c.high for c in calls)
        calls.append(Calls("asked again for an invalid judge reply (once a call at most)", 0, asked_at_most))
        chars = [_prompt_chars(c, config) for c in asked]
        prompt_tokens = math.ceil(sum(chars) / max(1, len(chars)) / CHARS_PER_TOKEN) if chars else 0
    price = price_table(judge).get(judge.model)
    unpriced = tuple(unpriced_models(judge))
    return DryRun(
        cases=len(cases),
        conversations=sum(bool(c.turns) for c in cases),
        replies=len(asked),
        endpoint_high=len(asked) * max_runs,
        judge=tuple(calls),
        prompt_tokens=prompt_tokens,
        prices=price if model else None,
        unpriced=unpriced,
    )


def describe(plan: DryRun, config: Config) -> list[str]:
    """The dry run in lines, for stdout."""
    lines = [
        "ragjudge run --dry-run: nothing was asked; what the run would do:",
        f"  cases: {plan.cases}" + (f" ({plan.conversations} conversations)" if plan.conversations else ""),
        f"  endpoint calls: {plan.replies}"
        + (f" (up to {plan.endpoint_high} with repeats)" if plan.endpoint_high > plan.replies else ""),
    ]
    if not plan.judge:
        lines.append("  judge calls: none (the offline judge asks no model)")
        return lines
    lines.append(f"  judge calls ({config.judge.model}):")
    for c in plan.judge:
        lines.append(f"    {c.kind}: {c.low}" if c.low == c.high else f"    {c.kind}: {c.low} to {c.high}")
    total = f"{plan.judge_low}" if plan.judge_low == plan.judge_high else f"{plan.judge_low} to {plan.judge_high}"
    lines.append(f"  judge calls in all: {total}")
    lines.append(
        f"  tokens a first judgement: about {plan.prompt_tokens} prompt + {REPLY_TOKENS} reply (an estimate: the "
        f"rendered prompt with an assumed answer and {ASSUMED_PASSAGES} passages of {ASSUMED_PASSAGE_CHARS} "
        f"characters, {CHARS_PER_TOKEN} characters a token)"
    )
    low, high = plan.cost(plan.judge_low), plan.cost(plan.judge_high)
    if low is None or high is None:
        lines.append(
            f"  judge cost: unknown (no price for {', '.join(plan.unpriced) or config.judge.model} under judge.prices)"
        )
    else:
        lines.append(f"  judge cost (estimate, at judge.prices): ${low:.4f} to ${high:.4f}")
    return lines
