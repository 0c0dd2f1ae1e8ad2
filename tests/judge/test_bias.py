"""Position and length bias: a biased loopback judge is caught, an unbiased one is not flagged."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.bias import (
    FILLER_EN,
    FILLER_ZH,
    BiasItem,
    BiasResult,
    compare_position,
    length_bias,
    pad,
    passages_needed,
    position_bias,
)
from ragjudge.judge.evidence import EvidenceScorer, PassageScore
from ragjudge.stats import wilson_interval
from tests.fakes.openai_server import FakeOpenAI
from tests.judge.fake_evidence import (
    KEY,
    Score,
    by_marker,
    evidence_responder,
    first_wins,
    longer_is_better,
    passage,
)

MARKERS = ["[S5]", "", "[S1]", "[S3]"]


def _items(count: int = 10, per: int = 4) -> list[BiasItem]:
    """Items whose passages are short (under 120 characters) and have differing true scores."""
    return [
        BiasItem(
            f"it-{k}",
            f"Refunds take {k + 1} days",
            tuple(passage(MARKERS[(k + i) % 4], "refunds", i) for i in range(per)),
        )
        for k in range(count)
    ]


def _scorer(base_url: str, **kw: Any) -> EvidenceScorer:
    return EvidenceScorer(JudgeConfig(provider="openai", base_url=base_url, api_key=KEY, cache=None, **kw))


def _position(score: Score, items: list[BiasItem], **kw: Any) -> BiasResult:
    with FakeOpenAI(evidence_responder(score), api_key=KEY) as fake:
        return position_bias(items, _scorer(fake.base_url), lambda i, f: None, **kw)


def _upper(count: int, nobs: int) -> float:
    return float(proportion_confint(count, nobs, alpha=0.05, method="wilson")[1])


# --- position -------------------------------------------------------------------------------------


def test_a_judge_that_favours_the_first_passage_is_caught() -> None:
    result = _position(first_wins, _items())
    d = result.as_dict()
    # Each item: the passage shown first gets 5 in order, its true score when last (and vice versa).
    assert d["items"] == 10 and d["passages"] == 40
    assert d["flips"] == sum(1 for k in range(10) for i in (0, 3) if MARKERS[(k + i) % 4] != "[S5]")
    assert d["flip_rate"] == pytest.approx(d["flips"] / 40)
    assert d["upper95"] == pytest.approx(_upper(d["flips"], 40), abs=1e-4)
    assert d["biased"] is True and d["inconclusive"] is False
    assert {"items", "passages", "flips", "flip_rate", "upper95", "biased"} <= set(d)
    assert result.calls == 20
    assert "BIASED" in result.summary()


def test_a_judge_that_scores_by_content_is_not_flagged() -> None:
    result = _position(by_marker, _items())
    d = result.as_dict()
    assert (d["passages"], d["flips"], d["flip_rate"]) == (40, 0, 0.0)
    assert d["upper95"] == pytest.approx(_upper(0, 40), abs=1e-4) and d["upper95"] < 0.10
    assert d["biased"] is False
    assert "no bias shown" in result.summary()


def test_a_subtle_bias_is_caught_by_the_upper_bound_not_the_rate() -> None:
    # Favours what comes first only for four claims, and only when the order is reversed: 3 of 40 flips.
    def subtle(claim: str, text: str, index: int, count: int) -> int:
        if claim in {f"Refunds take {k} days" for k in (1, 2, 3, 4)} and index == 0 and "Passage 3 " in text:
            return 5
        return by_marker(claim, text, index, count)

    d = _position(subtle, _items()).as_dict()
    assert d["flips"] == 3 and d["flip_rate"] == 0.075
    assert d["upper95"] == pytest.approx(_upper(3, 40), abs=1e-4) and d["upper95"] > 0.10
    assert d["biased"] is True and d["inconclusive"] is True  # the rate itself is under the bar
    need = d["passages_needed"]
    assert _upper(round(0.075 * need), need) <= 0.10 < _upper(round(0.075 * (need - 1)), need - 1)


def test_the_bar_is_configurable() -> None:
    result = BiasResult("position", items=10, passages=40, changed=3, max_rate=0.25)
    assert result.upper95 < 0.25 and result.biased is False
    assert BiasResult("position", 10, 40, 3, max_rate=0.10).biased is True


def test_a_flip_rate_above_a_fifth_is_biased_whatever_the_bar() -> None:
    result = BiasResult("position", items=100, passages=1000, changed=210, max_rate=0.9)
    assert result.upper95 < 0.9 and result.biased is True


def test_too_few_passages_is_flagged_but_called_inconclusive() -> None:
    result = _position(by_marker, _items(count=3))
    d = result.as_dict()
    assert (d["passages"], d["flips"]) == (12, 0)
    assert d["biased"] is True and d["inconclusive"] is True
    assert d["passages_needed"] == 35
    assert "inconclusive" in result.summary() and "35" in result.summary()


def test_passages_needed_matches_the_reference() -> None:
    for bar in (0.05, 0.10, 0.2):
        n = passages_needed(bar)
        assert _upper(0, n) <= bar < _upper(0, n - 1)


# The bias check's Wilson bound used to come from a copy that divided z by the denominator before taking
# the root's product; the one Wilson multiplies first (the order calibration's records were written in).
# The two orders differ by at most one ulp, and never in what the check reports or decides.


def _former_upper95(k: int, n: int) -> float:
    z = -NormalDist().inv_cdf((1.0 - 0.95) / 2.0)  # as the former copy took it from its confidence
    z2 = z * z
    p_hat = k / n
    denom = 1.0 + z2 / n
    center = (p_hat + z2 / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p_hat * (1.0 - p_hat) / n + z2 / (4.0 * n * n))
    return 1.0 if k == n else min(1.0, center + half)


def _former_passages_needed(max_rate: float, rate: float) -> int | None:
    if rate >= max_rate:
        return None
    n = 1
    while _former_upper95(round(rate * n), n) > max_rate:
        n += 1
    return n


def test_the_reported_upper_bound_is_the_one_the_former_copy_gave() -> None:
    moved = 0
    for n in range(1, 801):
        for k in range(n + 1):
            old, new = _former_upper95(k, n), wilson_interval(k, n).hi
            assert abs(new - old) <= math.ulp(old), (k, n)
            assert round(new, 4) == round(old, 4), (k, n)  # what as_dict reports as upper95
            moved += new != old
    assert moved > 0  # the orders do differ in the last bit, so the rounding is what is being checked


def test_passages_needed_is_the_one_the_former_copy_gave() -> None:
    bars = [i / 100 for i in range(1, 31)]
    for bar in bars:
        for rate in [0.0, *(r / 200 for r in range(1, 60))]:
            assert passages_needed(bar, rate) == _former_passages_needed(bar, rate), (bar, rate)


def test_compare_position_maps_the_reversed_list_back() -> None:
    fwd = [PassageScore(0, 5), PassageScore(1, 3), PassageScore(2, None)]
    bwd = [PassageScore(0, 4), PassageScore(1, 3), PassageScore(2, 5)]  # scored on [p2, p1, p0]
    assert compare_position(fwd, bwd) == (2, 0, 1)
    assert compare_position(fwd, [PassageScore(0, 1), PassageScore(1, 2), PassageScore(2, 1)]) == (2, 2, 1)


def test_single_passage_items_cannot_flip_and_are_left_out() -> None:
    items = [BiasItem("one", "c", (passage("[S5]", "x"),)), *_items(count=9)]
    assert _position(by_marker, items).items == 9


# --- length ---------------------------------------------------------------------------------------


def test_padding_is_a_neutral_sentence_repeated_to_about_twice_the_length() -> None:
    text = "Refunds take five working days."
    padded = pad(text, 1200)
    assert padded is not None and padded.startswith(text)
    assert padded[len(text) :] == (" " + FILLER_EN) * 2
    long_text = "Refunds are paid back to the original card. " * 6
    padded = pad(long_text, 1200)
    assert padded is not None and 2 * len(long_text) <= len(padded) < 2 * len(long_text) + len(FILLER_EN) + 1
    zh = "退款需要订单号和购买凭证，七天内可以申请退货。"
    assert pad(zh, 1200) == zh + FILLER_ZH * 2
    capped = pad("x" * 100, 200)
    assert capped is not None and len(capped) <= 200 and capped.count(FILLER_EN) == 2
    assert pad("x" * 100, 120) is None  # no room within excerpt_chars


def test_a_judge_that_prefers_longer_passages_is_caught() -> None:
    with FakeOpenAI(evidence_responder(longer_is_better), api_key=KEY) as fake:
        result = length_bias(_items(), _scorer(fake.base_url), lambda i, f: None)
    d = result.as_dict()
    assert d["passages"] == 40
    assert d["rose"] == sum(1 for k in range(10) for i in range(4) if MARKERS[(k + i) % 4] != "[S5]")
    assert d["rise_rate"] == pytest.approx(d["rose"] / 40)
    assert d["upper95"] == pytest.approx(_upper(d["rose"], 40), abs=1e-4)
    assert d["biased"] is True and d["fell"] == 0


def test_a_judge_indifferent_to_length_is_not_flagged() -> None:
    with FakeOpenAI(evidence_responder(by_marker), api_key=KEY) as fake:
        result = length_bias(_items(), _scorer(fake.base_url), lambda i, f: None)
        padded = [b for b in fake.bodies if FILLER_EN in b["messages"][1]["content"]]
    assert (result.passages, result.changed, result.biased) == (40, 0, False)
    assert len(padded) == 10  # one padded call per item
