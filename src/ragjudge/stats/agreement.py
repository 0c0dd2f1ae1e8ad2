"""Agreement metrics between an LLM judge and human labels.

Pure standard library (no numpy/scipy/sklearn at runtime). Every metric is checked in the
test suite against an independent reference implementation (scikit-learn, scipy,
statsmodels); where a reference is undefined (it returns NaN or warns) this module makes an
explicit, documented choice instead.

Conventions:

* ``human`` / ``y_true`` / ``a`` is the reference rater, ``judge`` / ``y_pred`` / ``b`` the
  LLM judge. For binary labels the positive class is ``1``.
* Paired inputs must have the same, non-zero length, else :class:`ValueError`.
* Kappa statistics are computed from exact integer counts and divided once at the end, so
  identical label lists give exactly ``1.0`` and results always lie in ``[-1, 1]``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ragjudge.stats.intervals import wilson_interval
from ragjudge.stats.normal import Z95
from ragjudge.stats.ranks import mid_ranks

__all__ = [
    "AgreementReport",
    "cohen_kappa",
    "compare",
    "confusion_binary",
    "mae",
    "mean_error",
    "quadratic_weighted_kappa",
    "spearman",
    "tnr",
    "tpr",
    "weighted_f1",
]

_L = TypeVar("_L", bound=Hashable)


def _check_pair(a: Sequence[object], b: Sequence[object]) -> int:
    """Return the common length of two paired sequences; reject mismatched or empty input."""
    if len(a) != len(b):
        raise ValueError(f"paired sequences differ in length: {len(a)} != {len(b)}")
    if not a:
        raise ValueError("need at least one labelled pair")
    return len(a)


def _check_finite(values: Sequence[float]) -> None:
    for v in values:
        if not math.isfinite(v):
            raise ValueError(f"non-finite value: {v!r}")


# --------------------------------------------------------------------------- kappa


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Unweighted Cohen's kappa (as ``sklearn.metrics.cohen_kappa_score``).

    Degenerate case: when the expected chance agreement is 1 (both raters used one and the
    same label throughout) kappa is 0/0; sklearn returns NaN. Here it is ``1.0`` if observed
    agreement is 1 (which it then always is) and ``0.0`` otherwise.
    """
    n = _check_pair(a, b)
    agree = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    ca = Counter(a)
    cb = Counter(b)
    chance = sum(count * cb.get(label, 0) for label, count in ca.items())  # n^2 * p_e
    denom = n * n - chance
    if denom == 0:
        return 1.0 if agree == n else 0.0
    return (n * agree - chance) / denom


def _quadratic_kappa(a: Sequence[_L], b: Sequence[_L], position: Mapping[_L, int]) -> float:
    """Quadratic weighted kappa with weights ``(position[x] - position[y]) ** 2``.

    Computed in O(n) from exact integer sums:
    ``kappa = 1 - n * sum_i w(a_i, b_i) / sum_{x,y} r_x c_y w(x, y)``.
    """
    n = len(a)
    observed = 0  # sum of weights over the actual pairs
    sa = sa2 = sb = sb2 = 0
    for x, y in zip(a, b, strict=True):
        px = position[x]
        py = position[y]
        observed += (px - py) ** 2
        sa += px
        sa2 += px * px
        sb += py
        sb2 += py * py
    # sum_{i,j} (pa_i - pb_j)^2 over all n*n cross pairs  (= n^2 * expected mean weight)
    expected = n * sa2 + n * sb2 - 2 * sa * sb
    if expected == 0:
        return 1.0 if observed == 0 else 0.0
    return (expected - n * observed) / expected


