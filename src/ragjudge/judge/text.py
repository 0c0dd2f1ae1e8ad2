"""Splitting answers into claims and claims into tokens, for CJK and Latin text alike."""

from __future__ import annotations

import re

# Sentence ends: ASCII and CJK full stops, question and exclamation marks, semicolons, newlines.
_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "to",
        "of",
        "in",
        "on",
        "for",
        "and",
        "or",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "from",
        "your",
        "you",
        "we",
        "our",
        "can",
        "will",
        "may",
        "i",
        "if",
        "not",
        "no",
        "do",
        "does",
    ]
)


# A part that is only citation markers ("[refund-policy]", "[1][2]", "【退款政策】") after a sentence's full stop.
_CITATIONS_ONLY = re.compile(r"^(?:[\[【][^\]】\n]{1,120}[\]】][\s.,;。，；]*)+$")


def split_claims(answer: str) -> list[str]:
    """Sentences of the answer that carry content (at least two tokens); a sentence's citation markers standing
    after its full stop are not a claim of their own."""
    parts = (p.strip(" \t-*•·") for p in _SENTENCE_END.split(answer))
    return [p for p in parts if p and not _CITATIONS_ONLY.match(p) and len(tokens(p)) >= 2]


def tokens(text: str) -> set[str]:
    """Lowercase words (minus stop words) and CJK character bigrams."""
    lowered = text.lower()
    out = {w for w in _WORD.findall(lowered) if w not in _STOP}
    for run in re.findall(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", lowered):
        if len(run) == 1:
            out.add(run)
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))
