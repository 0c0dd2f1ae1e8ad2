"""Judges: what scores an answer beyond the deterministic checks."""

from __future__ import annotations

from ragjudge.judge.interface import Claim, Judge, Judgement, Unscored

__all__ = ["Claim", "Judge", "Judgement", "Unscored"]