def quadratic_weighted_kappa(a: Sequence[int], b: Sequence[int], labels: Sequence[int] | None = None) -> float:
    """Quadratic weighted kappa, as ``cohen_kappa_score(a, b, labels=labels, weights="quadratic")``.

    Like sklearn, the weight between two labels is the squared difference of their
    *positions* in ``labels`` (by default the sorted union of observed labels), not of their
    values: pass the full scale (e.g. ``range(1, 6)``) to get value distances on a scale with
    unused points. Unlike sklearn, a value missing from ``labels`` raises
    :class:`ValueError` instead of being silently dropped, and duplicate labels are rejected.

    Degenerate case (expected weighted disagreement 0, i.e. both raters constant on the same
    label): ``1.0`` if there is no observed disagreement, else ``0.0`` (sklearn: NaN).
    """
    _check_pair(a, b)
    if labels is None:
        ordered = sorted(set(a) | set(b))
    else:
        ordered = list(labels)
        if len(set(ordered)) != len(ordered):
            raise ValueError("labels contain duplicates")
        missing = (set(a) | set(b)) - set(ordered)
        if missing:
            raise ValueError(f"values not in labels: {sorted(missing)}")
    position = {label: i for i, label in enumerate(ordered)}
    return _quadratic_kappa(a, b, position)


