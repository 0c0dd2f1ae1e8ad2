"""Negation as the offline judge reads it: the cue words that turn a clause around.

Cues: English not, no, never, n't, cannot, without, none, nothing, nobody, neither, nor, non-, except,
excluding; Chinese 不, 没, 无, 非, 未, 别 (and 没有, 未经, 无法, 无需, 尚未, ... read as one cue) and 除外. Words
that hold a cue's letters without negating are not cues: 非常, 无论, 不过, 不仅, 无理由 (a policy's name), 识别,
分别, 别人, 未来, no matter, not only, no later than, no more than, whether or not, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Checked first at each position, so their letters are never read as a cue.
_EN_KEEP = [
    "no matter",
    "no later than",
    "not later than",
    "no more than",
    "not more than",
    "no less than",
    "not less than",
    "no longer than",
    "no sooner than",
    "not only",
    "not just",
    "whether or not",
    "or not",
    "if not",
]
_ZH_KEEP = [
    "不得不",
    "无理由",
    "非常",
    "无论",
    "不论",
    "不管",
    "不仅",
    "不但",
    "不过",
    "不久",
    "不断",
    "不少",
    "不错",
    "不同",
    "不锈钢",
    "未来",
    "除非",
    "是非",
    "莫非",
    "无线",
    "无人机",
    "无误",
    "无忧",
    "没收",
    "分别",
    "区别",
    "类别",
    "特别",
    "级别",
    "个别",
    "告别",
    "识别",
    "差别",
    "性别",
    "辨别",
    "鉴别",
    "判别",
    "别人",
    "别的",
    "别处",
    "别名",
]
_EN_CUES = [
    r"can['’]?not",
    r"can['’]t",
    r"won['’]t",
    r"shan['’]t",
    r"not",
    r"no",
    r"never",
    r"without",
    r"none",
    r"nothing",
    r"nobody",
    r"neither",
    r"nor",
    r"except",
    r"excluding",
]
_ZH_CUES = ["没有", "未经", "无法", "无需", "无须", "毫无", "并不", "并非", "从不", "从未", "从没", "绝不", "决不"]
_ZH_CUES += ["永不", "尚未", "除外", "不", "没", "无", "非", "未", "别"]


def _words(spellings: list[str]) -> str:
    return "|".join(rf"(?<![a-z]){s}(?![a-z])" for s in spellings)


_SPELLINGS = _EN_KEEP + _ZH_KEEP + _EN_CUES + _ZH_CUES + ["n't", "non-"]
# Every spelling's first letter, looked for before the alternation is tried: a clause is read in one pass.
_FIRST = "".join(sorted({s[0].lower() for s in _SPELLINGS} | {s[0].upper() for s in _SPELLINGS}))
_READ = re.compile(
    f"(?=[{_FIRST}])(?:(?P<keep>"
    + _words([k.replace(" ", r"\s+") for k in _EN_KEEP])
    + "|"
    + "|".join(_ZH_KEEP)
    + ")|(?P<cue>"
    + _words(_EN_CUES)
    + r"|(?<=[a-z])n['’]t(?![a-z])|(?<![a-z])non-(?=[a-z])|"
    + "|".join(_ZH_CUES)
    + "))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reading:
    """A clause cut at its negation cues."""

    parts: tuple[str, ...]
    """The text between the cues, in order: one part more than there are cues."""
    cues: tuple[str, ...]
    """Each cue as written: a clause with any is negated (a cue's scope is its whole clause)."""


def read(clause: str) -> Reading:
    parts, cues, start = [], [], 0
    for m in _READ.finditer(clause):
        if m.group("cue"):
            parts.append(clause[start : m.start()])
            cues.append(m.group("cue"))
            start = m.end()
    parts.append(clause[start:])
    return Reading(tuple(parts), tuple(cues))
