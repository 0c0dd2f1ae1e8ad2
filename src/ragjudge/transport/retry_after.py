"""How long a server asked us to wait: the one reading of a `Retry-After` header.

The endpoint client, the judge's chat calls and the GitHub REST client all honour `Retry-After`
on a 429 or a 5xx; each decides for itself what to do with a wait that is too long. What the
header says is read here only, so that the three agree on it: a number of seconds (`120`, or `1.5`:
some servers send a fraction) or an HTTP date (RFC 9110, section 10.2.3), never less than 0.
Anything else, a number that is not finite included, is as if the header were absent: the caller
backs off on its own schedule instead.
"""

from __future__ import annotations

import email.utils
import math
import time
from datetime import UTC


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None when absent or unreadable.

    `now` is the clock an HTTP date is measured from (`time.time()` when not given), for callers whose
    clock is injected.
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        # `nan` and `inf` read as floats but say nothing about when to come back.
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # `-0000` reads as "no zone"; an HTTP date is always GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
