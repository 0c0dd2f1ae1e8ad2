"""A ceiling on what one run may spend on its judge (`judge.budget_usd`, `judge.max_calls`), kept before each call.

A runaway (a case set that tripled, rejudge and pairwise switched on, repeats) must stop loudly, not bill quietly:
before every call to a model judge, the run's budget is asked whether that call fits. One that would pass a
ceiling is not made: the call fails with "budget exhausted: ..." (a `CallFailed` that stops every later call too),
so the case it was for is an error, never a pass, and `run` marks the run `error` (exit 3) with every output
written. Cache hits cost nothing and are never refused.

Whether a call fits is known before it is made only as an estimate: the mean cost of the calls made so far, or
for the first call its prompt's characters over `CHARS_PER_TOKEN`, priced as input. The spend is what the calls
actually cost, by the usage they report, at `judge.prices`, so it may end above the ceiling by no more than one
call's estimate was short. A model without a price has no cost to keep a USD ceiling
with: `max_calls` still holds, and the run warns that `budget_usd` could not be kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

EXHAUSTED = "budget exhausted"
"""How every refusal's reason begins."""
CHARS_PER_TOKEN = 4
"""The documented estimate of a prompt's tokens from its characters, before the call says how many it had."""


@dataclass(frozen=True)
class Ceiling:
    usd: float | None
    calls: int | None
    prices: dict[str, tuple[float, float]]
    """Per model: USD per million input and output tokens."""
    usd_key: str = "judge.budget_usd"
    calls_key: str = "judge.max_calls"
    """Where each ceiling was set (a flag, for one generation), named when it stops the run."""


class Budget:
    """One run's spend on its judge, thread-safe."""

    def __init__(self, ceiling: Ceiling) -> None:
        self.ceiling = ceiling
        self.lock = threading.Lock()
        self.spent_usd = 0.0
        self.calls = 0
        """Calls admitted."""
        self.charged = 0
        """Of those, calls done and charged."""
        self.exhausted: str | None = None
        """Why a call was refused, once one was."""

    def reason(self) -> str:
        if self.exhausted is not None:  # the ceiling that refused, not the other one
            return self.exhausted
        c = self.ceiling
        if c.usd is not None:
            return f"budget exhausted: ${self.spent_usd:.2f} of ${c.usd:.2f} spent ({c.usd_key})"
        return f"budget exhausted: {self.calls} of {c.calls} judge calls made ({c.calls_key})"

    def admit(self, model: str, prompt_chars: int) -> str | None:
        """None when a call of this size fits, and it is counted as made; else the reason it does not."""
        c = self.ceiling
        with self.lock:
            if self.exhausted is not None:
                return self.exhausted
            over_calls = c.calls is not None and self.calls + 1 > c.calls
            price = c.prices.get(model)
            estimate = 0.0
            if self.charged:
                estimate = self.spent_usd / self.charged
            elif price is not None:
                estimate = prompt_chars / CHARS_PER_TOKEN * price[0] / 1e6
            # Calls in flight are spent already, though not yet charged: each at the estimate.
            in_flight = self.calls - self.charged
            over_usd = c.usd is not None and self.spent_usd + (in_flight + 1) * estimate > c.usd
            if over_calls or over_usd:
                self.exhausted = (
                    f"budget exhausted: ${self.spent_usd:.2f} of ${c.usd:.2f} spent ({c.usd_key})"
                    if over_usd
                    else f"budget exhausted: {self.calls} of {c.calls} judge calls made ({c.calls_key})"
                )
                return self.exhausted
            self.calls += 1
            return None

    def charge(self, cost_usd: float) -> None:
        """What an admitted call cost; every admitted call is charged once, whatever its reply."""
        with self.lock:
            self.spent_usd += cost_usd
            self.charged += 1

    def as_dict(self) -> dict[str, Any]:
        c = self.ceiling
        return {
            "budget_usd": c.usd,
            "max_calls": c.calls,
            "spent_usd": round(self.spent_usd, 6),
            "calls": self.calls,
            "exhausted": self.exhausted is not None,
        }


_CURRENT: Budget | None = None
_SET = threading.Lock()


@contextmanager
def running(budget: Budget | None) -> Iterator[None]:
    """Every judge call made inside is kept within `budget` (None: no ceiling)."""
    global _CURRENT
    with _SET:
        before, _CURRENT = _CURRENT, budget
    try:
        yield
    finally:
        with _SET:
            _CURRENT = before


def current() -> Budget | None:
    return _CURRENT
