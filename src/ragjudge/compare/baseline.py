"""The baseline report: finding it, reading it, and naming it (`main@abc1234`, its age)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ragjudge.errors import CaseFileError
from ragjudge.report.comparison_block import BaselineBlock
from ragjudge.report.figures import NO_BASELINE
from ragjudge.report.model import Report
from ragjudge.report.reading import load_report


@dataclass(frozen=True)
class Baseline:
    """A baseline report and where it was read from."""

    report: Report
    path: Path


def load_baseline(path: Path) -> Baseline | None:
    """The report at `path`; None when there is none (the first run on a repository has none).

    A file that is there but is not a ragjudge report is bad input (exit 2), never ignored.
    """
    if not path.exists():
        return None
    if path.is_dir():
        raise CaseFileError(
            f"{path}: the baseline is a folder, not a report", tip="pass the JSON file written by --report on main"
        )
    return Baseline(load_report(path), path)


def baseline_for(path: Path | None, regression_set: bool, warnings: list[str]) -> Baseline | None:
    """The baseline `run` and `merge` compare with (the flag, else `baseline.report`); a missing one is a
    warning, and the gate applies its absolute rules only."""
    if path is None:
        if regression_set:
            warnings.append(
                f"{NO_BASELINE}gate.regression is set but none was given (--baseline FILE or baseline.report); "
                "the gate applied the absolute rules only"
            )
        return None
    found = load_baseline(path)
    if found is None:
        warnings.append(f"{NO_BASELINE}{path} not found; the gate applied the absolute rules only")
    return found


def parse_time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


CLOCK_SKEW = timedelta(minutes=5)
"""A baseline dated up to this far after the report is a clock difference between runners (age 0); later than
that it is from the future: its age is unknown (null) and the comparison says so."""


def from_the_future(when: datetime | None, now: datetime) -> bool:
    return when is not None and when - now > CLOCK_SKEW


def created_at(report: Report) -> datetime | None:
    return parse_time(report.provenance.created_at) or parse_time(report.generated_at)


def identity(report: Report, path: Path | None, now: datetime) -> BaselineBlock:
    """The `comparison.baseline` block: which report, and how old."""
    when = created_at(report)
    age = None
    if when is not None and not from_the_future(when, now):
        age = max(0.0, round((now - when).total_seconds() / 86400, 2))
    return BaselineBlock(
        commit=report.provenance.git_commit,
        ref=report.provenance.git_ref,
        created_at=when.isoformat(timespec="seconds") if when is not None else None,
        age_days=age,
        path=str(path) if path is not None else None,
    )
