"""Deciding whether a reply declined: a `refused` field, an empty answer, the team's patterns, built-in phrases.

LLM services mostly decline in a sentence ("I don't have information about
that", "抱歉，暂时无法提供该信息"), not with a boolean. The built-in phrases
are matched only on a short answer or on the first sentence of a long one, so a
helpful answer that mentions "not covered" in its fifth sentence is an answer;
and they never include a bare apology, so "Sorry for the delay! Refunds take..."
is an answer too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ragjudge.config.endpoint_config import RefusalConfig
from ragjudge.endpoint.trace import RefusedBy

SHORT_ANSWER_CHARS = 160
"""An answer up to this long is searched whole for the built-in phrases; a longer one, its first sentence."""

_EN = [
    r"\bi(?: am|'m)? (?:sorry,? )?(?:can't|cannot|can not|am unable to|'m unable to|am not able to|'m not able to|"
    r"unable to) (?:help|assist|answer|provide|find|share)",
    r"\bi (?:don't|do not) have (?:any |enough |the |that |specific |relevant )*"
    r"(?:information|info|details|data|context|documentation|knowledge|an answer)",
    r"\bi (?:don't|do not) know\b",
    r"\b(?:isn't|aren't|wasn't|weren't|not) (?:covered|mentioned|addressed|included|described|found) "
    r"(?:in|by) (?:the |our |my |these |this |any )?(?:provided |available |given |retrieved )?"
    r"(?:documents?|documentation|docs|knowledge base|context|sources?|materials?|passages?|information|corpus)",
    r"\bno (?:relevant |related )?(?:information|documents?|results?|answer|data) (?:was |were |is |are )?"
    r"(?:found|available)",
    r"\b(?:couldn't|could not|can't|cannot|was unable to|were unable to) find (?:any )?(?:relevant |related )?"
    r"(?:information|documents?|details|an answer|anything)",
    r"\bthere (?:is|was) no (?:relevant |related )?information\b",
    r"\b(?:outside|beyond) (?:the |my )?(?:scope|knowledge|remit)\b",
    r"\bout of scope\b",
    r"\bunable to (?:answer|help|assist)\b",
]
_ZH = [
    r"无法回答",
    r"不能回答",
    r"无法提供",
    r"暂时无法",
    r"没有找到相关",
    r"未找到相关",
    r"找不到相关",
    r"没有(?:检索到|查到|找到)?(?:任何)?相关(?:的)?(?:信息|资料|内容|文档)",
    r"(?:超出|超过)了?(?:我的|本)?(?:服务|知识|回答|业务)?范围",
    r"不在(?:我的|本)?(?:服务|知识|回答|业务)范围",
    r"无法(?:帮助|协助|帮您|为您解答)",
    r"我不(?:知道|清楚)",
]
BUILTIN_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in _EN + _ZH)

# A sentence ends at . ! ? (followed by a space or the end), at their full-width forms, or at a line break.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]|\n")


def normalise(answer: str) -> str:
    """NFKC (full-width to half-width), typographic apostrophes made plain, lower case, spaces collapsed."""
    text = unicodedata.normalize("NFKC", answer).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.lower().split())


def first_sentence(text: str) -> str:
    match = _SENTENCE_END.search(text)
    return text[: match.end()] if match else text


@dataclass(frozen=True)
class RefusalRules:
    """The compiled `endpoint.refusal` settings."""

    patterns: tuple[re.Pattern[str], ...] = ()
    builtin: bool = True

    @classmethod
    def from_config(cls, config: RefusalConfig) -> RefusalRules:
        return cls(tuple(re.compile(p, re.IGNORECASE) for p in config.patterns), config.builtin)


def builtin_refusal(answer: str) -> bool:
    text = normalise(answer)
    scope = text if len(text) <= SHORT_ANSWER_CHARS else first_sentence(text)
    return any(p.search(scope) for p in BUILTIN_PATTERNS)


def decide(answer: str, field: bool | None, rules: RefusalRules) -> RefusedBy | None:
    """How the reply declined, in the documented order; None when nothing says it did."""
    if field is True:
        return "field"
    if not answer.strip():
        return "empty"
    if rules.patterns:
        text = normalise(answer)
        if any(p.search(text) for p in rules.patterns):
            return "pattern"
    if rules.builtin and builtin_refusal(answer):
        return "builtin"
    return None
