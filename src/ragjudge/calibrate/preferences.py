"""The pairwise judge against people's preferences (`ragjudge calibrate --pairwise FILE`).

One item a line: `{"id", "question", "answer_a", "answer_b", "preferred": "A" | "B" | "tie"}`, optionally
`expected` (the reference: a text or a list of points) and `contexts_a` / `contexts_b` (each answer's passages).
The pairwise judge the gate uses is asked about each pair in both orders, as in a run: its verdict for answer B
(`better`, `worse`, `tie`) agrees with the person when it matches `preferred` (B, A, tie). The report gives the
agreement with its Wilson 95% interval and the judge's position consistency (pairs whose verdict did not change
with the order); `--fail-under pairwise.agreement=P` and `pairwise.position_consistency=P` are floors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragjudge.calibrate.verdict import Bar, BarResult
from ragjudge.cases.files import read_items
from ragjudge.config.model import Config
from ragjudge.errors import CaseFileError, ConfigError
from ragjudge.judge.interface import LogFn
from ragjudge.judge.pairwise import PairwiseJudge, Side
from ragjudge.stats.intervals import wilson_interval

_AGREES = {"better": "B", "worse": "A", "tie": "tie"}
"""The judge's verdict for answer B, as the preference it stands for."""


class PairLabel(BaseModel):
    """One person's preference between two answers to a question."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer_a: str = Field(min_length=1)
    answer_b: str = Field(min_length=1)
    preferred: Literal["A", "B", "tie"]
    expected: str | list[str] | None = None
    contexts_a: list[str] = Field(default_factory=list)
    contexts_b: list[str] = Field(default_factory=list)


def read_preferences(path: Path, max_bytes: int) -> list[PairLabel]:
    """Every line of `path`, checked; a bad one is exit 2 naming the file and the line."""
    labels = []
    for item in read_items(path, max_bytes):
        where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
        try:
            labels.append(PairLabel.model_validate(item.data))
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(the line)"
            raise CaseFileError(
                f"{where}: {loc}: {first['msg']}",
                tip='each line is {"id", "question", "answer_a", "answer_b", "preferred": "A" | "B" | "tie"}',
            ) from None
    if not labels:
        raise CaseFileError(f"{path}: no preference in the file", tip="add at least one line")
    return labels


@dataclass(frozen=True)
class PairwiseAgreement:
    n: int
    """Pairs the judge gave a verdict on."""
    agreed: int
    consistent: int
    unscored: int

    def as_dict(self) -> dict[str, Any]:
        ci = wilson_interval(self.agreed, self.n, 0.95)
        return {
            "n": self.n,
            "agreed": self.agreed,
            "agreement": self.agreed / self.n if self.n else None,
            "ci95": [round(ci.lo, 4), round(ci.hi, 4)] if self.n else None,
            "position_consistency": self.consistent / self.n if self.n else None,
            "unscored": self.unscored,
        }


def measure(labels: Sequence[PairLabel], judge: PairwiseJudge, log: LogFn) -> PairwiseAgreement:
    agreed = consistent = unscored = 0
    for label in labels:
        points = [label.expected] if isinstance(label.expected, str) else list(label.expected or [])
        a, b = Side(label.answer_a, tuple(label.contexts_a)), Side(label.answer_b, tuple(label.contexts_b))
        verdict = judge.compare(label.question, points, a, b, log)
        if verdict.verdict is None:
            unscored += 1
            continue
        agreed += _AGREES[verdict.verdict] == label.preferred
        consistent += verdict.consistent
    return PairwiseAgreement(len(labels) - unscored, agreed, consistent, unscored)


def bar_results(result: PairwiseAgreement, bars: Sequence[Bar]) -> list[BarResult]:
    figures = result.as_dict()
    out = []
    for bar in (b for b in bars if b.scope == "pairwise"):
        value = figures[bar.metric.removeprefix("pairwise.")]
        passed = value is not None and value >= bar.threshold
        shown = "n/a" if value is None else f"{value:.3f}"
        out.append(
            BarResult(
                bar.metric,
                bar.threshold,
                value,
                passed,
                f"{bar.metric} {shown} {'>=' if passed else '<'} {bar.threshold:g}",
            )
        )
    return out


def calibrate_pairwise(
    path: Path, config: Config, bars: Sequence[Bar], log: LogFn, report: dict[str, Any]
) -> list[BarResult]:
    """The pairwise judge against people's preferences: the report's `pairwise` block, printed; its bars."""
    labels = read_preferences(path, config.max_case_file_bytes)
    if config.judge.provider != "openai":
        raise ConfigError(
            f"--pairwise: judging pairs needs judge.provider: openai (the config has {config.judge.provider!r})",
            tip="point --config at a ragjudge.yml with judge.provider: openai",
        )
    result = measure(labels, PairwiseJudge(config.judge), log)
    results = bar_results(result, bars)
    report["pairwise"] = {**result.as_dict(), "bars": [r.as_dict() for r in results]}
    figures = report["pairwise"]
    agreement = "n/a" if figures["agreement"] is None else f"{figures['agreement']:.3f}"
    consistency = "n/a" if figures["position_consistency"] is None else f"{figures['position_consistency']:.3f}"
    print(
        f"pairwise: agrees with people on {result.agreed} of {result.n} pairs ({agreement}), position consistency "
        f"{consistency}" + (f"; {result.unscored} pair(s) unscored" if result.unscored else "")
    )
    return results
