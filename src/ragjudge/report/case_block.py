"""One case's result as the report keeps it: the case block, a conversation's turns, a repeated case's runs and
what the baseline said of it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from ragjudge.metrics.names import JUDGE_COST_USD
from ragjudge.report.block import Block, GivenKeysBlock
from ragjudge.report.judge_block import JudgeBlock
from ragjudge.report.trace_block import TraceBlock

Status = Literal["pass", "fail", "error"]
_RUN_USAGE = ("judge_calls", "judge_tokens", JUDGE_COST_USD, "judge_cache_hits")


class RunBlock(GivenKeysBlock):
    """One run of a case run more than once (`repeat`): enough to show it and count what it cost."""

    status: Status
    """The run's status, as a case's."""
    failed_conditions: list[str] = Field(default_factory=list)
    """The run's failed conditions, as a case's; empty for `pass`."""
    latency_ms: float | None = None
    """The run's round trip in ms, to 0.1 ms; null without a usable reply."""
    cost_usd: float | None = None
    """The endpoint's reported cost of the run in USD; null when it reported none."""
    judge_calls: int = 0
    """Calls made to the judge's model for the run."""
    judge_tokens: int = 0
    """Tokens the run's judge calls used."""
    judge_cost_usd: float = 0.0
    """What the run's judge calls cost in USD."""
    judge_cache_hits: int = 0
    """The run's judgements read from the judge cache."""

    @field_validator(*_RUN_USAGE, mode="before")
    @classmethod
    def _null_is_none_used(cls, value: object) -> object:
        # The reader of free-form blocks took a null figure as 0: a report that holds one still loads.
        return 0 if value is None else value


class CaseBaselineBlock(GivenKeysBlock):
    """What the baseline said of a case (`CaseBlock.baseline`, `comparison.regressions[].baseline`)."""

    status: Status
    """The case's (final) status in the baseline."""
    failed_conditions: list[str] = Field(default_factory=list)
    """The baseline's failed conditions for the case; empty when it passed."""
    flaky: bool = False
    """Present (`true`) only when the baseline passed the case only after repeats."""
    k_of_n: str | None = None
    """Present only when the baseline ran the case more than once: `1 of 3 passed`."""
    answer: str | None = None
    """Present only for a `regression`: the baseline's answer, to read beside this run's (null when the baseline
    got no reply)."""
    flipped_points: list[str] = Field(default_factory=list)
    """Present only for a `regression` whose reference points were judged both times and changed: each changed
    point as `"<point>": covered -> contradicted`."""
    tool_calls: list[str] | None = None
    """Present only for a `regression` whose tool calls differ from this run's: the baseline's tools, in the order
    called."""
    case_changed: bool = False
    """Present (`true`) only when the case itself differs from the baseline's (its question, reference or checks:
    `case_hash`), so it may pass or fail because of its case, not the endpoint."""


class TurnBlock(Block):
    """One turn of a conversation: what was asked, how it went, what the service replied."""

    turn: int
    """The turn's place in its conversation, from 1."""
    question: str
    """The question asked at this turn."""
    status: Literal["pass", "fail", "error", "not evaluated"]
    """As for a case; `not evaluated` when an earlier turn got no reply, so this one was never asked."""
    failed_conditions: list[str]
    """The turn's own conditions (unprefixed); for `not evaluated`, why it was not asked."""
    metrics: dict[str, float | None]
    """The turn's metrics by name, as a case's; empty when not evaluated."""
    judge: JudgeBlock
    """What the judge said of this turn's answer, as for a case; `judged: false` when it never saw it."""
    trace: TraceBlock
    """The service's reply to this turn, as read."""
    category: str | None = None
    """The turn's category: its own, else the conversation's."""
    should_answer: bool | None = None
    """Whether this turn is to be answered (its own `should_answer`, else what its category says)."""
    tools: dict[str, Any] | None = None
    """The turn's tool conditions as written (`called`, `not_called`, `args`, `order`); null when it has none."""
    tools_held: Literal["held", "failed", "unknown"] | None = None
    """Whether its tool conditions held; `unknown` when the reply exposed no tool calls; null without any."""
    expected: str | list[str] | None = None
    """The turn's reference answer as written; null when not given."""
    golden_context_ids: list[str] = Field(default_factory=list)
    """The passages retrieval should find for this turn; empty when it names none."""
    must_mention: list[str] = Field(default_factory=list)
    """Phrases this turn's answer must contain; empty when none."""
    must_not_mention: list[str] = Field(default_factory=list)
    """Phrases this turn's answer must not contain; empty when none."""


