"""Position and length bias of the evidence judge: an LLM judge may score a passage by where it stands or how
long it is rather than by what it says, so both are tested (and position on every run, with `--bias-check`).

Position: each item's passages are scored in the given order and reversed; a flip is a passage
whose score changes with its position. Biased when the Wilson upper bound of the flip rate is
above `max_flip_rate` (0.10) or the observed flip rate is above 0.2.

Length: each passage is padded with a sentence that neither supports nor contradicts anything,
repeated (at least twice) until the passage is about twice as long, within `judge.max_passage_chars`,
and scored again;
biased when the Wilson upper bound of the share whose score rose is above `max_rise_rate` (0.10).

Passages the judge could not score in both conditions are left out and counted as `unscored`.
With few passages even a judge that never flips has a wide interval: the result is then
`biased` by the rule but marked `inconclusive`, and `passages_needed` says how many would do.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragjudge.judge.text import has_cjk
from ragjudge.metrics.names import COST_USD
from ragjudge.stats import wilson_interval

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer, PassageScore

MAX_FLIP_RATE = 0.10
"""Default bar for the Wilson upper bound of the flip (or rise) rate."""
FLAGRANT_RATE = 0.2
"""An observed flip rate above this is bias whatever the interval."""
FILLER_EN = "This paragraph is part of a longer document."
FILLER_ZH = "本段是一份较长文档的一部分。"


@dataclass(frozen=True)
class BiasItem:
    id: str
    claim: str
    passages: tuple[str, ...]


def passages_needed(max_rate: float, rate: float = 0.0) -> int | None:
    """The fewest passages at which the observed `rate` would show the true rate is at most `max_rate`.

    None when `rate` is not below `max_rate` (no number of passages would do).
    """
    if rate >= max_rate:
        return None
    n = 1
    while wilson_interval(round(rate * n), n).hi > max_rate:
        n += 1
    return n


@dataclass(frozen=True)
class BiasResult:
    """A count of changed scores among compared passages, with its Wilson interval and verdict."""

    kind: str
    """`position` (changed = flipped) or `length` (changed = rose)."""
    items: int
    passages: int
    changed: int
    max_rate: float
    unscored: int = 0
    other: int = 0
    """Length: how many scores fell (not bias towards length, but worth knowing)."""
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    examples: tuple[dict[str, Any], ...] = ()

    @property
    def rate(self) -> float | None:
        return self.changed / self.passages if self.passages else None

    @property
    def upper95(self) -> float:
        return wilson_interval(self.changed, self.passages).hi

    @property
    def biased(self) -> bool:
        if not self.passages:
            return False
        flagrant = self.kind == "position" and (self.rate or 0.0) > FLAGRANT_RATE
        return self.upper95 > self.max_rate or flagrant

    @property
    def inconclusive(self) -> bool:
        """Flagged only because there were too few passages to rule bias out (or none at all)."""
        return not self.passages or (self.biased and (self.rate or 0.0) <= self.max_rate)

    def as_dict(self) -> dict[str, Any]:
        if self.kind == "position":
            head: dict[str, Any] = {"flips": self.changed, "flip_rate": _r(self.rate)}
            limit = {"max_flip_rate": self.max_rate}
        else:
            head = {"rose": self.changed, "rise_rate": _r(self.rate), "fell": self.other}
            limit = {"max_rise_rate": self.max_rate}
        return {
            "items": self.items,
            "passages": self.passages,
            **head,
            "upper95": round(self.upper95, 4),
            "biased": self.biased,
            "inconclusive": self.inconclusive,
            **limit,
            "passages_needed": passages_needed(self.max_rate, self.rate or 0.0) if self.inconclusive else None,
            "unscored": self.unscored,
            "calls": self.calls,
            "tokens": self.tokens,
            COST_USD: round(self.cost_usd, 6),
            "examples": list(self.examples),
        }

    def summary(self) -> str:
        what = "changed score when the order was reversed" if self.kind == "position" else "scored higher when padded"
        rate = f"{self.rate:.2f}" if self.rate is not None else "n/a"
        name = "flip rate" if self.kind == "position" else "rise rate"
        text = (
            f"{self.kind} bias: {self.changed} of {self.passages} passages {what} "
            f"({name} {rate}, 95% upper bound {self.upper95:.2f}, bar {self.max_rate:g})"
        )
        if not self.passages:
            return text + ": nothing to compare"
        if self.biased and self.inconclusive:
            need = passages_needed(self.max_rate, self.rate or 0.0)
            return text + f": inconclusive, too few passages to rule bias out (about {need} needed at this rate)"
        return text + (": BIASED" if self.biased else ": no bias shown")


def _r(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def compare_position(forward: Sequence[PassageScore], backward: Sequence[PassageScore]) -> tuple[int, int, int]:
    """(compared, flips, unscored): `backward` was scored on the reversed list."""
    n = len(forward)
    compared = flips = unscored = 0
    for i, first in enumerate(forward):
        second = backward[n - 1 - i]
        if first.score is None or second.score is None:
            unscored += 1
            continue
        compared += 1
        flips += first.score != second.score
    return compared, flips, unscored


def pad(text: str, limit: int) -> str | None:
    """`text` and a neutral sentence repeated (at least twice) to at least its length, within `limit`.

    None when not even one repetition fits within `limit` (`judge.max_passage_chars`).
    """
    unit = ("" if has_cjk(text) else " ") + (FILLER_ZH if has_cjk(text) else FILLER_EN)
    reps = min(max(2, math.ceil(len(text) / len(unit))), (limit - len(text)) // len(unit))
    return text + unit * reps if reps > 0 else None


def position_bias(
    items: Sequence[BiasItem],
    scorer: EvidenceScorer,
    log: Callable[[str, dict[str, Any]], None],
    max_rate: float = MAX_FLIP_RATE,
    concurrency: int = 4,
    in_order: Callable[[BiasItem], list[PassageScore] | None] = lambda _item: None,
    purpose: str = "position_bias",
) -> BiasResult:
    """Score every item in order and reversed; count the passages whose score changed.

    `in_order` may supply scores already made in the given order (the gate's LLM context
    precision), so that only the reversed order costs a call.
    """
    from ragjudge.judge.evidence import EvidenceResult  # evidence.py imports this module

    usable = [it for it in items if len(it.passages) >= 2]

    def run(item: BiasItem) -> tuple[int, int, int, EvidenceResult, list[dict[str, Any]]]:
        def write(fields: dict[str, Any]) -> None:
            log(item.id, {**fields, "purpose": purpose})

        known = in_order(item)
        fwd = EvidenceResult(tuple(known)) if known is not None else scorer.score(item.claim, item.passages, write)
        bwd = scorer.score(item.claim, item.passages[::-1], write)
        compared, flips, unscored = compare_position(fwd.scores, bwd.scores)
        n = len(item.passages)
        examples = [
            {"id": item.id, "passage": i, "in_order": f.score, "reversed": bwd.scores[n - 1 - i].score}
            for i, f in enumerate(fwd.scores)
            if f.score is not None and bwd.scores[n - 1 - i].score not in (None, f.score)
        ]
        used = EvidenceResult((), fwd.calls + bwd.calls, 0, fwd.tokens + bwd.tokens, fwd.cost_usd + bwd.cost_usd)
        return compared, flips, unscored, used, examples

    with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="bias") as pool:
        rows = list(pool.map(run, usable))
    return BiasResult(
        kind="position",
        items=len(usable),
        passages=sum(r[0] for r in rows),
        changed=sum(r[1] for r in rows),
        max_rate=max_rate,
        unscored=sum(r[2] for r in rows),
        calls=sum(r[3].calls for r in rows),
        tokens=sum(r[3].tokens for r in rows),
        cost_usd=sum(r[3].cost_usd for r in rows),
        examples=tuple(e for r in rows for e in r[4])[:20],
    )


def length_bias(
    items: Sequence[BiasItem],
    scorer: EvidenceScorer,
    log: Callable[[str, dict[str, Any]], None],
    max_rate: float = MAX_FLIP_RATE,
    concurrency: int = 4,
) -> BiasResult:
    """Score every passage as given and padded with neutral text; count the scores that rose."""
    limit = scorer.config.max_passage_chars

    def run(item: BiasItem) -> tuple[int, int, int, int, int, list[dict[str, Any]]]:
        def write(fields: dict[str, Any]) -> None:
            log(item.id, {**fields, "purpose": "length_bias"})

        shown = [p[:limit] for p in item.passages]
        padded = [pad(p, limit) for p in shown]
        keep = [i for i, p in enumerate(padded) if p is not None]
        if not keep:
            return 0, 0, 0, 0, 0, []
        plain = scorer.score(item.claim, [shown[i] for i in keep], write)
        longer = scorer.score(item.claim, [padded[i] or "" for i in keep], write)
        compared = rose = fell = unscored = 0
        examples = []
        for k, (a, b) in enumerate(zip(plain.scores, longer.scores, strict=True)):
            if a.score is None or b.score is None:
                unscored += 1
                continue
            compared += 1
            if b.score > a.score:
                rose += 1
                examples.append({"id": item.id, "passage": keep[k], "plain": a.score, "padded": b.score})
            fell += b.score < a.score
        return compared, rose, fell, unscored, plain.calls + longer.calls, examples

    with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="bias") as pool:
        rows = list(pool.map(run, items))
    return BiasResult(
        kind="length",
        items=sum(1 for r in rows if r[0] or r[3]),
        passages=sum(r[0] for r in rows),
        changed=sum(r[1] for r in rows),
        max_rate=max_rate,
        other=sum(r[2] for r in rows),
        unscored=sum(r[3] for r in rows),
        calls=sum(r[4] for r in rows),
        examples=tuple(e for r in rows for e in r[5])[:20],
    )


def sample(items: Sequence[Any], n: int, seed: int) -> list[Any]:
    """A reproducible sample of at most `n` items, in their original order."""
    if n >= len(items):
        return list(items)
    picked = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in picked]
