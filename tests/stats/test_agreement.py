"""`stats.agreement`, the agreement metrics, checked against independent references (sklearn, scipy, statsmodels)."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score, confusion_matrix, f1_score
from statsmodels.stats.proportion import proportion_confint

from ragjudge.stats.agreement import (
    AgreementReport,
    cohen_kappa,
    compare,
    confusion_binary,
    mae,
    mean_error,
    quadratic_weighted_kappa,
    spearman,
    tnr,
    tpr,
    weighted_f1,
)
from ragjudge.stats.intervals import wilson_interval

SIZES = [1, 2, 3, 5, 10, 17, 50, 200]
SCALES: list[list[int]] = [[0, 1], [1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]]


def _label_sets(seed: int, per_combo: int = 12) -> list[tuple[list[int], list[int]]]:
    """Random (human, judge) label pairs over several scales and sizes.

    Mixes independent labels, a noisy judge that mostly copies the human, and skewed
    label distributions, so both high and low agreement (and gaps in the scale) occur.
    """
    rng = random.Random(seed)
    out: list[tuple[list[int], list[int]]] = []
    for scale in SCALES:
        for size in SIZES:
            for k in range(per_combo):
                mode = k % 3
                if mode == 2:
                    weights = [rng.random() ** 3 for _ in scale]
                    human = rng.choices(scale, weights=weights, k=size)
                else:
                    human = [rng.choice(scale) for _ in range(size)]
                if mode == 0:
                    judge = [rng.choice(scale) for _ in range(size)]
                else:
                    flip = rng.random()
                    judge = [rng.choice(scale) if rng.random() < flip else h for h in human]
                out.append((human, judge))
    return out


LABEL_SETS = _label_sets(20240601)


def _degenerate_kappa(a: list[int], b: list[int]) -> bool:
    return len(set(a)) == 1 and set(a) == set(b)


# --------------------------------------------------------------------------- Wilson


def test_seed_worked_example() -> None:
    lo, hi = wilson_interval(43, 50)
    assert f"agreement={43 / 50:.3f} ci95=[{lo:.3f}, {hi:.3f}] n=50" == "agreement=0.860 ci95=[0.738, 0.930] n=50"
    report = compare([1] * 43 + [0] * 7, [1] * 50, binary=True)
    assert report.summary() == "agreement=0.860 ci95=[0.738, 0.930] n=50"


# --------------------------------------------------------------------------- kappa


def test_cohen_kappa_matches_sklearn() -> None:
    checked = 0
    for human, judge in LABEL_SETS:
        if _degenerate_kappa(human, judge):
            assert cohen_kappa(human, judge) == 1.0
            continue
        ref = cohen_kappa_score(human, judge)
        assert cohen_kappa(human, judge) == pytest.approx(ref, abs=1e-12), (human, judge)
        checked += 1
    assert checked > 200


def test_quadratic_kappa_matches_sklearn_default_labels() -> None:
    checked = 0
    for human, judge in LABEL_SETS:
        if _degenerate_kappa(human, judge):
            assert quadratic_weighted_kappa(human, judge) == 1.0
            continue
        ref = cohen_kappa_score(human, judge, weights="quadratic")
        assert quadratic_weighted_kappa(human, judge) == pytest.approx(ref, abs=1e-12), (human, judge)
        checked += 1
    assert checked > 200


def test_quadratic_kappa_matches_sklearn_given_labels() -> None:
    rng = random.Random(3)
    for human, judge in LABEL_SETS:
        if _degenerate_kappa(human, judge):
            continue
        scale = sorted(set(human) | set(judge))
        full = list(range(0, 6))
        shuffled = scale[:]
        rng.shuffle(shuffled)
        for labels in (full, shuffled):
            ref = cohen_kappa_score(human, judge, labels=labels, weights="quadratic")
            got = quadratic_weighted_kappa(human, judge, labels=labels)
            assert got == pytest.approx(ref, abs=1e-12), (human, judge, labels)


def test_quadratic_kappa_uses_positions_like_sklearn() -> None:
    # Observed labels {1, 2, 5}: by default 2 and 5 are adjacent (positions 1 and 2).
    human = [1, 2, 5, 5, 2, 1]
    judge = [1, 5, 2, 5, 2, 2]
    assert quadratic_weighted_kappa(human, judge) == pytest.approx(cohen_kappa_score(human, judge, weights="quadratic"))
    assert quadratic_weighted_kappa(human, judge, labels=range(1, 6)) == pytest.approx(
        cohen_kappa_score(human, judge, labels=[1, 2, 3, 4, 5], weights="quadratic")
    )
    assert quadratic_weighted_kappa(human, judge) != pytest.approx(
        quadratic_weighted_kappa(human, judge, labels=range(1, 6))
    )


def test_quadratic_kappa_label_validation() -> None:
    with pytest.raises(ValueError, match="not in labels"):
        quadratic_weighted_kappa([1, 2, 6], [1, 2, 3], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="duplicates"):
        quadratic_weighted_kappa([1, 2], [1, 2], labels=[1, 2, 2])


def test_kappa_degenerate_cases() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(cohen_kappa_score([3, 3, 3], [3, 3, 3]))  # the reference gives up
    assert cohen_kappa([3, 3, 3], [3, 3, 3]) == 1.0
    assert quadratic_weighted_kappa([3, 3, 3], [3, 3, 3]) == 1.0
    assert cohen_kappa([1], [1]) == 1.0
    # one rater constant, the other not: well defined (expected agreement < 1)
    assert cohen_kappa([1, 1, 1, 1], [1, 1, 0, 1]) == pytest.approx(cohen_kappa_score([1, 1, 1, 1], [1, 1, 0, 1]))
    assert cohen_kappa([1], [0]) == pytest.approx(cohen_kappa_score([1], [0]))


def test_pair_validation() -> None:
    for fn in (cohen_kappa, quadratic_weighted_kappa, weighted_f1, confusion_binary):
        with pytest.raises(ValueError):
            fn([], [])
        with pytest.raises(ValueError):
            fn([1, 0], [1])
    for fn2 in (mae, mean_error, spearman):
        with pytest.raises(ValueError):
            fn2([], [])
        with pytest.raises(ValueError):
            fn2([1.0], [1.0, 2.0])


labels_st = st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_kappa_in_range(data: st.DataObject) -> None:
    a = data.draw(labels_st)
    b = data.draw(st.lists(st.integers(min_value=0, max_value=5), min_size=len(a), max_size=len(a)))
    for k in (cohen_kappa(a, b), quadratic_weighted_kappa(a, b), quadratic_weighted_kappa(a, b, range(6))):
        assert -1.0 <= k <= 1.0


@settings(max_examples=200, deadline=None)
@given(labels_st)
def test_identical_labels_give_kappa_one(a: list[int]) -> None:
    if len(set(a)) > 1:
        assert cohen_kappa(a, list(a)) == 1.0
        assert quadratic_weighted_kappa(a, list(a)) == 1.0
        assert quadratic_weighted_kappa(a, list(a), labels=range(6)) == 1.0
        assert weighted_f1(a, list(a)) == pytest.approx(1.0)
        assert spearman(a, list(a)) == pytest.approx(1.0)


# --------------------------------------------------------------------------- Spearman


def test_spearman_matches_scipy_on_labels() -> None:
    checked = 0
    for human, judge in LABEL_SETS:
        got = spearman(human, judge)
        if len(set(human)) == 1 or len(set(judge)) == 1:
            assert got is None
            continue
        ref = spearmanr(human, judge).statistic
        assert got is not None
        assert got == pytest.approx(float(ref), abs=1e-12), (human, judge)
        checked += 1
    assert checked > 200


def test_spearman_matches_scipy_on_floats() -> None:
    rng = random.Random(5)
    for size in [2, 3, 7, 30, 300]:
        for _ in range(20):
            x = [rng.gauss(0, 1) for _ in range(size)]
            # rounded copies introduce ties; mix monotone and noisy relations
            y = [round(v + rng.gauss(0, rng.choice([0.1, 1.0, 5.0])), 1) for v in x]
            if len(set(y)) == 1:
                continue
            got = spearman(x, y)
            assert got == pytest.approx(float(spearmanr(x, y).statistic), abs=1e-12)


def test_spearman_undefined() -> None:
    assert spearman([1.0], [2.0]) is None
    assert spearman([1, 2, 3], [4, 4, 4]) is None
    assert spearman([2, 2], [1, 2]) is None
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        spearman([1.0, math.nan], [1.0, 2.0])


# --------------------------------------------------------------------------- F1, confusion


def test_weighted_f1_matches_sklearn() -> None:
    for human, judge in LABEL_SETS:
        ref = f1_score(human, judge, average="weighted", zero_division=0)
        assert weighted_f1(human, judge) == pytest.approx(float(ref), abs=1e-12), (human, judge)


def test_weighted_f1_prediction_only_labels() -> None:
    # label 9 is only predicted: weight 0, but it still costs label 1 recall
    human = [1, 1, 2, 2]
    judge = [1, 9, 2, 2]
    assert weighted_f1(human, judge) == pytest.approx(
        float(f1_score(human, judge, average="weighted", zero_division=0))
    )
    assert weighted_f1([1, 1], [2, 2]) == 0.0


def test_confusion_matches_sklearn() -> None:
    checked = 0
    for human, judge in LABEL_SETS:
        if not set(human) | set(judge) <= {0, 1}:
            continue
        tn, fp, fn, tp = (int(v) for v in confusion_matrix(human, judge, labels=[0, 1]).ravel())
        conf = confusion_binary(human, judge)
        assert conf == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
        assert tpr(conf) == (tp / (tp + fn) if tp + fn else None)
        assert tnr(conf) == (tn / (tn + fp) if tn + fp else None)
        checked += 1
    assert checked > 50


def test_confusion_rejects_non_binary() -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        confusion_binary([0, 1, 2], [0, 1, 1])
    assert tpr({"tp": 0, "fp": 3, "tn": 1, "fn": 0}) is None
    assert tnr({"tp": 2, "fp": 0, "tn": 0, "fn": 1}) is None


def test_mae_and_mean_error() -> None:
    human = [1, 2, 3, 4]
    judge = [2, 2, 5, 3]
    assert mae(human, judge) == pytest.approx(1.0)
    assert mean_error(human, judge) == pytest.approx(0.5)  # judge lenient
    assert mean_error(judge, human) == pytest.approx(-0.5)
    rng = random.Random(9)
    for _ in range(50):
        h = [rng.uniform(0, 5) for _ in range(20)]
        j = [rng.uniform(0, 5) for _ in range(20)]
        assert mae(h, j) == pytest.approx(sum(abs(b - a) for a, b in zip(h, j, strict=True)) / 20)
        assert mean_error(h, j) == pytest.approx(sum(b - a for a, b in zip(h, j, strict=True)) / 20)


# --------------------------------------------------------------------------- compare


def test_compare_binary_against_references() -> None:
    checked = 0
    for human, judge in LABEL_SETS:
        if not set(human) | set(judge) <= {0, 1}:
            continue
        report = compare([float(v) for v in human], [float(v) for v in judge], binary=True)
        n = len(human)
        agree = sum(h == j for h, j in zip(human, judge, strict=True))
        assert report.n == n and report.binary
        assert report.agreement == pytest.approx(agree / n)
        lo, hi = proportion_confint(agree, n, alpha=0.05, method="wilson")
        assert report.ci95 == pytest.approx((float(lo), float(hi)), abs=1e-12)
        if not _degenerate_kappa(human, judge):
            assert report.kappa == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
        tn, fp, fn, tp = (int(v) for v in confusion_matrix(human, judge, labels=[0, 1]).ravel())
        assert report.confusion == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
        assert report.tpr == (tp / (tp + fn) if tp + fn else None)
        assert report.tnr == (tn / (tn + fp) if tn + fp else None)
        for field in ("mae", "mean_error", "weighted_kappa", "spearman", "weighted_f1"):
            assert getattr(report, field) is None
        checked += 1
    assert checked > 50


def test_compare_ordinal_against_references() -> None:
    for human, judge in LABEL_SETS:
        report = compare(human, judge, binary=False)
        n = len(human)
        agree = sum(h == j for h, j in zip(human, judge, strict=True))
        assert report.n == n and not report.binary
        assert report.agreement == pytest.approx(agree / n)
        lo, hi = proportion_confint(agree, n, alpha=0.05, method="wilson")
        assert report.ci95 == pytest.approx((float(lo), float(hi)), abs=1e-12)
        assert report.mae == pytest.approx(sum(abs(j - h) for h, j in zip(human, judge, strict=True)) / n)
        assert report.mean_error == pytest.approx(sum(j - h for h, j in zip(human, judge, strict=True)) / n)
        assert report.weighted_f1 == pytest.approx(
            float(f1_score(human, judge, average="weighted", zero_division=0)), abs=1e-12
        )
        if _degenerate_kappa(human, judge):
            assert report.kappa == 1.0 and report.weighted_kappa == 1.0
        else:
            assert report.kappa == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
            span = list(range(min(human + judge), max(human + judge) + 1))
            ref = cohen_kappa_score(human, judge, labels=span, weights="quadratic")
            assert report.weighted_kappa == pytest.approx(ref, abs=1e-12)
        if len(set(human)) > 1 and len(set(judge)) > 1:
            assert report.spearman == pytest.approx(float(spearmanr(human, judge).statistic), abs=1e-12)
        else:
            assert report.spearman is None
        assert report.tpr is None and report.tnr is None and report.confusion is None


def test_compare_ordinal_non_integral_scores() -> None:
    report = compare([1.0, 2.0, 3.5, 4.0], [1.0, 2.5, 3.5, 5.0], binary=False)
    assert report.agreement == pytest.approx(0.5)
    assert report.kappa is None and report.weighted_kappa is None and report.weighted_f1 is None
    assert report.mae == pytest.approx(0.375)
    assert report.mean_error == pytest.approx(0.375)
    assert report.spearman == pytest.approx(1.0)


def test_compare_validation() -> None:
    with pytest.raises(ValueError):
        compare([], [], binary=True)
    with pytest.raises(ValueError):
        compare([1, 0], [1], binary=False)
    with pytest.raises(ValueError, match="0 or 1"):
        compare([0, 1, 2], [0, 1, 1], binary=True)
    with pytest.raises(ValueError):
        compare([1.0, math.inf], [1.0, 2.0], binary=False)


def test_report_is_frozen() -> None:
    report = compare([1, 0, 1], [1, 1, 1], binary=True)
    assert isinstance(report, AgreementReport)
    with pytest.raises(AttributeError):
        report.n = 4  # type: ignore[misc]
