"""Numbers in digits and in words (`judge/numerals.py`), as the offline reference check reads them."""

from __future__ import annotations

import pytest

from ragjudge.judge.numerals import bare_numbers, cn_value, en_value, in_digits, quantities


def test_quantities_in_digits_and_in_words_carry_their_unit_and_spelling() -> None:
    text = "七天、十四天、两年、two-year、2 years、seven business days、百分之十、一周、1-2 business days、三五天"
    assert quantities(text) == [
        (7.0, "day", "七天"),
        (14.0, "day", "十四天"),
        (2.0, "year", "两年"),
        (2.0, "year", "two-year"),
        (2.0, "year", "2 years"),
        (7.0, "business-day", "seven business days"),
        (10.0, "percent", "百分之十"),
        (1.0, "week", "一周"),
        (2.0, "business-day", "2 business days"),
    ]  # 三五天 is "three or five days": no one number


@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        ("〇", 0),
        ("七", 7),
        ("十", 10),
        ("十四", 14),
        ("二十四", 24),
        ("一百零五", 105),
        ("两千零五", 2005),
        ("一万", 10000),
        ("十万", 100000),
        ("三万五千", 35000),
    ],
)
def test_chinese_numerals(numeral: str, value: int) -> None:
    assert cn_value(numeral) == value


@pytest.mark.parametrize(
    ("words", "value"),
    [("seven", 7), ("Twenty-four", 24), ("ninety nine", 99), ("a hundred", 100), ("two hundred and five", 205)],
)
def test_english_number_words(words: str, value: int) -> None:
    assert en_value(words) == value


@pytest.mark.parametrize("numeral", ["三五", "一两", "万"])
def test_a_chinese_numeral_run_that_is_no_single_number_has_no_value(numeral: str) -> None:
    assert cn_value(numeral) is None


def test_numbers_in_words_are_written_in_digits_where_they_count_something() -> None:
    assert in_digits("七天内、两个工作日、百分之十、twenty-four hours, seven days, one day") == (
        "7天内、2个工作日、10%、24 hours, 7 days, 1 day"
    )
    # 一 outside a count, `one` without a unit and a run that is no single number stay as written.
    assert in_digits("一起统一处理，no one, one of them, 三五天, 百分之三五") == (
        "一起统一处理，no one, one of them, 三五天, 百分之三五"
    )


def test_bare_numbers_leave_quantities_and_their_ranges_to_the_units() -> None:
    assert bare_numbers("$12.99 or $1,000 after five failed attempts, 1-2 business days, 3 到 5 天, 修改一次") == [
        (12.99, "12.99"),
        (1000.0, "1,000"),
        (5.0, "five"),
        (1.0, "一次"),
    ]
    assert bare_numbers("pick one of them") == []
