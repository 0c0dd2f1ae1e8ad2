"""The bars a calibration must clear, and what its numbers mean in words.

The default bar: the lower bound of the Wilson 95% interval of agreement must be at least
`--min-agreement` (0.8), so a high agreement on few labels is not enough. `--fail-under metric=value`
adds bars on other metrics (for 0..5 scores, e.g. weighted F1 and Spearman); when any is given, the
agreement bar applies only if `--min-agreement` is given too, because exact agreement is a harsh bar
for 0..5 scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragjudge.errors import UsageError
from ragjudge.stats.agreement import AgreementReport
from ragjudge.stats.intervals import labels_needed, max_lower_bound
from ragjudge.stats.normal import Z95

DEFAULT_MIN_AGREEMENT = 0.8
BOTH = ("agreement", "kappa")
BINARY_ONLY = ("tpr", "tnr")
ORDINAL_ONLY = ("weighted_kappa", "spearman", "weighted_f1")
LOWER_IS_BETTER = ("mae", "mean_error")


@dataclass(frozen=True)
class Bar:
    """`metric >= threshold`, from `--fail-under metric=value`."""

    metric: str
    threshold: float


@dataclass(frozen=True)
class BarResult:
    metric: str
    threshold: float
    value: float | None
    passed: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "op": ">=",
            "threshold": self.threshold,
            "value": self.value,
            "passed": self.passed,
            "reason": self.reason,
        }


def parse_fail_under(texts: Sequence[str]) -> list[Bar]:
    bars = []
    allowed = (*BOTH, *BINARY_ONLY, *ORDINAL_ONLY)
    for text in texts:
        metric, sep, value = text.partition("=")
        metric = metric.strip()
        if not sep:
            raise UsageError(f"--fail-under {text!r}: write metric=value, e.g. weighted_kappa=0.6")
        if metric in LOWER_IS_BETTER:
            raise UsageError(
                f"--fail-under {metric}: {metric} is an error (lower is better), so a floor does not apply",
                tip=f"floors apply to: {', '.join(allowed)}",
            )
        if metric not in allowed:
            raise UsageError(f"--fail-under {metric}: unknown metric", tip=f"metrics: {', '.join(allowed)}")
        try:
            threshold = float(value)
        except ValueError:
            raise UsageError(f"--fail-under {text!r}: {value!r} is not a number") from None
        bars.append(Bar(metric, threshold))
    return bars


def check_applicable(bars: Sequence[Bar], binary: bool) -> None:
    """A bar on a metric the label scale does not have is a usage error, found before any judge call."""
    for bar in bars:
        if binary and bar.metric in ORDINAL_ONLY:
            raise UsageError(
                f"--fail-under {bar.metric}: applies to ordinal (0..5) labels, and these human labels are binary",
                tip="for binary labels use agreement, kappa, tpr or tnr",
            )
        if not binary and bar.metric in BINARY_ONLY:
            raise UsageError(
                f"--fail-under {bar.metric}: applies to binary (0/1) labels, and these human labels are ordinal",
                tip="for ordinal labels use agreement, kappa, weighted_kappa, spearman or weighted_f1",
            )


def agreement_bar(report: AgreementReport, min_agreement: float) -> BarResult:
    lower = report.ci95[0]
    ok = lower >= min_agreement
    op = ">=" if ok else "<"
    reason = f"agreement ci95 lower bound {lower:.3f} {op} {min_agreement:g}"
    return BarResult("agreement_ci95_lower", min_agreement, lower, ok, reason)


def _check(report: AgreementReport, bar: Bar) -> BarResult:
    value = getattr(report, bar.metric)
    if value is None:
        why = "undefined (one side is constant)" if bar.metric == "spearman" else "undefined for these labels"
        if bar.metric == "tpr":
            why = "undefined: no human positives"
        elif bar.metric == "tnr":
            why = "undefined: no human negatives"
        reason = f"{bar.metric} {why}: cannot show >= {bar.threshold:g}"
        return BarResult(bar.metric, bar.threshold, None, False, reason)
    ok = float(value) >= bar.threshold
    return BarResult(
        bar.metric, bar.threshold, float(value), ok, f"{bar.metric} {value:.3f} {'>=' if ok else '<'} {bar.threshold:g}"
    )


def evaluate(report: AgreementReport, min_agreement: float | None, bars: Sequence[Bar]) -> list[BarResult]:
    out = []
    if min_agreement is not None or not bars:
        out.append(agreement_bar(report, DEFAULT_MIN_AGREEMENT if min_agreement is None else min_agreement))
    out.extend(_check(report, bar) for bar in bars)
    return out


def unreachable(n: int, min_agreement: float) -> tuple[float, int] | None:
    """(best possible lower bound, labels needed) when n labels can never clear the bar, else None."""
    best = max_lower_bound(n, Z95)
    if best >= min_agreement:
        return None
    return best, labels_needed(min_agreement, Z95)


def meaning(report: AgreementReport, results: Sequence[BarResult], min_agreement: float | None) -> list[str]:
    """What the numbers say, in sentences (printed under the `agreement=... ci95=[...] n=...` line)."""
    lo, hi = report.ci95
    agree = round(report.agreement * report.n)
    lines = [
        f"The judge gave the human label on {agree} of {report.n} items ({report.agreement:.1%}); with 95% "
        f"confidence its agreement on items like these lies between {lo:.1%} and {hi:.1%}."
    ]
    bar = next((r for r in results if r.metric == "agreement_ci95_lower"), None)
    if bar is not None:
        short = unreachable(report.n, bar.threshold)
        if bar.passed:
            lines.append(
                f"→ fit: even the pessimistic end of that interval ({lo:.3f}) clears the bar of {bar.threshold:g}."
            )
        elif short is not None:
            best, need = short
            lines.append(
                f"→ unfit: with only {report.n} labels the lower bound can never reach {bar.threshold:g}; even "
                f"perfect agreement gives at most {best:.3f}. Label at least {need} items, then calibrate again."
            )
        else:
            lines.append(
                f"→ unfit: the agreement could be as low as {lo:.3f}, below the bar of {bar.threshold:g}: "
                "fix the rubric or the model, then calibrate again."
            )
    for r in results:
        if r.metric != "agreement_ci95_lower":
            lines.append(f"{'✓' if r.passed else '✗'} {r.reason}")
    if report.mean_error is not None and report.mean_error != 0:
        lean = "lenient (scores above the human)" if report.mean_error > 0 else "strict (scores below the human)"
        lines.append(f"On average the judge is {lean} by {abs(report.mean_error):.2f} points.")
    return lines
