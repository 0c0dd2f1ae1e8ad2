"""The checks the statistics make of what they are given, one way for all of them.

A confidence level is a two-sided level strictly inside ``(0, 1)``; a sample is non-empty and finite; a
count is a non-negative integer. Anything else is a ``ValueError`` (a count that is not an integer at all,
e.g. ``2.5``, is the ``TypeError`` of :func:`operator.index`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float, if it is strictly inside ``(0, 1)``."""
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return confidence


def check_values(values: Sequence[float], name: str = "values") -> list[float]:
    """``values`` as a list of floats, if there is at least one and all are finite."""
    data = [float(v) for v in values]
    if not data:
        raise ValueError(f"{name} must not be empty")
    if not all(math.isfinite(v) for v in data):
        raise ValueError(f"{name} must contain only finite numbers")
    return data


def check_count(value: int, name: str) -> int:
    """``value`` as an int, if it is an integer ``>= 0``."""
    value = operator.index(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value
