"""Negation cues (`judge/negation.py`): what turns a clause around, and what only looks like it."""

from __future__ import annotations

import pytest

from ragjudge.judge.negation import Reading, read


def test_a_clause_is_cut_at_its_cues() -> None:
    assert read("Return shipping isn't free, never without a label; 不支持无需") == Reading(
        ("Return shipping is", " free, ", " ", " a label; ", "支持", ""), ("n't", "never", "without", "不", "无需")
    )


@pytest.mark.parametrize(
    ("clause", "cues"),
    [
        ("Refunds cannot be issued", ("cannot",)),
        ("Refunds can't be issued", ("can't",)),
        ("Orders won’t ship", ("won’t",)),
        ("No receipt is needed", ("No",)),
        ("none, nothing, nobody, neither, nor", ("none", "nothing", "nobody", "neither", "nor")),
        ("non-refundable deposits", ("non-",)),
        ("all items except gift cards, excluding sale items", ("except", "excluding")),
        ("没有订单号无法办理", ("没有", "无法")),
        ("未经使用且不影响二次销售", ("未经", "不")),
        ("非会员尚未发货，请别拆封", ("非", "尚未", "别")),
        ("定制商品除外", ("除外",)),
    ],
)
def test_cues(clause: str, cues: tuple[str, ...]) -> None:
    assert read(clause).cues == cues


@pytest.mark.parametrize(
    "clause",
    [
        "7 天无理由退货",
        "服务非常好，不过无论如何不仅如此",
        "人脸识别，分别，区别，特别，别人",
        "未来不同地区不断增加",
        "不得不确认无误",
        "no matter what, no later than 30 days, no more than 2, not only, whether or not",
        "notes, knot, snow, cannon, nonsense, nothingness, anyone, innocent",
    ],
)
def test_words_that_only_hold_a_cues_letters_are_not_cues(clause: str) -> None:
    assert read(clause).cues == ()
