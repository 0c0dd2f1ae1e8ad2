"""Adaptive concurrency for the judge pool: fewer calls in flight after a 429, back to the full pool as calls succeed.

Additive increase, multiplicative decrease (as TCP, and as concurrency limiters in front of services do): each
429 takes a tenth off the limit, each success adds one, up to `judge.concurrency`. A few scattered 429s cost a
dip that the next successes repay; a rate limit that answers most calls with 429 drives the limit towards one
call at a time, and it climbs back as soon as calls get through.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

BACKOFF = 0.9


class AdaptiveLimit:
    """How many judge calls may be in flight at once; thread-safe."""

    def __init__(self, ceiling: int, backoff: float = BACKOFF) -> None:
        self.ceiling = ceiling
        self.backoff = backoff
        self._limit = float(ceiling)
        self._in_flight = 0
        self.lowest = ceiling
        """The lowest limit the run came down to."""
        self._changed = threading.Condition()

    @property
    def limit(self) -> int:
        with self._changed:
            return int(self._limit)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the limit's places for the length of a call; waits while they are all taken."""
        with self._changed:
            while self._in_flight >= int(self._limit):
                self._changed.wait()
            self._in_flight += 1
        try:
            yield
        finally:
            with self._changed:
                self._in_flight -= 1
                self._changed.notify()  # one place freed: one waiter (waking them all costs a lot of CPU)

    def throttled(self) -> None:
        """A call was answered 429."""
        with self._changed:
            self._limit = max(1.0, self._limit * self.backoff)
            self.lowest = min(self.lowest, int(self._limit))

    def succeeded(self) -> None:
        """A call got through."""
        with self._changed:
            if self._limit < self.ceiling:
                places = int(self._limit)
                self._limit = min(float(self.ceiling), self._limit + 1.0)
                self._changed.notify(int(self._limit) - places)  # the places the limit gained
