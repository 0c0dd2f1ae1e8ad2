"""`ragjudge cases generate --dry-run`: what a generation would ask and what it would cost, before anything is
asked; and what one did cost, after.

The corpus, the case file and the config are read and checked as a generation reads them; nothing is sent. Each
call's prompt is rendered with the generation's own templates (`judge.generator.messages_for`) for the document
and the cases it would ask for, so the first calls are counted exactly (one a document and kind, none for a
document in no language it knows) and their prompt tokens are those characters over `CHARS_PER_TOKEN`: an
estimate, said to be one. What depends on the replies is a range from none to its worst case: one corrective
retry a call, whose prompt is the first one, the reply and the correction. The cost is those tokens at
`judge.prices`; unknown (never $0) for a model without a price.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragjudge.cases.language import language_of
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.gate.spending import price_table, price_tip
from ragjudge.judge.budget import CHARS_PER_TOKEN

if TYPE_CHECKING:
    from ragjudge.commands.case_generate import Task

REPLY_TOKENS_A_CASE = 60
"""A reply's tokens a case asked for, estimated: the question (about 15), a point and the quote copied from the
document (about 20 each), and the JSON around them. Longer sentences in the documents make longer replies."""
CORRECTION_TOKENS = 60
"""The corrective message a retry adds (`generate_correction.j2` with a problem or two), in tokens."""


@dataclass(frozen=True)
class GenerationPlan:
    calls: int
    """First calls: one a document and kind asked about."""
    prompt_tokens: int
    """Estimated prompt tokens of all the first calls."""
    reply_tokens: int
    """Estimated reply tokens of all the first calls."""
    prices: tuple[float, float] | None
    """USD per million input and output tokens of the model; None without a price (cost unknown)."""

    def cost(self, retries: bool) -> float | None:
        if self.prices is None:
            return None
        prompt, reply = self.prompt_tokens, self.reply_tokens
        if retries:  # each retry sends the first prompt again, with the reply and a correction
            prompt, reply = 2 * prompt + reply + self.calls * CORRECTION_TOKENS, 2 * reply
        return (prompt * self.prices[0] + reply * self.prices[1]) / 1e6


def plan_generation(tasks: Sequence[Task], judge: JudgeConfig) -> GenerationPlan:
    from ragjudge.judge.generator import messages_for  # imported late, as `case_generate` imports the generator

    chars = 0
    calls = 0
    asked = 0
    for task in tasks:
        language = language_of(task.document.text)
        if language is None or task.count <= 0:
            continue  # the generator asks nothing of these
        calls += 1
        asked += task.count * (2 if task.kind == "conversation" else 1)
        chars += sum(len(m["content"]) for m in messages_for(task.document, task.kind, task.count, language))
    return GenerationPlan(
        calls=calls,
        prompt_tokens=math.ceil(chars / CHARS_PER_TOKEN),
        reply_tokens=asked * REPLY_TOKENS_A_CASE,
        prices=price_table(judge).get(judge.model),
    )


def describe(plan: GenerationPlan, judge: JudgeConfig, asked: str) -> list[str]:
    """The dry run in lines, for stdout."""
    lines = [
        "ragjudge cases generate --dry-run: nothing was asked; what the generation would do:",
        f"  cases asked for: {asked}",
        f"  model calls ({judge.model}):",
        f"    first calls (one a document and kind): {plan.calls}",
        f"    corrective retries (a case that misfits, or too few given; one a call at most): 0 to {plan.calls}",
        f"  model calls in all: {plan.calls} to {2 * plan.calls}",
        f"  tokens of the first calls: about {plan.prompt_tokens} prompt + {plan.reply_tokens} reply (an estimate: "
        f"the rendered prompts at {CHARS_PER_TOKEN} characters a token, a reply of {REPLY_TOKENS_A_CASE} tokens a "
        "case)",
    ]
    low, high = plan.cost(False), plan.cost(True)
    if low is None or high is None:
        lines.append(
            f"  cost: unknown (no price for {judge.model} under judge.prices; {price_tip(judge.model)} to count it)"
        )
    else:
        lines.append(f"  cost (estimate, at judge.prices): ${low:.4f} to ${high:.4f}")
    ceilings = [f"judge.max_calls {judge.max_calls}"] if judge.max_calls is not None else []
    ceilings += [f"judge.budget_usd ${judge.budget_usd:.2f}"] if judge.budget_usd is not None else []
    if ceilings:
        lines.append(f"  ceiling: {' and '.join(ceilings)} (a call that would pass it is not made)")
    return lines
