"""The bars a calibration must clear, and what its numbers mean in words.

The default bar: the lower bound of the Wilson 95% interval of agreement must be at least
`--min-agreement` (0.8), so a high agreement on few labels is not enough. `--fail-under metric=value`
adds bars on other metrics (for 0..5 scores, e.g. weighted F1 and Spearman); when any is given, the
agreement bar applies only if `--min-agreement` is given too, because exact agreement is a harsh bar
for 0..5 scores.

Bars may also name the agreement on the team's criteria, `criteria.NAME.METRIC` (the ordinal metrics),
and on the reference's points, `reference.agreement`, `reference.kappa` and `reference.VERDICT.agreement`
(the share of the points a person called VERDICT that the judge called the same). They stand beside the
bars on the labels: a bar on a criterion does not take the default agreement bar away, since it says
nothing about the labels that bar measures.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragjudge.calibrate.pairing import CriterionAgreement, PointAgreement
from ragjudge.config.judge_config import check_criterion_name
from ragjudge.errors import UsageError
from ragjudge.judge.reference import VERDICTS
from ragjudge.stats.agreement import AgreementReport
from ragjudge.stats.intervals import labels_needed, max_lower_bound
from ragjudge.stats.normal import Z95

DEFAULT_MIN_AGREEMENT = 0.8
BOTH = ("agreement", "kappa")
BINARY_ONLY = ("tpr", "tnr")
ORDINAL_ONLY = ("weighted_kappa", "spearman", "weighted_f1")
LOWER_IS_BETTER = ("mae", "mean_error")
CRITERION_METRICS = ("agreement", "kappa", *ORDINAL_ONLY)
"""A criterion is scored 1 to 5: the metrics of ordinal labels."""
REFERENCE_METRICS = ("agreement", "kappa")


PAIRWISE_BARS = ("pairwise.agreement", "pairwise.position_consistency")
"""Floors on the pairwise judge against people's preferences (`calibrate --pairwise`)."""


@dataclass(frozen=True)
class Bar:
    """`metric >= threshold`, from `--fail-under metric=value`."""

    metric: str
    threshold: float

    @property
    def scope(self) -> Literal["labels", "criteria", "reference", "pairwise"]:
        """What the bar measures: the labels (`kappa`), a criterion (`criteria.NAME.kappa`), the points, or the
        pairwise judge against people's preferences (`pairwise.agreement`)."""
        head = self.metric.partition(".")[0]
        if head in ("criteria", "reference", "pairwise"):
            return head  # type: ignore[return-value]
        return "labels"

    @property
    def criterion(self) -> str | None:
        return self.metric.split(".")[1] if self.scope == "criteria" else None


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
        if metric.partition(".")[0] == "pairwise":
            if metric not in PAIRWISE_BARS:
                raise UsageError(f"--fail-under {metric}: unknown metric", tip=f"pairwise: {', '.join(PAIRWISE_BARS)}")
        elif metric.partition(".")[0] in ("criteria", "reference"):
            _check_scoped_name(metric)
        elif metric in LOWER_IS_BETTER:
            raise UsageError(
                f"--fail-under {metric}: {metric} is an error (lower is better), so a floor does not apply",
                tip=f"floors apply to: {', '.join(allowed)}",
            )
        elif metric not in allowed:
            tip = f"metrics: {', '.join(allowed)}; criteria.NAME.METRIC; reference.agreement, reference.kappa"
            raise UsageError(f"--fail-under {metric}: unknown metric", tip=tip)
        try:
            threshold = float(value)
        except ValueError:
            raise UsageError(f"--fail-under {text!r}: {value!r} is not a number") from None
        bars.append(Bar(metric, threshold))
    return bars


def _check_scoped_name(metric: str) -> None:
    """`criteria.NAME.METRIC`, `reference.METRIC` or `reference.VERDICT.agreement`, else exit 2 saying how."""
    parts = metric.split(".")
    if parts[0] == "criteria":
        if len(parts) != 3 or not all(parts):
            raise UsageError(
                f"--fail-under {metric}: write criteria.NAME.METRIC, e.g. criteria.asks_for_order.kappa=0.6",
                tip=f"criterion metrics: {', '.join(CRITERION_METRICS)}",
            )
        problem = check_criterion_name(parts[1])
        if problem is not None:
            raise UsageError(f"--fail-under {metric}: {problem}")
        _check_metric(metric, parts[2], CRITERION_METRICS)
        return
    verdict_bars = [f"reference.{v}.agreement" for v in VERDICTS]
    allowed = [f"reference.{m}" for m in REFERENCE_METRICS] + verdict_bars
    if metric not in allowed:
        raise UsageError(f"--fail-under {metric}: unknown metric", tip=f"reference metrics: {', '.join(allowed)}")


