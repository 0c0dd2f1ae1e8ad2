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

A judgement that cannot be made (the judge failed, the answer makes no claim, a key quote was
not found) leaves the item unscored with the reason: it is reported, and left out of the
agreement figures rather than guessed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragjudge.cases import Case, read_items
from ragjudge.config.model import Config
from ragjudge.endpoint.trace import Passage, Trace
from ragjudge.errors import CaseFileError, ConfigError
from ragjudge.judge.interface import Judge
from ragjudge.judge.openai_judge import OpenAIJudge
from ragjudge.rules import Rule, parse_rules

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer

FIELDS_TIP = (
    'each line is {"id", "human": 0|1 or 0..5, "judge": number} (or `judgeScore`), '
    "or carries `question`, `answer`, `contexts` (and optionally `claim`) for the judge to score"
)
DEFAULT_FAITHFULNESS = Rule("case", "faithfulness", ">=", 0.8)


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
        if model.id in seen:
            raise CaseFileError(f"{where}: duplicate id {model.id!r} (first used at {seen[model.id]})")
        seen[model.id] = where
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
            )
        )
    if not labels:
        raise CaseFileError(f"{path}: no labels", tip=FIELDS_TIP)
    return labels


def is_binary(labels: Sequence[Label]) -> bool:
    """Binary when every human label is 0 or 1; otherwise ordinal (0..5)."""
    return all(label.human in (0, 1) for label in labels)


def faithfulness_rule(config: Config) -> Rule:
    """The `faithfulness` case rule that turns a faithfulness fraction into 0/1 (default `>= 0.8`)."""
    for rule in parse_rules(config.case_rules(), "case", "gate.case"):
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


def _case(label: Label) -> tuple[Case, Trace]:
    case = Case(
        id=label.id,
        question=label.question or "",
        expected=None,
        golden_context_ids=(),
        category=None,
        should_answer=True,
        must_mention=(),
        must_not_mention=(),
        source=None,
        difficulty=None,
        tags=(),
        origin=label.where,
    )
    passages = tuple(Passage(f"ctx-{i + 1}", f"context {i + 1}", text) for i, text in enumerate(label.contexts))
    answer = label.claim if label.claim else label.answer or ""
    trace = Trace(answer, False, None, passages, (), None, None, 0.0)
    return case, trace


def score_labels(
    labels: Sequence[Label],
    binary: bool,
    rule: Rule,
    judge: Callable[[], Judge],
    evidence: Callable[[], EvidenceScorer],
    log: Callable[[str, dict[str, Any]], None],
    concurrency: int,
) -> list[ScoredLabel]:
    """The judge's score for every label: from the file, or asked of the judge (concurrently)."""
    need = [label for label in labels if label.judge is None]
    if need and not binary:
        evidence()  # fails early (exit 2) when the configured judge cannot score claims
    elif need:
        judge()
    asked: dict[str, ScoredLabel] = {}

    def ask(label: Label) -> ScoredLabel:
        def write(fields: dict[str, Any]) -> None:
            log(label.id, fields)

        if binary:
            case, trace = _case(label)
            model = judge()
            if isinstance(model, OpenAIJudge):
                judgement = model.judge(case, trace, write, rubric=False)  # one call, not two
            else:
                judgement = model.judge(case, trace, write)
            value = judgement.faithfulness
            if value is None:
                reason = judgement.unscored_reason("faithfulness") or "the answer makes no factual claim to check"
                return ScoredLabel(label, None, None, "faithfulness", reason)
            return ScoredLabel(label, to_binary(value, rule), value, "faithfulness")
        claim = label.claim or label.answer or ""
        result = evidence().score(claim, list(label.contexts), write)
        failed = [s.unscored for s in result.scores if s.unscored]
        if failed:
            return ScoredLabel(label, None, None, "evidence", failed[0])
        best = float(max(s.score or 0 for s in result.scores))  # every score is set: none unscored
        return ScoredLabel(label, best, best, "evidence")

    if need:
        with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="calibrate") as pool:
            for label, scored in zip(need, pool.map(ask, need), strict=True):
                asked[label.id] = scored
    out = []
    for label in labels:
        if label.id in asked:
            out.append(asked[label.id])
        else:
            assert label.judge is not None
            value = label.judge
            out.append(ScoredLabel(label, to_binary(value, rule) if binary else value, value, "label"))
    return out


def require_openai(config: Config, what: str) -> None:
    if config.judge.provider != "openai":
        raise ConfigError(
            f"{what} needs the evidence judge, which needs judge.provider: openai (the config has "
            f"{config.judge.provider!r})",
            tip="point --config at a ragjudge.yml with judge.provider: openai, or give judge scores in the file",
        )
