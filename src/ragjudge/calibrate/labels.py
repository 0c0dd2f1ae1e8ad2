"""Human labels for calibration (JSONL), and the judge's score for each.

One item a line: `{"id", "human", "judge"}`; `judgeScore` (the camelCase spelling) stands for
`judge`. `human` is 0/1 (binary: every label is 0 or 1) or an integer score 0..5 (ordinal).
An item without a judge score must carry `question`, `answer` and `contexts` (a list of
passage texts), and optionally `claim`; ragjudge then asks the configured judge:

* binary labels: claim-level faithfulness of the answer (or of `claim`, when given) against
  the contexts; it counts as 1 when it meets the `faithfulness` case rule (default `>= 0.8`).
  A given judge score between 0 and 1 is read the same way, so 0/1 stay 0/1;
* ordinal labels: the evidence judge scores each context for the claim (or the answer) and the
  item's score is the best-supporting passage's 0-5 score (needs `judge.provider: openai`).

A line may also carry the person's reading of the answer in the judge's other terms: `criteria`
(`{NAME: 1..5}`, the team's criteria of `judge.criteria`) and `reference_points` (`[{"point",
"verdict"}]`, one verdict per point of the line's reference answer `expected`). It then needs
`question` and `answer`, and the configured judge is asked the call the gate makes, with the rubric:
for a binary label without a judge score that is the same one call that gives its faithfulness;
otherwise one more call. `calibrate.pairing` sets the judge's scores and verdicts beside the person's.

A judgement that cannot be made (the judge failed, the answer makes no claim, a key quote was
not found) leaves the item unscored with the reason: it is reported, and left out of the
agreement figures rather than guessed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from ragjudge.cases.case import Case
from ragjudge.cases.files import read_items
from ragjudge.cases.schema import check_expected
from ragjudge.config.model import Config, CriterionConfig, check_criterion_name
from ragjudge.endpoint.trace import Passage, Trace
from ragjudge.errors import CaseFileError, ConfigError
from ragjudge.judge.criteria import undefined
from ragjudge.judge.interface import Judge, Judgement
from ragjudge.judge.openai_judge import OpenAIJudge
from ragjudge.judge.reference import VERDICTS, Verdict, flat, point_key, split_reference
from ragjudge.rules import Rule, parse_rules

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer

FIELDS_TIP = (
    'each line is {"id", "human": 0|1 or 0..5, "judge": number} (or `judgeScore`), '
    "or carries `question`, `answer`, `contexts` (and optionally `claim`) for the judge to score; "
    "optionally `criteria`: {NAME: 1..5} and, with the reference answer `expected`, `reference_points`: "
    '[{"point", "verdict"}]'
)
DEFAULT_FAITHFULNESS = Rule("case", "faithfulness", ">=", 0.8)


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


def faithfulness_rule(config: Config) -> Rule:
    """The `faithfulness` case rule that turns a faithfulness fraction into 0/1 (default `>= 0.8`)."""
    for rule in parse_rules(config.case_rules(), "case", config.key("gate.case")):
        if rule.metric == "faithfulness":
            return rule
    return DEFAULT_FAITHFULNESS


Source = Literal["label", "faithfulness", "evidence"]


@dataclass(frozen=True)
class ScoredLabel:
    """A label with the judge's score on the human scale, or why there is none."""

    label: Label
    judge: float | None
    """On the human scale: 0/1 for binary labels, the 0..5 score for ordinal ones."""
    raw: float | None
    """What the judge gave before mapping (a faithfulness fraction, an evidence score)."""
    source: Source
    unscored: str | None = None
    judgement: Judgement | None = None
    """The judgement of the call that carried the rubric, when the line labels criteria or reference points."""


def to_binary(value: float, rule: Rule) -> float:
    """0 and 1 stay as they are; a fraction in between is 1 when it meets the faithfulness rule."""
    if value in (0, 1):
        return float(value)
    return 1.0 if rule.holds(value) else 0.0


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


