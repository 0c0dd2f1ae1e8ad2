"""A text's language told by its script: Chinese or English, enough to keep a generated question in its
document's language (`cases generate`).

Han characters are counted one by one and Latin words one each (a Chinese character carries about what an
English word does), so "iPhone 15 退货要多久" is Chinese and "What does 包邮 mean?" is English. Digits and
punctuation say nothing either way.
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["zh", "en"]

NAMES: dict[Language, str] = {"zh": "Chinese", "en": "English"}
"""How a language is named in messages and prompts."""

_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


HAN = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
"""A Han character: the unified ideographs, extension A and the compatibility block."""


def is_cjk(ch: str) -> bool:
    """Whether `ch` is a Han character (`HAN`)."""
    return HAN.fullmatch(ch) is not None


def language_of(text: str) -> Language | None:
    """`zh` when Han characters are at least half of the Han characters and Latin words, `en` when Latin words
    are more; None for a text with neither (digits, punctuation)."""
    han = len(HAN.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    if han + latin == 0:
        return None
    return "zh" if han >= latin else "en"
