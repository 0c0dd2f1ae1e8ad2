"""The judge's criteria scores and reference-point verdicts set beside the person's, and how well they agree.

Criteria: per criterion, the human's 1-5 scores and the judge's over the lines that label it, measured as
ordinal labels are (`stats.agreement.compare`: exact agreement with its Wilson interval, Cohen's and the
quadratic-weighted kappa, MAE, the signed mean error, Spearman, weighted F1). A criterion the judge left
unscored on a line is left out of its figures, with the reason, never guessed.

Reference points: every point a person gave a verdict on is paired with the judge's verdict on the same
point (the texts compared without their spaces, as the judge's points are checked). A point the judge did
not return (it split a reference text differently) counts as a disagreement, and is listed. A line whose
reference the judge did not judge at all (the call failed, the judge found the answer declined) is left
out, with the reason. The figure is the share of points where the two verdicts are the same, with its
Wilson 95% interval, overall and per verdict the person gave; Cohen's kappa over the verdicts (a point not
returned is a category of its own); and the confusion of the person's verdicts by the judge's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.calibrate.judging import ScoredLabel
from ragjudge.judge.reference import VERDICTS, point_key
from ragjudge.stats.agreement import AgreementReport, cohen_kappa, compare
from ragjudge.stats.intervals import wilson_interval
from ragjudge.stats.normal import Z95

NOT_RETURNED = "not_returned"
"""The judge's side of a pair whose point the judge gave no verdict for."""


@dataclass(frozen=True)
class Skipped:
    """A line whose labels of one kind could not be compared, and why."""

    id: str
    where: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "where": self.where, "reason": self.reason}


@dataclass(frozen=True)
class CriterionAgreement:
    """How the judge's scores of one criterion agree with the person's."""

    name: str
    labelled: int
    """Lines that score it."""
    report: AgreementReport | None
    """None when the judge scored it on none of them."""
    unscored: tuple[Skipped, ...]

    def as_dict(self) -> dict[str, Any]:
        r = self.report
        figures: dict[str, Any] = {
            "n": r.n if r else 0,
            "agreement": r.agreement if r else None,
            "ci95": list(r.ci95) if r else None,
            "kappa": r.kappa if r else None,
            "weighted_kappa": r.weighted_kappa if r else None,
            "mae": r.mae if r else None,
            "mean_error": r.mean_error if r else None,
            "spearman": r.spearman if r else None,
            "weighted_f1": r.weighted_f1 if r else None,
        }
        return {**figures, "labelled": self.labelled, "unscored": [u.as_dict() for u in self.unscored]}


@dataclass(frozen=True)
class PointPair:
    id: str
    where: str
    point: str
    human: str
    judge: str
    """The judge's verdict, or NOT_RETURNED."""


@dataclass(frozen=True)
class VerdictAgreement:
    """Of the points a person called one verdict, how many the judge called the same."""

    n: int
    agreed: int

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.n if self.n else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        return tuple(wilson_interval(self.agreed, self.n, z=Z95)) if self.n else None  # type: ignore[return-value]

    def as_dict(self) -> dict[str, Any]:
        ci = self.ci95
        return {"n": self.n, "agreed": self.agreed, "agreement": self.agreement, "ci95": list(ci) if ci else None}


@dataclass(frozen=True)
class PointAgreement:
    """How the judge's verdicts on the reference's points agree with the person's."""

    pairs: tuple[PointPair, ...]
    items: int
    """Lines compared."""
    unscored: tuple[Skipped, ...]

    @property
    def n(self) -> int:
        return len(self.pairs)

    @property
    def agreed(self) -> int:
        return sum(p.human == p.judge for p in self.pairs)

    @property
    def agreement(self) -> float | None:
        return VerdictAgreement(self.n, self.agreed).agreement

    @property
    def ci95(self) -> tuple[float, float] | None:
        return VerdictAgreement(self.n, self.agreed).ci95

    @property
    def kappa(self) -> float | None:
        if not self.pairs:
            return None
        index = {v: i for i, v in enumerate((*VERDICTS, NOT_RETURNED))}
        return cohen_kappa([index[p.human] for p in self.pairs], [index[p.judge] for p in self.pairs])

    @property
    def by_verdict(self) -> dict[str, VerdictAgreement]:
        """Per verdict the person gave (every verdict, n 0 when the person gave it to no point)."""
        out: dict[str, VerdictAgreement] = {}
        for verdict in VERDICTS:
            mine = [p for p in self.pairs if p.human == verdict]
            out[verdict] = VerdictAgreement(len(mine), sum(p.judge == verdict for p in mine))
        return out

    @property
    def confusion(self) -> dict[str, dict[str, int]]:
        """The person's verdict -> the judge's verdict (or not_returned) -> points."""
        return {
            h: {j: sum(p.human == h and p.judge == j for p in self.pairs) for j in (*VERDICTS, NOT_RETURNED)}
            for h in VERDICTS
        }

    @property
    def not_returned(self) -> tuple[PointPair, ...]:
        return tuple(p for p in self.pairs if p.judge == NOT_RETURNED)

    def as_dict(self) -> dict[str, Any]:
        ci = self.ci95
        return {
            "n": self.n,
            "items": self.items,
            "agreed": self.agreed,
            "agreement": self.agreement,
            "ci95": list(ci) if ci else None,
            "kappa": self.kappa,
            "by_verdict": {v: a.as_dict() for v, a in self.by_verdict.items()},
            "confusion": self.confusion,
            "not_returned": [
                {"id": p.id, "where": p.where, "point": p.point, "human": p.human} for p in self.not_returned
            ],
            "unscored": [u.as_dict() for u in self.unscored],
        }


