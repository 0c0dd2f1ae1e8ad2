"""The judge interface and the values judges return."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.reference import ReferencePoint
from ragjudge.metrics.families import JUDGE_DIMENSIONS
from ragjudge.metrics.names import COST_USD, FAITHFULNESS
from ragjudge.transport import urls

RUBRIC_DIMENSIONS = JUDGE_DIMENSIONS
NEGATIVE_DIMENSIONS = ("grounding", "calibration")
EVIDENCE_DIMENSIONS = ("grounding", "citations")
NO_SOURCES_NOTE = (
    "no sources were recorded (the service exposes no passages): faithfulness, grounding and citations not assessed"
)
"""The judgement's note for a reply whose passages are unknown (`Trace.passages_unknown`)."""
JUDGE_BUG = "judge failed inside ragjudge"
"""How the reason of a judgement that failed on an unexpected exception opens (a bug in ragjudge, not the
service's or the model's doing): its case is `error`, and the verdict `error` (exit 3), whatever the rules."""


class Threshold(Protocol):
    """What a judge reads of a gate rule: the metric and its threshold, to tell a borderline score.

    A protocol, so the judge needs nothing of `ragjudge.rules` (which names the judge's dimensions).
    """

    @property
    def metric(self) -> str: ...

    @property
    def threshold(self) -> float: ...


@dataclass(frozen=True)
class Claim:
    """One factual claim of an answer and whether a passage supports it."""

    claim: str
    supported: bool
    evidence_id: str | None
    reason: str


@dataclass(frozen=True)
class Unscored:
    """A judgement that could not be made, and why. Never a number."""

    judgement: str
    """`faithfulness`, `rubric`, `judge.<dimension>`, `reference` or `criteria.<name>`."""
    reason: str


@dataclass(frozen=True)
class AnswerCut:
    """An answer longer than `judge.max_answer_chars`: the judge was shown only its start."""

    shown_chars: int
    """The characters the judge was shown: the answer's first `judge.max_answer_chars`."""
    answer_chars: int
    """The answer's whole length in characters."""


@dataclass(frozen=True)
class Judgement:
    """Everything a judge said about one answer."""

    judge: str
    """Who judged: `offline-lexical`, or the model name."""
    faithfulness: float | None = None
    """supported/total; None when not applicable or unscored (see `unscored`)."""
    claims: tuple[Claim, ...] = ()
    scores: Mapping[str, float] = field(default_factory=dict)
    reasoning: Mapping[str, str] = field(default_factory=dict)
    unassessable: tuple[str, ...] = ()
    """Dimensions that cannot honestly be scored (e.g. grounding with no passage text)."""
    unscored: tuple[Unscored, ...] = ()
    notes: tuple[str, ...] = ()
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    cache_hits: int = 0
    escalated: tuple[str, ...] = ()
    escalation: tuple[int, int, float] = (0, 0, 0.0)
    """Of `calls`, `tokens` and `cost_usd`: those of `judge.escalate.model`."""
    spread: Mapping[str, float] = field(default_factory=dict)
    """Max minus min across samples, per dimension, when samples > 1."""
    declined: bool | None = None
    """The judge's word on whether the answer declined (asked only with `endpoint.refusal.judge`)."""
    reference_points: tuple[ReferencePoint, ...] | None = None
    """The reference answer's points and their verdicts; None when the reference was not judged."""
    criteria: Mapping[str, float] = field(default_factory=dict)
    """The team's criteria, 1 to 5, by name."""
    criteria_reasoning: Mapping[str, str] = field(default_factory=dict)
    internal_error: str | None = None
    """`judge failed inside ragjudge: TYPE: MESSAGE` when the judge raised an unexpected exception (see
    `JUDGE_BUG`); None when it judged."""
    answer_cut: AnswerCut | None = None
    """Set when the answer was cut for the judge (`judge.max_answer_chars`); None when it was shown whole."""

    def unscored_reason(self, judgement: str) -> str | None:
        for item in self.unscored:
            if item.judgement == judgement:
                return item.reason
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            FAITHFULNESS: self.faithfulness,
            "claims": [
                {"claim": c.claim, "supported": c.supported, "evidence_id": c.evidence_id, "reason": c.reason}
                for c in self.claims
            ],
            "scores": dict(self.scores),
            "reasoning": dict(self.reasoning),
            "unassessable": list(self.unassessable),
            "unscored": [{"judgement": u.judgement, "reason": u.reason} for u in self.unscored],
            "notes": list(self.notes),
            "tokens": self.tokens,
            COST_USD: self.cost_usd,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "escalated": list(self.escalated),
            **(
                {
                    "escalation": {
                        "calls": self.escalation[0],
                        "tokens": self.escalation[1],
                        COST_USD: round(self.escalation[2], 6),
                    }
                }
                if self.escalation[0]
                else {}
            ),
            "spread": dict(self.spread),
            **({"declined": self.declined} if self.declined is not None else {}),
            **(
                {"reference_points": [p.as_dict() for p in self.reference_points]}
                if self.reference_points is not None
                else {}
            ),
            **(
                {
                    "answer_cut": {
                        "shown_chars": self.answer_cut.shown_chars,
                        "answer_chars": self.answer_cut.answer_chars,
                    }
                }
                if self.answer_cut is not None
                else {}
            ),
            **(
                {
                    "criteria": {
                        name: {"score": score, "reason": self.criteria_reasoning.get(name, "")}
                        for name, score in self.criteria.items()
                    }
                }
                if self.criteria
                else {}
            ),
        }


def host_of(base_url: str | None) -> str:
    """The host a judge is called at, for logs and fingerprints (never the full URL: it may hold a key).

    The host is read by `urls.host`, like every URL shown; what is the judge's own is the SDK's default
    host when `base_url` is unset, and the placeholder when no host can be read.
    """
    if not base_url:
        return "api.openai.com"
    return urls.host(base_url) or "(unparsable base_url)"


LogFn = Callable[[dict[str, Any]], None]


class Judge(Protocol):
    """Scores one answer. Implementations must be safe to call from several threads."""

    name: str
    lexical: bool
    """True when the judge only compares words (said plainly in the report)."""

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Judgement: ...

    def warm_up(self) -> None:
        """Get ready for the first judgement (import a client library, open a client); safe to skip.

        The runner calls it on a thread of its own while the first endpoint calls are in flight, so that
        the first judgement does not start with that work.
        """