class JudgeRunsBlock(GivenKeysBlock):
    """How the judgements of a case's one reply went, when it was judged more than once (`judge.rejudge`)."""

    runs: int
    """Judgements of the reply: the first and each rejudge."""
    agreeing: int
    """Of those, how many gave the case the outcome it took (the majority's; a tie keeps the failure)."""
    flipped: list[str] = Field(default_factory=list)
    """The conditions some judgements failed the case on and others did not, as their groups name them
    (`judge.grounding < 3`)."""
    passed_on_rejudge: bool = False
    """True when the first judgement failed the case and most judgements passed it: the rejudge, not a repeat,
    passed it."""
    main_vote: bool = False
    """True when some of the `runs` are main's judgements of this very reply (the same answer from the same
    passages, the same case, judge and case rules): they cost no call."""
    votes: list[dict[str, Any]] = Field(default_factory=list)
    """Every vote, each judgement once: `{source: rubric | pairwise, sample, good, by: this run | main,
    conditions}` (docs/judges.md, "One judgement, one vote")."""
    undecided: bool = False
    """The votes reached neither margin within `judge.rejudge`, or decided this very reply otherwise than main's
    run: `judge_split`."""
    decided_by: str = ""
    """Which evidence decided, in words: `rubric 1 pass, 5 fail; pairwise worse in 4 of 4 orders`."""
    consistency: bool = False
    """One of the run's random consistency sample (`judge.consistency_sample`): its first two rubric judgements
    measure the judge's flip rate."""
    calls: int = 0
    """Calls this run's rejudges of the reply made to the judge's own model (included in the case's
    `judge.calls`); a rejudge's escalation calls are counted in `judge.escalation` instead."""
    tokens: int = 0
    """Their tokens (included in `judge.tokens`)."""
    cost_usd: float | None = 0.0
    """Their cost in USD (included in `judge.cost_usd`); null when the judge's model has no price."""


class PairwiseCaseBlock(GivenKeysBlock):
    """This run's answer against main's, judged pairwise in both orders (`judge.pairwise`)."""

    verdict: Literal["better", "worse", "tie"] | None
    """This run's answer `better`, `worse` or `tie` against main's; a winner that changed with the order is
    `tie`. Null when the judge could not say (`unscored` says why)."""
    consistent: bool
    """The first round's two orders gave the same verdict (what position consistency counts)."""
    reasons: list[str] = Field(default_factory=list)
    """The judge's one-line reason in each order (`main first: B: ...`, `this run first: A: ...`; a later round's
    `round 2, main first: ...`)."""
    calls: int = 0
    """The judge calls the comparison made (2 a round; cache hits not counted)."""
    tokens: int = 0
    """Their tokens, prompt and completion."""
    cost_usd: float | None = 0.0
    """Their cost in USD; null when the judge's model has no price."""
    orders: list[Literal["better", "worse", "tie"]] = Field(default_factory=list)
    """This run's verdict in each order asked, round by round; a round is asked again while the orders leave the
    verdict unsettled (docs/judges.md)."""
    unscored: str | None = None
    """Present when the judge's reply could not be used, with why."""