def _case(label: Label, claim: bool) -> tuple[Case, Trace]:
    """The label as a case and its reply; `claim`: the claim, when given, stands in for the answer."""
    # A claim is no answer to hold against the reference or the criteria: those are asked of the answer.
    of_claim = claim and bool(label.claim)
    case = Case(
        id=label.id,
        question=label.question or "",
        expected=None if of_claim else label.expected,
        golden_context_ids=(),
        category=None,
        should_answer=True,
        must_mention=(),
        must_not_mention=(),
        source=None,
        difficulty=None,
        tags=(),
        origin=label.where,
        # Named, so each is asked whatever its scope: a label line has no category or tags to scope it by.
        criteria=() if of_claim else tuple(label.criteria),
    )
    passages = tuple(Passage(f"ctx-{i + 1}", f"context {i + 1}", text) for i, text in enumerate(label.contexts))
    answer = label.claim if of_claim and label.claim else label.answer or ""
    trace = Trace(answer, False, None, passages, (), None, None, 0.0)
    return case, trace


def _judged(model: Judge, label: Label, write: Callable[[dict[str, Any]], None], claim: bool) -> Judgement:
    """The gate's call on one label: with the rubric when the line labels criteria or points, else only what
    faithfulness needs (with `judge.combined` the gate's one call either way)."""
    case, trace = _case(label, claim)
    if isinstance(model, OpenAIJudge):
        return model.judge(case, trace, write, rubric=label.wants_rubric and not (claim and label.claim))
    return model.judge(case, trace, write)


def score_labels(
    labels: Sequence[Label],
    binary: bool,
    rule: Rule,
    judge: Callable[[], Judge],
    evidence: Callable[[], EvidenceScorer],
    log: Callable[[str, dict[str, Any]], None],
    concurrency: int,
) -> list[ScoredLabel]:
    """The judge's score for every label: from the file, or asked of the judge (concurrently).

    A line that labels criteria or reference points also gets the judgement of the call carrying the rubric:
    the call that gave its faithfulness when it could (a binary label without a claim), else one call more.
    """
    need = [label for label in labels if label.judge is None or label.wants_rubric]
    if any(label.judge is None for label in labels) and not binary:
        evidence()  # fails early (exit 2) when the configured judge cannot score claims
    if any((label.judge is None and binary) or label.wants_rubric for label in labels):
        judge()
    asked: dict[str, ScoredLabel] = {}

    def main(label: Label, write: Callable[[dict[str, Any]], None]) -> ScoredLabel:
        if label.judge is not None:
            given = label.judge
            return ScoredLabel(label, to_binary(given, rule) if binary else given, given, "label")
        if binary:
            judgement = _judged(judge(), label, write, claim=True)
            kept = judgement if label.wants_rubric and not label.claim else None
            value = judgement.faithfulness
            if value is None:
                reason = judgement.unscored_reason("faithfulness") or "the answer makes no factual claim to check"
                return ScoredLabel(label, None, None, "faithfulness", reason, kept)
            return ScoredLabel(label, to_binary(value, rule), value, "faithfulness", judgement=kept)
        claim = label.claim or label.answer or ""
        result = evidence().score(claim, list(label.contexts), write)
        failed = [s.unscored for s in result.scores if s.unscored]
        if failed:
            return ScoredLabel(label, None, None, "evidence", failed[0])
        best = float(max(s.score or 0 for s in result.scores))  # every score is set: none unscored
        return ScoredLabel(label, best, best, "evidence")

    def ask(label: Label) -> ScoredLabel:
        def write(fields: dict[str, Any]) -> None:
            log(label.id, fields)

        scored = main(label, write)
        if label.wants_rubric and scored.judgement is None:
            scored = replace(scored, judgement=_judged(judge(), label, write, claim=False))
        return scored

    if need:
        with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="calibrate") as pool:
            for label, scored in zip(need, pool.map(ask, need), strict=True):
                asked[label.id] = scored
    return [asked[label.id] if label.id in asked else main(label, _no_log) for label in labels]


def _no_log(fields: dict[str, Any]) -> None:
    """A label whose judge score the file gives makes no call, so nothing is logged."""


def require_openai(config: Config, what: str) -> None:
    if config.judge.provider != "openai":
        raise ConfigError(
            f"{what} needs the evidence judge, which needs judge.provider: openai (the config has "
            f"{config.judge.provider!r})",
            tip="point --config at a ragjudge.yml with judge.provider: openai, or give judge scores in the file",
        )
