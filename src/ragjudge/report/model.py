"""The JSON report: `schema_version` 1. Field names here are the public contract."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from pydantic_core import PydanticSerializationError

from ragjudge import __version__, masking
from ragjudge.safetext import clean_data

_FIELD_SETS: dict[frozenset[str], set[str]] = {}


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")

    def model_post_init(self, context: Any, /) -> None:
        # pydantic gives each instance its own set of the field names it was given: about 2 KB for a case's
        # record, more than the record's values. Records given the same names share one set.
        names = self.__pydantic_fields_set__
        shared = _FIELD_SETS.setdefault(frozenset(names), names)
        object.__setattr__(self, "__pydantic_fields_set__", shared)

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic adds an assigned field's name to the instance's set: first it gets a set of its own.
        object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


class SuiteBlock(_Model):
    """The suite's metrics over the report's cases (a shard's report: that shard's cases only).

    Beside these fields, `run` and `merge` write the judge's usage over every run of every case: `judge_calls`,
    `judge_cache_hits`, `judge_tokens` and `judge_cost_usd` (USD, to 6 decimals), the `--bias-check` calls
    included; and with `--bias-check`, `position_bias` (the check's figures). A report without them still loads.
    """

    cases: int
    """Cases in the report: evaluated ones, passed, failed or errored."""
    passed: int
    """Cases whose (final) status is `pass`."""
    failed: int
    """Cases whose (final) status is `fail`."""
    errored: int
    """Cases whose (final) status is `error`: no usable reply, or a judgement a rule needs could not be made."""
    pass_rate: float | None
    """`passed / cases`, 0 to 1 (an error counts against it); null when there are no cases."""
    faithfulness: float | None
    """Mean of the per-case faithfulness (0 to 1) over judged answers that made claims; null when none did
    (refusals and answers without claims are left out, never counted as 0 or 1)."""
    rejection_accuracy: float | None
    """Share (0 to 1) of the cases that got a reply where out-of-scope was refused and in-scope answered; null
    when no case got a reply."""
    p50_latency_ms: float | None
    """Nearest-rank median of the first runs' latencies in ms (measured by ragjudge), to 0.1 ms, over cases
    whose first run got a reply; null when none did."""
    p95_latency_ms: float | None
    """Nearest-rank 95th percentile, as `p50_latency_ms`; rules compare the unrounded value."""
    judge_error_rate: float | None
    """Share (0 to 1) of the judged cases (a reply and a judgement) with at least one unscored judgement; null
    when no case was judged."""
    endpoint_error_rate: float | None
    """Share (0 to 1) of the cases with no usable reply; null when there are no cases."""
    cost_usd: float | None
    """Total cost in USD, to 6 decimals: the endpoint's reported costs and the judge's costs, over every run;
    null when neither reported any cost."""
    flaky_cases: int = 0
    """Cases that passed only after repeats (`repeat`)."""
    answer_correctness: float | None = None
    """Mean of the per-case answer correctness (0 to 1: covered points plus half the partial ones, over the
    reference's points) over the judged cases whose reference was judged; null when none was. With criteria,
    each criterion's mean over the cases it was scored for is written beside it as `criteria.NAME_mean`."""
    reference_contradictions: int | None = None
    """Reference points contradicted, summed over the cases whose reference was judged; null when none was."""
    p50_ttft_ms: float | None = None
    """Nearest-rank median of the streamed replies' time to the first token in ms (`trace.ttft_ms`), to 0.1 ms;
    null when no reply was streamed."""
    p95_ttft_ms: float | None = None
    """Nearest-rank 95th percentile, as `p50_ttft_ms`; rules compare the unrounded value."""


class RuleBlock(_Model):
    """One rule's outcome: the report's `rules` hold the case and suite rules, `comparison.rules` the regression
    rules."""

    scope: Literal["case", "suite", "regression"]
    """`case` (`gate.case`), `suite` (`gate.suite`) or `regression` (`gate.regression`, in `comparison.rules`)."""
    metric: str
    """The metric as written in the config: `context_recall`, `p95_latency_ms`, `newly_failing`, ..."""
    op: str
    """`>=`, `>`, `<=`, `<` or `==`."""
    threshold: float
    """The rule's number, in the metric's unit."""
    value: float | None
    """A case rule: how many cases failed it (a JSON number such as `2.0`). A suite rule: the metric's value
    (latencies to 0.1 ms), null when it has none. A regression rule: the count of `regression` cases for
    `newly_failing`, else the delta or ratio; null when not gated."""
    passed: bool | None
    """Whether the rule held. A suite rule whose metric has no value is false, never passed silently; null only
    for a regression rule not gated (its figure not comparable or not measured in both reports)."""
    reason: str
    """The outcome in a sentence, e.g. `p95_latency_ms 3012 > 3000`, or the failing cases' ids."""


class PassageBlock(_Model):
    """A retrieved passage as the report keeps it: the text trimmed to `PASSAGE_CHARS` (for the HTML report).

    When the run did not keep passage text (`run` lets it go once judged, and keeps it only with
    `--bias-check`), `title` and `text` are left out: the block is `{"id": ...}`. Present and empty, they mean the
    reply gave none.
    """

    id: str
    """The passage's id as read from the reply (empty when a mapped id was missing; `S1`, `S2`, ... when the
    reply carried no ids at all)."""
    title: str = ""
    """The passage's title; empty when the reply gave none; left out when the run did not keep passage text."""
    text: str = ""
    """The passage's text, trimmed to `PASSAGE_CHARS` characters; empty when the reply gave none; left out when
    the run did not keep passage text."""

    @model_serializer(mode="wrap")
    def _without_unkept_text(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("title", "text"):
            if name not in self.model_fields_set:
                data.pop(name, None)
        return data


PASSAGE_CHARS = 600


class TraceBlock(_Model):
    """What the endpoint replied for a case, as ragjudge read it. Every reply field is null (or empty) when there
    was no usable reply; `error` then says why."""

    answer: str | None
    """The answer text as read from the reply (may be empty for a decline); null with no usable reply."""
    refused: bool | None
    """Whether the reply was read as a refusal, however it was decided (`refused_by`); null with no usable
    reply."""
    confidence: str | None
    """The confidence the reply stated, lower-cased (`high`, `medium`, `low`, `none`, ...); null when it stated
    none."""
    retrieved_ids: list[str]
    """The retrieved passages' ids, in retrieval order (repeats kept); empty when none were retrieved."""
    latency_ms: float | None
    """The round trip of the successful attempt in ms, to 0.1 ms, measured by ragjudge (with `--traces`: the
    recorded latency); retries and waits are not in it. Null with no usable reply."""
    cost_usd: float | None
    """The call's cost in USD as the endpoint reported it; null when it reported none."""
    error: str | None
    """Why there is no usable reply (`endpoint error: ...`, or why the gate refused to evaluate); null when
    there is one."""
    attempts: int = 0
    """Calls made to the endpoint for this result (1 plus retries); 0 when none was made (recorded traces, a
    run that refused to evaluate, a turn whose request the earlier answers grew past max_request_bytes)."""
    retry_wait_ms: float = 0.0
    """Time waited between attempts in ms (backoff and Retry-After), to 0.1 ms; not part of `latency_ms`."""
    server_latency_ms: float | None = None
    """The latency the endpoint reported itself, in ms (never used by rules); null when it reported none."""
    passages: list[PassageBlock] = Field(default_factory=list)
    """Every retrieved passage, in retrieval order; empty with no usable reply."""
    refused_by: Literal["field", "empty", "pattern", "builtin", "judge"] | None = None
    """How the refusal was decided; null when the reply answered (or there was no reply)."""
    positional_ids: bool = False
    """True when the reply's passages had no ids and ragjudge numbered them S1, S2, ..."""
    warnings: list[str] = Field(default_factory=list)
    """What was odd about the reply without making it unusable (a key repeated in one JSON object)."""
    ttft_ms: float | None = None
    """A streamed reply's time to the first token in ms, to 0.1 ms: from sending the request to the first
    non-empty answer delta (or the first event carrying the answer); `latency_ms` runs to the stream's end.
    Null for a reply that was one JSON body."""
    conversation_id: str | None = None
    """What the service called the conversation in this reply (`endpoint.response.conversation_id`); null when
    it named none."""
    passages_unknown: bool = False
    """True when the reply carried no passages and `endpoint.response.retrieved` is not mapped: what the service
    retrieved is unknown, so retrieval metrics are null, faithfulness and grounding/citations unassessable."""
    protocol: str | None = None
    """A streamed reply: the protocol that read it (`openai-chat`, `openai-responses`, `ai-sdk`, `langserve`,
    `declared` for the team's own, `generic` when none was declared); null for one JSON body."""
    finish_reason: str | None = None
    """A streamed reply: the finish reason its protocol read (`stop`, `completed`, ...); null when none was sent."""
    reasoning: str | None = None
    """A streamed reply: the model's reasoning, kept apart from the answer and the TTFT (up to 20,000
    characters); null when the stream sent none."""


class TurnBlock(_Model):
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
    judge: dict[str, Any]
    """What the judge said of this turn's answer, as for a case; empty when not judged."""
    trace: TraceBlock
    """The service's reply to this turn, as read."""
    category: str | None = None
    """The turn's category: its own, else the conversation's."""
    should_answer: bool | None = None
    """Whether this turn is to be answered (its own `should_answer`, else what its category says)."""
    expected: str | list[str] | None = None
    """The turn's reference answer as written; null when not given."""
    golden_context_ids: list[str] = Field(default_factory=list)
    """The passages retrieval should find for this turn; empty when it names none."""
    must_mention: list[str] = Field(default_factory=list)
    """Phrases this turn's answer must contain; empty when none."""
    must_not_mention: list[str] = Field(default_factory=list)
    """Phrases this turn's answer must not contain; empty when none."""


class CaseBlock(_Model):
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
    judge: dict[str, Any]
    """What the judge said: {judge, faithfulness, claims: [{claim, supported, evidence_id, reason}], scores,
    reasoning, unassessable, unscored: [{judgement, reason}], notes, tokens, cost_usd, calls, cache_hits,
    escalated, spread}, with `declined` when the judge was asked whether the answer declined,
    `context_precision` and `evidence` for LLM context precision, and `answer_cut: {shown_chars, answer_chars}`
    when the answer was longer than `judge.max_answer_chars` and the judge saw only its first `shown_chars`. A
    case the judge never saw (no usable reply) has the same keys, empty (faithfulness null, no claims, no scores,
    0 calls), with `judged: false` and a note saying why (`not judged: no usable reply`); reports written before
    this have an empty object."""
    trace: TraceBlock
    """The endpoint's reply as read."""
    question: str = ""
    """The question asked; empty only in reports written before it was recorded."""
    difficulty: str | None = None
    """The case's difficulty (`easy`, `medium`, `hard`); null when not given."""
    should_answer: bool | None = None
    """None in reports written before it was recorded: read it as the category implies."""
    expected: str | list[str] | None = None
    """The case's reference answer as written: one text, or a list of its points; null when not given."""
    golden_context_ids: list[str] = Field(default_factory=list)
    """The ids of the passages retrieval should find; empty when the case names none."""
    must_mention: list[str] = Field(default_factory=list)
    """Phrases the answer must contain (case-insensitive); empty when none."""
    must_not_mention: list[str] = Field(default_factory=list)
    """Phrases the answer must not contain (case-insensitive); empty when none."""
    change: str | None = None
    """Against the baseline: regression, fixed, still_failing, still_passing, flaky, baseline_flaky, new,
    removed or not_comparable; None without a baseline."""
    flaky: bool = False
    """Passed, but only after repeats."""
    runs: list[dict[str, Any]] = Field(default_factory=list)
    """Every run, in order, when the case was run more than once: {status, failed_conditions, latency_ms (ms,
    null without a reply), cost_usd (the endpoint's, null when unreported), judge_calls, judge_tokens,
    judge_cost_usd, judge_cache_hits}; else empty."""
    k_of_n: str | None = None
    """`1 of 3 passed`, when the case was run more than once; else null."""
    baseline: dict[str, Any] | None = None
    """The baseline's result for this case: {status, failed_conditions}, with `flaky: true` when the baseline
    passed it only after repeats and `k_of_n` when the baseline repeated it; null without a baseline and for a
    case the baseline does not have."""
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
            value = self.runs[0].get("latency_ms")
            return float(value) if isinstance(value, int | float) else None
        return self.trace.latency_ms


class ShardBlock(_Model):
    """Which part of the case set a `run --shard i/n` evaluated, so `merge` can tell a missing shard."""

    index: int
    """Which shard this is, from 1 to `count`."""
    count: int
    """How many shards the case set was split into."""
    total_cases: int
    """Cases in the whole set, before sharding."""
    positions: list[int] = Field(default_factory=list)
    """Each case's place in the whole set, parallel to `cases`: `merge` restores the set's order."""


class DeltaBlock(_Model):
    """One metric now against the baseline, with its uncertainty."""

    metric: str
    """`pass_rate`, `faithfulness`, `judge.<dimension>` (deltas) or `p95_latency_ms`, `cost_usd` (ratios)."""
    base: float | None
    """The baseline's figure over the paired cases: the mean (pass rate, faithfulness, a judge dimension), the
    nearest-rank p95 of first-run latencies (ms) or the total endpoint cost of first runs (USD). Null when the
    figure is not comparable, except that a judge-based figure whose judge changed still shows each mean."""
    now: float | None
    """This report's figure, as `base`."""
    delta: float | None
    """now - base for deltas; now / base for ratios. Null when the figure is not comparable."""
    ci_low: float | None
    """Lower bound of the paired bootstrap interval at `confidence`; null when not comparable."""
    ci_high: float | None
    """Upper bound of that interval; null when not comparable."""
    p_value: float | None
    """Exact McNemar (pass rate) or Wilcoxon signed-rank (the means) p-value; null for ratios (no test gives one)
    and when not comparable."""
    significant: bool | None
    """Deltas: p-value below `gate.significance`; ratios: the interval excludes 1. Null when not comparable."""
    test: str
    """How the interval and p-value were made, in words; empty when not comparable."""
    comparable: bool
    """False when the figure cannot be compared: the judge changed (judge-based figures), no case has it in both
    reports, or a value is negative. Such a figure is shown, never gated."""
    reason: str
    """The sentence the comment shows; for a metric not comparable, why not."""
    kind: Literal["delta", "ratio"] = "delta"
    """`delta` (now - base) or `ratio` (now / base)."""
    cases: int = 0
    """Paired cases the figure is computed over."""


class ComparisonBlock(_Model):
    """The run against the baseline (`--baseline`)."""

    baseline: dict[str, Any]
    """{commit, ref, created_at, age_days, path}: the baseline's git commit and ref (null when it recorded none),
    when it was made (ISO 8601), its age in days (to 0.01) at this report's creation, null when undated or dated
    more than 5 minutes after this report, and the file it was read from."""
    judge_comparable: bool
    """Whether the judge fingerprints match; when not (or one report has none), judge-based deltas are shown,
    not gated."""
    judge_not_comparable_reason: str | None = None
    """Why the judges differ, in words (`the judge differs from the baseline's: model A -> B`); null when they
    match."""
    regressions: list[dict[str, Any]] = Field(default_factory=list)
    """The `regression` cases, in report order: {id, category, failed_conditions, k_of_n, baseline}."""
    new_cases: list[str] = Field(default_factory=list)
    """Ids of the cases only in this report, in report order."""
    removed_cases: list[str] = Field(default_factory=list)
    """Ids of the cases only in the baseline, in the baseline's order."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Cases per `change` value, every value present (0 included); `removed` counts `removed_cases`."""
    deltas: list[DeltaBlock] = Field(default_factory=list)
    """pass_rate, then faithfulness and each judge dimension (when scored or a rule reads it), p95_latency_ms,
    and cost_usd (when a case reports a cost or a rule reads it)."""
    rules: list[RuleBlock] = Field(default_factory=list)
    """The regression rules' outcomes (scope `regression`)."""
    notices: list[str] = Field(default_factory=list)
    """What limits the comparison, in sentences: an old, undated or future-dated baseline, a changed case set
    (other ids, or the same ids under another `case_set_hash`), different rules, a different judge."""
    confidence: float = 0.95
    """Two-sided level of every interval (1 - gate.significance)."""


class InterruptedBlock(_Model):
    """Present when a signal stopped the run: the report holds only the cases finished before it."""

    signal: str
    """What stopped the run: `SIGINT` or `SIGTERM`."""
    cases_done: int
    """Cases finished before the signal: the report's cases."""
    cases_total: int
    """Cases the run set out to evaluate (a shard's: that shard's)."""
    reason: str
    """`interrupted after N of M cases`; the same sentence opens `warnings`."""


class Report(_Model):
    """The whole report as written by `--report`."""

    schema_version: Literal[1] = 1
    """Always 1: names never change within it; fields may be added."""
    verdict: Literal["pass", "fail", "error"]
    """`error` when no case could be evaluated, more than `gate.max_error_rate` of the cases errored
    (`error_reason` says which error dominated), the judge failed inside ragjudge on a case, or the run was
    interrupted; else `fail` when a suite rule or a
    regression rule failed; else `pass`. A shard's verdict covers that shard only."""
    suite: SuiteBlock
    """The suite's metrics."""
    rules: list[RuleBlock]
    """Every case rule, then every suite rule, with its outcome (regression rules are in `comparison.rules`)."""
    cases: list[CaseBlock]
    """Every evaluated case, in case-set order (a merged report: the whole set's order)."""
    judge_info: dict[str, Any] = Field(default_factory=dict)
    """The judge: {judge (its name), provider, lexical, model, base_url_host (the host only, never the URL),
    combined (one call for faithfulness and rubric)}; for the offline judge model and base_url_host are null and
    combined false. A merged report has the first shard's."""
    warnings: list[str] = Field(default_factory=list)
    """Sentences about the run a person should read (no baseline, a mapping key that found nothing, an
    uncalibrated judge, ...); empty when there is nothing to say."""
    error_reason: str | None = None
    """Why the verdict is `error` because of the cases' errors: every case errored, or more than
    `gate.max_error_rate` of them did (`13 of 15 cases errored (87%), over gate.max_error_rate 0.5: the verdict is
    error; the error that dominated (12 of 13): endpoint error: ...`), or the judge failed inside ragjudge on one
    (`the judge failed inside ragjudge on 1 of 3 cases: the verdict is error; the first, case 'c1': ...`); the
    same sentence opens `warnings`. Null otherwise (an interrupted run says why in `interrupted`)."""
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "ragjudge", "version": __version__})
    """{name: `ragjudge`, version}: the ragjudge that wrote the report."""
    generated_at: str = ""
    """When the report was built: ISO 8601 in UTC, to the second; empty only in reports written without it."""
    shard: ShardBlock | None = None
    """Set by `run --shard i/n`; null otherwise, and in a merged report."""
    interrupted: InterruptedBlock | None = None
    """Set when SIGINT or SIGTERM stopped the run; null otherwise."""
    provenance: dict[str, Any] = Field(default_factory=dict)
    """ragjudge_version, created_at, git_commit, git_ref, case_set_hash, rules_hash, judge_fingerprint, endpoint
    (docs/regressions.md); empty in reports written before it was recorded. A merged report has the first
    shard's."""
    comparison: ComparisonBlock | None = None
    """The run against the baseline; null without a baseline, and for a shard or an interrupted run."""


def mark_interrupted(report: Report, signal: str, total: int) -> Report:
    """The verdict of a stopped run is `error`, whatever the finished cases say; the reason says how far it got."""
    done = len(report.cases)
    reason = f"interrupted after {done} of {total} cases"
    return report.model_copy(
        update={
            "verdict": "error",
            "warnings": [f"{reason} ({signal}): the report holds the finished cases only", *report.warnings],
            "interrupted": InterruptedBlock(signal=signal, cases_done=done, cases_total=total, reason=reason),
        }
    )


ReportT = TypeVar("ReportT", bound=BaseModel)


def redact(report: ReportT, secrets: Sequence[str] = ()) -> ReportT:
    """The report with every secret replaced by `***` in every text value (e.g. a token echoed in an answer).

    `secrets` are registered (`ragjudge.masking`) beside those already known.
    """
    masking.register(*secrets)
    if not masking.secrets():
        return report
    # Serialising is fast (pydantic-core); walking and re-validating every value is not. Only a report that
    # holds a secret (in any form the mask knows) pays for the walk.
    text = report.model_dump_json()
    if masking.mask(text) == text:
        return report
    return type(report).model_validate(masking.mask_data(report.model_dump()))


def write_report(report: BaseModel, path: Path) -> None:
    """Written whole or not at all: a reader never sees half a report; never a secret, even JSON-escaped.

    Text is made safe where it enters; a lone surrogate that came in some other way is replaced here rather
    than abort the write (JSON cannot carry it in UTF-8).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        _write_chunks(report, tmp)
    except PydanticSerializationError:
        _write_chunks(type(report).model_validate(clean_data(report.model_dump())), tmp)
    tmp.replace(path)


def _write_chunks(report: BaseModel, tmp: Path) -> None:
    with tmp.open("w", encoding="utf-8") as out:
        for chunk in json_chunks(report):
            out.write(masking.mask(chunk))


def json_chunks(model: BaseModel) -> Iterator[str]:
    """`model.model_dump_json(indent=2)` and a newline, a field or a list item at a time: a report of many
    cases is never one string in memory."""
    names = [*type(model).model_fields, *(model.model_extra or {})]
    yield "{\n"
    for i, name in enumerate(names):
        end = ",\n" if i < len(names) - 1 else "\n"
        value = getattr(model, name)
        if isinstance(value, list) and value and all(isinstance(item, BaseModel) for item in value):
            yield f"  {json.dumps(name)}: [\n"
            for j, item in enumerate(value):
                text = item.model_dump_json(indent=2).replace("\n", "\n    ")
                yield f"    {text}{',' if j < len(value) - 1 else ''}\n"
            yield f"  ]{end}"
        else:
            # '{\n  "name": value\n}' -> '  "name": value'
            yield model.model_dump_json(include={name}, indent=2)[2:-2] + end
    yield "}\n"