def criteria_agreement(scored: Sequence[ScoredLabel]) -> dict[str, CriterionAgreement]:
    """Per criterion any line scores, by name: the judge's scores beside the person's."""
    names = sorted({name for s in scored for name in s.label.criteria})
    out = {}
    for name in names:
        human: list[float] = []
        judge: list[float] = []
        unscored: list[Skipped] = []
        lines = [s for s in scored if name in s.label.criteria]
        for s in lines:
            value = s.judgement.criteria.get(name) if s.judgement is not None else None
            if value is None:
                unscored.append(Skipped(s.label.id, s.label.where, _why_criterion(s, name)))
                continue
            human.append(float(s.label.criteria[name]))
            judge.append(float(value))
        report = compare(human, judge, binary=False) if human else None
        out[name] = CriterionAgreement(name, len(lines), report, tuple(unscored))
    return out


def _why_criterion(s: ScoredLabel, name: str) -> str:
    j = s.judgement
    if j is None:
        return "the judge was not asked"
    return j.unscored_reason(f"criteria.{name}") or j.unscored_reason("rubric") or "the judge did not score it"


def reference_agreement(scored: Sequence[ScoredLabel]) -> PointAgreement | None:
    """The person's point verdicts beside the judge's; None when no line gives any."""
    lines = [s for s in scored if s.label.reference_points]
    if not lines:
        return None
    pairs: list[PointPair] = []
    unscored: list[Skipped] = []
    items = 0
    for s in lines:
        j = s.judgement
        if j is None or j.reference_points is None:
            unscored.append(Skipped(s.label.id, s.label.where, _why_reference(s)))
            continue
        items += 1
        given: Mapping[str, str] = {point_key(p.point): p.verdict for p in j.reference_points}
        for p in s.label.reference_points:
            verdict = given.get(point_key(p.point), NOT_RETURNED)
            pairs.append(PointPair(s.label.id, s.label.where, p.point, p.verdict, verdict))
    return PointAgreement(tuple(pairs), items, tuple(unscored))


def _why_reference(s: ScoredLabel) -> str:
    j = s.judgement
    if j is None:
        return "the judge was not asked"
    reason = j.unscored_reason("reference")
    if reason:
        return reason
    if j.declined:
        return "the judge found that the answer declines, so it did not judge it against the reference"
    return "the judge did not judge the answer against the reference"


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def criterion_lines(c: CriterionAgreement) -> list[str]:
    """`criteria.NAME: agreement=... ci95=[...] n=...`, then its other figures, as the main labels print."""
    r = c.report
    head = f"criteria.{c.name}: "
    if r is None:
        none = f"{head}n=0: the judge scored it on none of the {c.labelled} labelled items"
        return [none, *_unscored_lines(c.unscored)]
    lines = [
        head + r.summary(),
        f"  kappa={_f(r.kappa)} weighted_kappa={_f(r.weighted_kappa)} mae={_f(r.mae)} "
        f"mean_error={_f(r.mean_error)} spearman={_f(r.spearman)} weighted_f1={_f(r.weighted_f1)}",
    ]
    if r.mean_error:
        lean = "lenient (scores above the human)" if r.mean_error > 0 else "strict (scores below the human)"
        lines.append(f"  On average the judge is {lean} by {abs(r.mean_error):.2f} points on this criterion.")
    return lines + _unscored_lines(c.unscored)


def _unscored_lines(skipped: Sequence[Skipped]) -> list[str]:
    return [f"  unscored: {u.id} ({u.where}): {u.reason}" for u in skipped]


def reference_lines(p: PointAgreement) -> list[str]:
    """`reference: agreement=... ci95=[...] n=... points (k items)`, then per verdict, and what was not returned."""
    ci = p.ci95
    if ci is None or p.agreement is None:
        return ["reference: n=0: no labelled point could be compared", *_unscored_lines(p.unscored)]
    lines = [
        f"reference: agreement={p.agreement:.3f} ci95=[{ci[0]:.3f}, {ci[1]:.3f}] n={p.n} points "
        f"({p.items} items) kappa={_f(p.kappa)}"
    ]
    parts = []
    for verdict, a in p.by_verdict.items():
        if a.n and a.ci95 is not None and a.agreement is not None:
            lo, hi = a.ci95
            parts.append(f"{verdict} {a.agreed} of {a.n} ({a.agreement:.1%}, ci95 [{lo:.1%}, {hi:.1%}])")
    lines.append("  the judge gave the human's verdict on: " + "; ".join(parts))
    for q in p.not_returned:
        said = f'the judge gave no verdict for "{q.point}" (human: {q.human})'
        lines.append(f"  not returned: {q.id} ({q.where}): {said}")
    return lines + _unscored_lines(p.unscored)
