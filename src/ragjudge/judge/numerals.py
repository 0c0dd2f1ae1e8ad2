"""Numbers as a reference or an answer writes them, read as values: digits, Chinese numerals (七天, 十四天, 两年,
百分之十) and English number words (seven days, two-year), and the quantities (a number with its unit) a text
states. Deterministic and lexical: `一周` is one week, never seven days (units are not converted)."""

from __future__ import annotations

import re

# Longest first, so `个工作日` is not read as `日`; each spelling maps to its unit.
UNITS = {
    "个工作日": "business-day",
    "工作日": "business-day",
    "business days": "business-day",
    "business day": "business-day",
    "working days": "business-day",
    "working day": "business-day",
    "小时": "hour",
    "hours": "hour",
    "hour": "hour",
    "分钟": "minute",
    "minutes": "minute",
    "minute": "minute",
    "天": "day",
    "days": "day",
    "day": "day",
    "个星期": "week",
    "星期": "week",
    "周": "week",
    "weeks": "week",
    "week": "week",
    "个月": "month",
    "months": "month",
    "month": "month",
    "年": "year",
    "years": "year",
    "year": "year",
    "元": "yuan",
    "yuan": "yuan",
    "rmb": "yuan",
    "%": "percent",
    "percent": "percent",
}
_UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))

_CN_DIGITS = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_CN_TENS = {"十": 10, "百": 100, "千": 1000}
_CN_NUMERAL = "[零〇一二两三四五六七八九十百千万]+"
# A Chinese numeral is read as a number only before a unit or a measure word: 一 alone is in 一起, 统一, 一定.
_CN_COUNTED = _UNIT + "|[个次件位张份倍单笔条台岁家种]"

_EN_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"]
_EN_ONES += ["twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_EN_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_EN_VALUES = {w: i for i, w in enumerate(_EN_ONES)} | {w: 20 + 10 * i for i, w in enumerate(_EN_TENS)}
_EN_ONE_WORD = "|".join(sorted(_EN_VALUES, key=len, reverse=True))
_EN_DIGIT = "one|two|three|four|five|six|seven|eight|nine"
_EN_BELOW_100 = rf"(?:{'|'.join(_EN_TENS)})(?:[-\s](?:{_EN_DIGIT}))?|{_EN_ONE_WORD}"
_EN_NUMERAL = (
    rf"(?<![a-z])(?:(?:{_EN_DIGIT}|a)\s+hundred(?:\s+(?:and\s+)?(?:{_EN_BELOW_100}))?|{_EN_BELOW_100})(?![a-z])"
)

_NUMBER = rf"\d+(?:\.\d+)?|{_EN_NUMERAL}|{_CN_NUMERAL}"
# The first letter a number can have, looked for before the alternation is tried: a text is read in one pass.
_STARTS = "(?=[0-9零〇一二两三四五六七八九十百千万aefnostzAEFNOSTZ])"
_QUANTITY = re.compile(
    rf"{_STARTS}(?:百分之\s*(?P<percent>{_NUMBER})|(?P<number>{_NUMBER})\s*-?\s*(?P<unit>{_UNIT})(?![a-z]))",
    re.IGNORECASE,
)
# A quantity with the range before it (`1-2 business days`, `3 到 5 天`): all of it is the quantity's.
_RANGED_QUANTITY = re.compile(
    rf"{_STARTS}(?:\d+(?:\.\d+)?\s*(?:-|–|~|到|至|to)\s*)?(?:{_QUANTITY.pattern})", re.IGNORECASE
)
_WORDS = re.compile(
    rf"{_STARTS}(?:(?P<cn>{_CN_NUMERAL})(?=\s*(?:{_CN_COUNTED}))|百分之\s*(?P<pct>{_CN_NUMERAL})|(?P<en>{_EN_NUMERAL}))",
    re.IGNORECASE,
)
_UNIT_NEXT = re.compile(rf"\s*-?\s*(?:{_UNIT})(?![a-z])", re.IGNORECASE)
_BARE = re.compile(
    rf"{_STARTS}(?:(?P<digits>\d+(?:[.,]\d+)*)|(?P<cn>{_CN_NUMERAL})\s*(?:{_CN_COUNTED})|(?P<en>{_EN_NUMERAL}))",
    re.IGNORECASE,
)


def cn_value(numeral: str) -> int | None:
    """七 -> 7, 十四 -> 14, 两千零五 -> 2005; None for a run that is no single number (三五: three or five, 万)."""
    if not any(ch in _CN_DIGITS or ch in _CN_TENS for ch in numeral):
        return None
    total = section = 0
    digit: int | None = None
    for ch in numeral:
        if ch in "零〇" and digit is None and (section or total):
            continue  # the 零 of 一百零五 holds a place
        if ch in _CN_DIGITS:
            if digit is not None:
                return None
            digit = _CN_DIGITS[ch]
        elif ch in _CN_TENS:
            section += (1 if digit is None else digit) * _CN_TENS[ch]
            digit = None
        else:  # 万
            total = (total + section + (digit or 0)) * 10000
            section, digit = 0, None
    return total + section + (digit or 0)


def en_value(words: str) -> int:
    """seven -> 7, twenty-four -> 24, a hundred and five -> 105."""
    value = 0
    for word in re.split(r"[-\s]+", words.lower()):
        if word == "hundred":
            value = max(value, 1) * 100
        elif word in _EN_VALUES:
            value += _EN_VALUES[word]
    return value


def value(number: str) -> float | None:
    """A number as written (`7`, `七`, `seven`) as its value."""
    if number[0].isdigit():
        return float(number)
    if re.match(_CN_NUMERAL + "$", number):
        found = cn_value(number)
        return None if found is None else float(found)
    return float(en_value(number))


def quantities(text: str) -> list[tuple[float, str, str]]:
    """(number, unit, as written) for every number-with-unit in `text`, in digits or in words."""
    found = []
    for m in _QUANTITY.finditer(text):
        number = value(m.group("percent") or m.group("number"))
        if number is not None:
            found.append((number, "percent" if m.group("percent") else UNITS[m.group("unit").lower()], m.group(0)))
    return found


def in_digits(text: str) -> str:
    """`text` with its numbers in words written in digits (七天 -> 7天, two-year -> 2-year, 百分之十 -> 10%), so
    that two spellings of one number share their words. `one` stays a word unless a unit follows (no one)."""

    def digits(m: re.Match[str]) -> str:
        if m.group("en"):
            if m.group("en").lower() == "one" and not _UNIT_NEXT.match(text, m.end()):
                return m.group(0)
            return str(en_value(m.group("en")))
        found = cn_value(m.group("cn") or m.group("pct"))
        if found is None:
            return m.group(0)
        return f"{found}%" if m.group("pct") else str(found)

    return _WORDS.sub(digits, text)


def bare_numbers(text: str) -> list[tuple[float, str]]:
    """(number, as written) for every number `text` states without a unit: prices, counts, ids (`$12.99`,
    `five failed attempts`, `$1,000`, 修改一次). A quantity's number and the range before it are the quantity's,
    compared by `quantities` unit by unit; `one` alone is a word (one of them, no one)."""
    found = []
    for m in _BARE.finditer(_RANGED_QUANTITY.sub(" ", text)):
        if m.group("digits"):
            found.append((float(m.group("digits").replace(",", "")), m.group(0)))
        elif m.group("en") and m.group("en").lower() != "one":
            found.append((float(en_value(m.group("en"))), m.group(0)))
        elif m.group("cn") and (number := cn_value(m.group("cn"))) is not None:
            found.append((float(number), m.group(0)))
    return found
