"""The judge's score for each human label (`labels.py` reads them), on the labels' scale.

A label whose file gives no judge score is asked of the configured judge:

* binary labels: claim-level faithfulness of the answer (or of `claim`, when given) against
  the contexts; it counts as 1 when it meets the `faithfulness` case rule (default `>= 0.8`).
  A given judge score between 0 and 1 is read the same way, so 0/1 stay 0/1;
* ordinal labels: the evidence judge scores each context for the claim (or the answer) and the
  item's score is the best-supporting passage's 0-5 score (needs `judge.provider: openai`).

A line that labels `criteria` or `reference_points` is asked the call the gate makes, with the rubric:
for a binary label without a judge score that is the same one call that gives its faithfulness;
otherwise one more call.

A judgement that cannot be made (the judge failed, the answer makes no claim, a key quote was
not found) leaves the item unscored with the reason: it is reported, and left out of the
agreement figures rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragjudge.calibrate.labels import Label
from ragjudge.cases.case import Case
from ragjudge.config.model import Config
from ragjudge.endpoint.trace import Passage, Trace
from ragjudge.errors import ConfigError
from ragjudge.judge.interface import Judge, Judgement
from ragjudge.judge.openai_judge import OpenAIJudge
from ragjudge.metrics.names import FAITHFULNESS
from ragjudge.rules import Rule, parse_rules

if TYPE_CHECKING:
    from ragjudge.judge.evidence import EvidenceScorer


DEFAULT_FAITHFULNESS = Rule("case", FAITHFULNESS, ">=", 0.8)


def faithfulness_rule(config: Config) -> Rule:
    """The `faithfulness` case rule that turns a faithfulness fraction into 0/1 (default `>= 0.8`)."""
    for rule in parse_rules(config.case_rules(), "case", config.key("gate.case")):
        if rule.metric == FAITHFULNESS:
            return rule
    return DEFAULT_FAITHFULNESS


@dataclass(frozen=True)
class ScoredLabel:
    """A label with the judge's score on the human scale, or why there is none."""

    label: Label
    judge: float | None
    """On the human scale: 0/1 for binary labels, the 0..5 score for ordinal ones."""
    raw: float | None
    """What the judge gave before mapping (a faithfulness fraction, an evidence score)."""
    source: str
    """Where the score came from: `label` (the file's own), the faithfulness metric's name, or `evidence`."""
    unscored: str | None = None
    judgement: Judgement | None = None
    """The judgement of the call that carried the rubric, when the line labels criteria or reference points."""


def to_binary(value: float, rule: Rule) -> float:
    """0 and 1 stay as they are; a fraction in between is 1 when it meets the faithfulness rule."""
    if value in (0, 1):
        return float(value)
    return 1.0 if rule.holds(value) else 0.0


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
                reason = judgement.unscored_reason(FAITHFULNESS) or "the answer makes no factual claim to check"
                return ScoredLabel(label, None, None, FAITHFULNESS, reason, kept)
            return ScoredLabel(label, to_binary(value, rule), value, FAITHFULNESS, judgement=kept)
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