class CaseBlock(Block):
    """One case's result. A case run more than once shows its first passing run (a flaky pass) or its first run;
    `runs` lists them all."""

    id: str
    """The case's id, unique in the case set (by default `<file stem>-<n>`)."""
    category: str | None
    """The case's category as written in the case file; null when it has none."""
    status: Literal["pass", "fail", "error"]
    """`pass`, `fail` (a condition failed) or `error` (no usable reply, or a judgement a rule needs could not be
    made)."""
    failed_conditions: list[str]
    """One sentence per failed condition (`missing required detail: "..."`, `context_recall 0.50 < 1.00 (...)`);
    for `error`, the reasons it could not be evaluated come first. Empty for `pass`."""
    metrics: dict[str, float | None]
    """The case's metrics by name: `context_recall`, `context_precision`, `latency_ms` (ms), `cost_usd` (USD) and
    `faithfulness` always (null when there is no value, e.g. `context_precision` without golden ids), plus each
    `judge.<dimension>` score the judge gave (1-5). A case with no reply also has each case rule's metric, null.
    Empty for a case the gate refused to evaluate (`judge.require_calibration`)."""
    judge: JudgeBlock
    """What the judge said. A case the judge never saw (no usable reply) has the same keys, empty (faithfulness
    null, no claims, no scores, 0 calls), with `judged: false` and a note saying why (`not judged: no usable
    reply`); reports written before this have an empty object."""
    trace: TraceBlock
    """The endpoint's reply as read."""
    question: str = ""
    """The question asked; empty only in reports written before it was recorded."""
    difficulty: str | None = None
    """The case's difficulty (`easy`, `medium`, `hard`); null when not given."""
    should_answer: bool | None = None
    """None in reports written before it was recorded: read it as the category implies."""
    tools: dict[str, Any] | None = None
    """The case's tool conditions as written (`called`, `not_called`, `args`, `order`); null when it has none."""
    tools_held: Literal["held", "failed", "unknown"] | None = None
    """Whether its tool conditions held; `unknown` when the reply exposed no tool calls; null without any."""
    expected: str | list[str] | None = None
    """The case's reference answer as written: one text, or a list of its points; null when not given."""
    golden_context_ids: list[str] = Field(default_factory=list)
    """The ids of the passages retrieval should find; empty when the case names none."""
    must_mention: list[str] = Field(default_factory=list)
    """Phrases the answer must contain (case-insensitive); empty when none."""
    must_not_mention: list[str] = Field(default_factory=list)
    """Phrases the answer must not contain (case-insensitive); empty when none."""
    change: str | None = None
    """Against the baseline: regression, fixed, still_failing, still_passing, flaky, baseline_flaky,
    judge_split (failing now, passing on the baseline, but the judgements of its reply split: not a regression),
    pending_review (the case waits for a person: it gates nothing), new, removed or not_comparable; None without
    a baseline."""
    flaky: bool = False
    """Passed, but only after repeats."""
    runs: list[RunBlock] = Field(default_factory=list)
    """Every run, in order, when the case was run more than once; else empty."""
    k_of_n: str | None = None
    """`1 of 3 passed`, when the case was run more than once; else null."""
    baseline: CaseBaselineBlock | None = None
    """The baseline's result for this case; null without a baseline and for a case the baseline does not
    have."""
    file: str | None = None
    """The case file the case was read from, relative to the workspace when it lies under it (annotations land on
    it in "Files changed"); for recorded traces (`--traces`), the traces file. Null in reports written before it
    was recorded."""
    line: int | None = None
    """The line of that file the case's item starts on, from 1; null when unknown (a JSON Lines file's cases have
    theirs)."""
    review: str | None = None
    """The case file's `review`: `pending` when the case waits for a person (it ran and is reported, but no case,
    suite or regression rule counts it), `approved`; null when the file says nothing (the case gates)."""
    advisory_conditions: list[str] = Field(default_factory=list)
    """Conditions only an uncalibrated judge decided, reported and not blocking (`judge.uncalibrated: report`):
    a case that failed on nothing else is `pass`. Empty otherwise."""
    pairwise: PairwiseCaseBlock | None = None
    """With a baseline and a model judge: this run's answer against main's, when its text changed; null
    otherwise."""
    judge_runs: JudgeRunsBlock | None = None
    """Set when the case failed on a condition the judge decides and `judge.rejudge` judged its reply again;
    null otherwise."""
    judge_split: bool = False
    """True when the judge's votes on its reply left it undecided (`judge_runs.undecided`): the comment lists it
    as "judge undecided", and it never makes a regression on its own."""
    case_hash: str | None = None
    """The case as asked and checked (question, reference, checks; not where it was read from): 16 hex digits of
    its SHA-256. Two reports' cases with the same id and another hash were not the same case. Null in reports
    written before it was recorded."""
    turns: list[TurnBlock] = Field(default_factory=list)
    """A conversation's turns, every one in order (those after a turn with no reply `not evaluated`); empty for a
    case that is one question. A conversation's `question` is its first turn's, its `failed_conditions` the
    turns' prefixed `turn N: `, its `metrics` each metric's mean over its turns (contradictions summed), and its
    `trace` the last asked turn's reply."""

    def first_latency_ms(self) -> float | None:
        """The first run's latency: latency percentiles use first runs only. A conversation's: its turns' mean."""
        if self.turns:
            values = [t.trace.latency_ms for t in self.turns if t.trace.latency_ms is not None]
            return sum(values) / len(values) if values else None
        if self.runs:
            return self.runs[0].latency_ms
        return self.trace.latency_ms
