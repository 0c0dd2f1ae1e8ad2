"""Human labels for calibration (JSONL), read and checked; `judging.py` gives the judge's score for each.

One item a line: `{"id", "human", "judge"}`; `judgeScore` (the camelCase spelling) stands for
`judge`. `human` is 0/1 (binary: every label is 0 or 1) or an integer score 0..5 (ordinal).
An item without a judge score must carry `question`, `answer` and `contexts` (a list of
passage texts), and optionally `claim`, for the configured judge to be asked.

A line may also carry the person's reading of the answer in the judge's other terms: `criteria`
(`{NAME: 1..5}`, the team's criteria of `judge.criteria`) and `reference_points` (`[{"point",
"verdict"}]`, one verdict per point of the line's reference answer `expected`). It then needs
`question` and `answer`. `calibrate.pairing` sets the judge's scores and verdicts beside the person's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from ragjudge.cases.files import read_items
from ragjudge.cases.schema import check_expected
from ragjudge.config.judge_config import CriterionConfig, check_criterion_name
from ragjudge.errors import CaseFileError
from ragjudge.judge.criteria import undefined
from ragjudge.judge.reference import VERDICTS, Verdict, flat, point_key, split_reference

FIELDS_TIP = (
    'each line is {"id", "human": 0|1 or 0..5, "judge": number} (or `judgeScore`), '
    "or carries `question`, `answer`, `contexts` (and optionally `claim`) for the judge to score; "
    "optionally `criteria`: {NAME: 1..5} and, with the reference answer `expected`, `reference_points`: "
    '[{"point", "verdict"}]'
)


def _criterion_score(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise ValueError(f"must be an integer score from 1 to 5 (got {value!r})")
    return value


class PointModel(BaseModel):
    """One point of the reference answer and the person's verdict on it, as written."""

    model_config = ConfigDict(extra="forbid")

    point: str
    verdict: Verdict

    @field_validator("point")
    @classmethod
    def _point(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> Any:
        if value not in VERDICTS:
            raise ValueError(f"must be one of {', '.join(VERDICTS)} (got {value!r})")
        return value


class LabelModel(BaseModel):
    """One line of a labels file, as written."""

    model_config = ConfigDict(extra="forbid")

    id: str
    human: int
    judge: float | None = None
    judge_score: float | None = Field(None, alias="judgeScore")
    """The camelCase spelling of `judge` (`judgeScore`), accepted from label files written that way."""
    question: str | None = None
    answer: str | None = None
    contexts: list[str] | None = None
    claim: str | None = None
    expected: str | list[str] | None = None
    """The reference answer, as a case's `expected`: its points as a list, or one text."""
    criteria: dict[str, Annotated[int, BeforeValidator(_criterion_score)]] | None = None
    """The person's 1-5 score for each of the team's criteria named."""
    reference_points: list[PointModel] | None = None
    """The person's verdict on points of `expected`."""

    @field_validator("expected")
    @classmethod
    def _reference(cls, value: str | list[str] | None) -> str | list[str] | None:
        return check_expected(value)  # as in a case file: the judge sees it as the gate would show it

    @field_validator("criteria")
    @classmethod
    def _criteria(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("an empty mapping labels no criterion: leave `criteria` out, or score one")
        for name in value:
            problem = check_criterion_name(name)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("reference_points")
    @classmethod
    def _points(cls, value: list[PointModel] | None) -> list[PointModel] | None:
        if value is not None and not value:
            raise ValueError("an empty list labels no point: leave `reference_points` out, or give a verdict")
        return value

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, str) and not value.strip():
            raise ValueError("id is empty")
        return value

    @field_validator("human", mode="before")
    @classmethod
    def _human(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 5:
            raise ValueError(f"must be 0 or 1, or an integer score from 0 to 5 (got {value!r})")
        return value

    @field_validator("judge", "judge_score", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"must be a number (got {value!r})")
        return value


@dataclass(frozen=True)
class PointLabel:
    """A person's verdict on one point of the reference answer."""

    point: str
    """Whitespace folded, as the judge's points are."""
    verdict: Verdict


@dataclass(frozen=True)
class Label:
    """One human label, with the judge's score when the file gave it."""

    id: str
    human: int
    judge: float | None
    question: str | None
    answer: str | None
    contexts: tuple[str, ...]
    claim: str | None
    where: str
    """`file:line`, for messages."""
    expected: str | tuple[str, ...] | None = None
    """The reference answer: its points as listed, or one text."""
    criteria: Mapping[str, int] = field(default_factory=dict)
    """The person's 1-5 score per criterion, by name."""
    reference_points: tuple[PointLabel, ...] = ()
    """The person's verdict per point of `expected`."""

    @property
    def wants_rubric(self) -> bool:
        """The line labels what only the call carrying the rubric returns: criteria scores, point verdicts."""
        return bool(self.criteria or self.reference_points)


def _problem(err: Any) -> str:
    field = ".".join(str(p) for p in err["loc"]) or "(item)"
    if err["type"] == "extra_forbidden":
        return f"unknown field {field!r}"
    if err["type"] == "missing":
        return f"field {field!r}: required field is missing"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"field {field!r}: {msg}"


def load_labels(path: Path) -> list[Label]:
    """Read and validate a labels file; every error names `file:line` and the field."""
    items = read_items(path)
    labels: list[Label] = []
    seen: dict[str, str] = {}
    for item in items:
        where = f"{path}:{item.line}" if item.line else f"{path}#{item.index + 1}"
        data = item.data
        if not isinstance(data, dict):
            raise CaseFileError(f"{where}: expected a JSON object, found {type(data).__name__}", tip=FIELDS_TIP)
        try:
            model = LabelModel.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(_problem(e) for e in exc.errors(include_input=False, include_url=False))
            raise CaseFileError(f"{where}: {problems}", tip=FIELDS_TIP) from None
        if model.judge is not None and model.judge_score is not None:
            raise CaseFileError(f"{where}: give `judge` or `judgeScore`, not both")
        judge = model.judge if model.judge is not None else model.judge_score
        if judge is None:
            missing = [name for name in ("question", "answer", "contexts") if not getattr(model, name)]
            if missing:
                raise CaseFileError(
                    f"{where}: label {model.id!r} has no judge score (`judge` or `judgeScore`) and no "
                    f"{', '.join(missing)} to ask the judge with",
                    tip=FIELDS_TIP,
                )
        if model.criteria or model.reference_points:
            _check_judged_labels(model, where)
        if model.id in seen:
            raise CaseFileError(f"{where}: duplicate id {model.id!r} (first used at {seen[model.id]})")
        seen[model.id] = where
        expected = tuple(model.expected) if isinstance(model.expected, list) else model.expected
        labels.append(
            Label(
                id=model.id,
                human=model.human,
                judge=judge,
                question=model.question,
                answer=model.answer,
                contexts=tuple(model.contexts or ()),
                claim=model.claim,
                where=where,
                expected=expected,
                criteria=dict(model.criteria or {}),
                reference_points=tuple(PointLabel(flat(p.point), p.verdict) for p in model.reference_points or ()),
            )
        )
    if not labels:
        raise CaseFileError(f"{path}: no labels", tip=FIELDS_TIP)
    return labels


def _check_judged_labels(model: LabelModel, where: str) -> None:
    """Criteria scores and point verdicts need what the judge reads, and points that are the reference's own."""
    what = " and ".join(n for n in ("criteria", "reference_points") if getattr(model, n))
    missing = [name for name in ("question", "answer") if not (getattr(model, name) or "").strip()]
    if missing:
        raise CaseFileError(
            f"{where}: label {model.id!r} has {what} labels but no {', '.join(missing)} for the judge to read",
            tip=FIELDS_TIP,
        )
    if not model.reference_points:
        return
    reference = model.expected
    if reference is None or (isinstance(reference, str) and not reference.strip()):
        raise CaseFileError(
            f"{where}: field 'expected': required with reference_points (the reference answer the points are of)",
            tip=FIELDS_TIP,
        )
    # The judge is given the points ragjudge splits a text into, so those are the points a person labels.
    points = split_reference(reference)
    listed = {point_key(p) for p in points}
    seen: dict[str, int] = {}
    for i, p in enumerate(model.reference_points):
        field_name = f"reference_points.{i}.point"
        if point_key(p.point) not in listed and isinstance(reference, list):
            raise CaseFileError(
                f"{where}: field {field_name!r}: {p.point!r} is not one of the points listed in `expected`"
            )
        if point_key(p.point) not in listed:
            raise CaseFileError(
                f"{where}: field {field_name!r}: {p.point!r} is not one of the points of `expected` as ragjudge "
                f"splits it ({', '.join(repr(q) for q in points)})",
                tip="a text reference is split at 。；！？, semicolons, newlines, and . ! ? before a space or its "
                "end; label each point as split (spaces aside), or write `expected` as a list of points",
            )
        key = point_key(p.point)
        if key in seen:
            raise CaseFileError(
                f"{where}: field {field_name!r}: {p.point!r} is given twice (also reference_points.{seen[key]})"
            )
        seen[key] = i


def check_label_criteria(labels: Sequence[Label], defined: Mapping[str, CriterionConfig]) -> None:
    """Exit 2 naming the line and the field for a criterion scored but defined nowhere in judge.criteria."""
    for label in labels:
        for name in label.criteria:
            if name not in defined:
                raise CaseFileError(
                    f"{label.where}: field 'criteria.{name}': {undefined(name, defined)}",
                    tip="define it under judge.criteria in the ragjudge.yml given as --config: the judge is asked "
                    "the criteria as the config words them, and the fingerprint holds that wording",
                )


def is_binary(labels: Sequence[Label]) -> bool:
    """Binary when every human label is 0 or 1; otherwise ordinal (0..5)."""
    return all(label.human in (0, 1) for label in labels)


def check_given_scores(labels: Sequence[Label], binary: bool) -> None:
    """Judge scores in the file must fit the label scale: 0..1 when the human labels are binary."""
    if not binary:
        return
    for label in labels:
        if label.judge is not None and not 0 <= label.judge <= 1:
            raise CaseFileError(
                f"{label.where}: label {label.id!r}: judge score {label.judge:g} is not between 0 and 1, "
                "but the human labels are binary (0/1)",
                tip="give binary judge verdicts (0/1) or a faithfulness fraction, or ordinal human scores",
            )