# --------------------------------------------------------------------------- correlation


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman rank correlation: Pearson correlation of average ranks (ties averaged).

    Returns ``None`` when either side is constant (including a single pair), where the
    correlation is undefined (scipy returns NaN). Non-finite values raise ValueError.
    """
    n = _check_pair(x, y)
    _check_finite(x)
    _check_finite(y)
    rx, _ = mid_ranks(x)
    ry, _ = mid_ranks(y)
    mean = (n + 1) / 2.0  # mean of ranks 1..n, unchanged by averaging ties
    dx = [r - mean for r in rx]  # half-integers: exact in floating point
    dy = [r - mean for r in ry]
    sxx = math.fsum(d * d for d in dx)
    syy = math.fsum(d * d for d in dy)
    if sxx == 0.0 or syy == 0.0:
        return None
    sxy = math.fsum(u * v for u, v in zip(dx, dy, strict=True))
    r = sxy / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


# --------------------------------------------------------------------------- classification


def weighted_f1(y_true: Sequence[int], y_pred: Sequence[int]) -> float:
    """Support-weighted F1, as ``f1_score(y_true, y_pred, average="weighted", zero_division=0)``.

    Labels are the union of both sequences; each label's F1 (``2tp / (2tp + fp + fn)``, 0 when
    it has no true positives) is weighted by its support in ``y_true``, so labels only the
    predictor uses count with weight 0 (but still lower the F1 of the labels they were
    confused with).
    """
    n = _check_pair(y_true, y_pred)
    support = Counter(y_true)
    predicted = Counter(y_pred)
    tp: Counter[int] = Counter(t for t, p in zip(y_true, y_pred, strict=True) if t == p)
    total = 0.0
    for label, sup in support.items():
        hits = tp[label]
        if hits == 0:
            continue
        fn = sup - hits
        fp = predicted[label] - hits
        total += sup * (2 * hits / (2 * hits + fp + fn))
    return total / n


def _check_binary(values: Sequence[float], name: str) -> list[int]:
    out: list[int] = []
    for v in values:
        if v == 1:
            out.append(1)
        elif v == 0:
            out.append(0)
        else:
            raise ValueError(f"{name}: binary labels must be 0 or 1, got {v!r}")
    return out


def confusion_binary(human: Sequence[int], judge: Sequence[int]) -> dict[str, int]:
    """Binary confusion counts with the human as truth and ``1`` as the positive class.

    Keys ``tp`` (both 1), ``fp`` (judge 1, human 0: leniency), ``tn`` (both 0) and ``fn``
    (judge 0, human 1: strictness). Labels other than 0/1 raise :class:`ValueError`.
    """
    _check_pair(human, judge)
    h = _check_binary(human, "human")
    j = _check_binary(judge, "judge")
    counts = Counter(zip(h, j, strict=True))
    return {"tp": counts[(1, 1)], "fp": counts[(0, 1)], "tn": counts[(0, 0)], "fn": counts[(1, 0)]}


def tpr(confusion: Mapping[str, int]) -> float | None:
    """True-positive rate (recall on human positives); ``None`` when there are no positives."""
    positives = confusion["tp"] + confusion["fn"]
    return confusion["tp"] / positives if positives else None


def tnr(confusion: Mapping[str, int]) -> float | None:
    """True-negative rate (specificity); ``None`` when there are no human negatives."""
    negatives = confusion["tn"] + confusion["fp"]
    return confusion["tn"] / negatives if negatives else None


# --------------------------------------------------------------------------- errors


def mae(human: Sequence[float], judge: Sequence[float]) -> float:
    """Mean absolute error between judge and human scores."""
    n = _check_pair(human, judge)
    return math.fsum(abs(j - h) for h, j in zip(human, judge, strict=True)) / n


def mean_error(human: Sequence[float], judge: Sequence[float]) -> float:
    """Mean signed error ``judge - human``: positive means the judge is lenient."""
    n = _check_pair(human, judge)
    return math.fsum(j - h for h, j in zip(human, judge, strict=True)) / n


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class AgreementReport:
    """Agreement between a judge and human labels; metrics that do not apply are ``None``.

    ``agreement`` is the exact-match share and ``ci95`` its Wilson interval (``z = Z95``, statsmodels').
    ``tpr``/``tnr``/``confusion`` apply to binary labels; ``mae``, ``mean_error``,
    ``weighted_kappa``, ``spearman`` and ``weighted_f1`` to ordinal scores.
    """

    n: int
    binary: bool
    agreement: float
    ci95: tuple[float, float]
    kappa: float | None = None
    tpr: float | None = None
    tnr: float | None = None
    confusion: dict[str, int] | None = None
    mae: float | None = None
    mean_error: float | None = None
    weighted_kappa: float | None = None
    spearman: float | None = None
    weighted_f1: float | None = None

    def summary(self) -> str:
        """One line such as ``agreement=0.860 ci95=[0.738, 0.930] n=50``."""
        lo, hi = self.ci95
        return f"agreement={self.agreement:.3f} ci95=[{lo:.3f}, {hi:.3f}] n={self.n}"


def _as_int_labels(values: Sequence[float]) -> list[int] | None:
    """The values as ints if all are integral, else ``None``."""
    if all(float(v).is_integer() for v in values):
        return [int(v) for v in values]
    return None


def compare(human: Sequence[float], judge: Sequence[float], binary: bool) -> AgreementReport:
    """Compute every applicable agreement metric between human labels and judge labels.

    Binary (labels must be 0/1): ``n``, ``agreement``, ``ci95``, ``kappa``, ``tpr``, ``tnr``,
    ``confusion``.

    Ordinal: ``n``, ``agreement``/``ci95`` (exact matches), ``mae``, ``mean_error``,
    ``spearman``, and — when every score is integral — ``kappa``, ``weighted_kappa`` and
    ``weighted_f1`` (``None`` for non-integral scores, which are not categories). The
    weighted kappa uses value distances (the contiguous scale from the lowest to the highest
    observed score), i.e. ``quadratic_weighted_kappa(h, j, labels=range(lo, hi + 1))``.

    Empty or mismatched input and non-finite values raise :class:`ValueError`.
    """
    n = _check_pair(human, judge)
    _check_finite(human)
    _check_finite(judge)
    agree = sum(1 for h, j in zip(human, judge, strict=True) if h == j)
    agreement = agree / n
    lo, hi = wilson_interval(agree, n, z=Z95)
    ci95 = (lo, hi)
    if binary:
        h_bin = _check_binary(human, "human")
        j_bin = _check_binary(judge, "judge")
        confusion = confusion_binary(h_bin, j_bin)
        return AgreementReport(
            n=n,
            binary=True,
            agreement=agreement,
            ci95=ci95,
            kappa=cohen_kappa(h_bin, j_bin),
            tpr=tpr(confusion),
            tnr=tnr(confusion),
            confusion=confusion,
        )
    h_int = _as_int_labels(human)
    j_int = _as_int_labels(judge)
    kappa = weighted_kappa = f1 = None
    if h_int is not None and j_int is not None:
        kappa = cohen_kappa(h_int, j_int)
        weighted_kappa = _quadratic_kappa(h_int, j_int, {v: v for v in set(h_int) | set(j_int)})
        f1 = weighted_f1(h_int, j_int)
    return AgreementReport(
        n=n,
        binary=False,
        agreement=agreement,
        ci95=ci95,
        kappa=kappa,
        mae=mae(human, judge),
        mean_error=mean_error(human, judge),
        weighted_kappa=weighted_kappa,
        spearman=spearman(human, judge),
        weighted_f1=f1,
    )
