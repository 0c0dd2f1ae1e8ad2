"""What the statistics tests share: the confidence levels they try, their hypothesis settings, a closeness test."""

from __future__ import annotations

import math

from hypothesis import settings

CONFIDENCES = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
PROPERTY = settings(max_examples=150, deadline=None)


def close(x: float, y: float, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    return math.isclose(x, y, rel_tol=rel, abs_tol=abs_)
