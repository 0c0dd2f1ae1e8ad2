"""The members of the metric families: the judge's rubric dimensions and a criterion's name."""

from __future__ import annotations

JUDGE_DIMENSIONS = ("grounding", "relevance", "calibration", "citations", "tone")
"""The judge's rubric dimensions, each a case metric `judge.<dimension>` and a delta `judge.<dimension>_delta`."""
MEMBER = r"([A-Za-z_][A-Za-z0-9_]{0,63})"
"""A criterion's name, as `criteria` in the config allows it."""