def _check_metric(metric: str, name: str, allowed: Sequence[str]) -> None:
    if name in LOWER_IS_BETTER:
        raise UsageError(
            f"--fail-under {metric}: {name} is an error (lower is better), so a floor does not apply",
            tip=f"floors apply to: {', '.join(allowed)}",
        )
    if name in BINARY_ONLY:
        raise UsageError(
            f"--fail-under {metric}: {name} applies to binary (0/1) labels, and a criterion is scored 1 to 5",
            tip=f"criterion metrics: {', '.join(allowed)}",
        )
    if name not in allowed:
        raise UsageError(f"--fail-under {metric}: unknown metric", tip=f"criterion metrics: {', '.join(allowed)}")


def check_labelled(bars: Sequence[Bar], criteria: Collection[str], points: bool, labels: Path) -> None:
    """A bar on a criterion no line scores, or on points no line labels, is a usage error before any call."""
    for bar in bars:
        if bar.criterion is not None and bar.criterion not in criteria:
            scored = ", ".join(sorted(criteria)) or "none"
            raise UsageError(
                f"--fail-under {bar.metric}: no line of {labels} scores criteria.{bar.criterion} "
                f"(the lines score: {scored})",
                tip='give a line `"criteria": {"' + bar.criterion + '": 1..5}` for the items a person scored',
            )
        if bar.scope == "reference" and not points:
            raise UsageError(
                f"--fail-under {bar.metric}: no line of {labels} gives reference_points",
                tip='give lines `"expected"` and `"reference_points": [{"point", "verdict"}]`',
            )


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
    return _floor(bar, getattr(report, bar.metric.rpartition(".")[2]))


def _floor(bar: Bar, value: float | None, undefined: str | None = None) -> BarResult:
    """`metric >= threshold`, or a failed bar saying why the value is undefined."""
    metric = bar.metric.rpartition(".")[2]
    if value is None:
        if undefined is not None:
            reason = f"{bar.metric} undefined: {undefined}: cannot show >= {bar.threshold:g}"
            return BarResult(bar.metric, bar.threshold, None, False, reason)
        why = "undefined (one side is constant)" if metric == "spearman" else "undefined for these labels"
        if metric == "tpr":
            why = "undefined: no human positives"
        elif metric == "tnr":
            why = "undefined: no human negatives"
        reason = f"{bar.metric} {why}: cannot show >= {bar.threshold:g}"
        return BarResult(bar.metric, bar.threshold, None, False, reason)
    ok = float(value) >= bar.threshold
    return BarResult(
        bar.metric, bar.threshold, float(value), ok, f"{bar.metric} {value:.3f} {'>=' if ok else '<'} {bar.threshold:g}"
    )


def evaluate(report: AgreementReport, min_agreement: float | None, bars: Sequence[Bar]) -> list[BarResult]:
    """The bars on the labels (a bar on the criteria or the points leaves the default agreement bar standing)."""
    mine = [bar for bar in bars if bar.scope == "labels"]
    out = []
    if min_agreement is not None or not mine:
        out.append(agreement_bar(report, DEFAULT_MIN_AGREEMENT if min_agreement is None else min_agreement))
    out.extend(_check(report, bar) for bar in mine)
    return out


def evaluate_criterion(c: CriterionAgreement, bars: Sequence[Bar]) -> list[BarResult]:
    """The bars on criteria.NAME for this criterion."""
    out = []
    for bar in bars:
        if bar.criterion != c.name:
            continue
        if c.report is None:
            out.append(_floor(bar, None, f"the judge scored criteria.{c.name} on none of its labelled items"))
        else:
            out.append(_check(c.report, bar))
    return out


def evaluate_reference(p: PointAgreement, bars: Sequence[Bar]) -> list[BarResult]:
    """The bars on reference.agreement, reference.kappa and reference.VERDICT.agreement."""
    out = []
    for bar in bars:
        if bar.scope != "reference":
            continue
        parts = bar.metric.split(".")
        if len(parts) == 3:
            a = p.by_verdict[parts[1]]
            out.append(_floor(bar, a.agreement, f"the human called no labelled point {parts[1]}"))
        elif not p.n:
            out.append(_floor(bar, None, "no labelled point could be compared"))
        else:
            out.append(_floor(bar, p.agreement if parts[1] == "agreement" else p.kappa))
    return out


def scoped_results(
    criteria: Mapping[str, CriterionAgreement], points: PointAgreement | None, bars: Sequence[Bar]
) -> tuple[dict[str, list[BarResult]], list[BarResult]]:
    """The bars on each criterion, by name, and on the points."""
    by_name = {name: evaluate_criterion(c, bars) for name, c in criteria.items()}
    return by_name, evaluate_reference(points, bars) if points is not None else []


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
