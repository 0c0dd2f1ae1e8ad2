"""The JSON report: `schema_version` 1. Field names here are the public contract."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragjudge import __version__, masking
from ragjudge.errors import CaseFileError

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
    cases: int
    passed: int
    failed: int
    errored: int
    pass_rate: float | None
    faithfulness: float | None
    rejection_accuracy: float | None
    p50_latency_ms: float | None
    p95_latency_ms: float | None
    judge_error_rate: float | None
    endpoint_error_rate: float | None
    cost_usd: float | None
    flaky_cases: int = 0
    """Cases that passed only after repeats (`repeat`)."""


class RuleBlock(_Model):
    scope: Literal["case", "suite", "regression"]
    metric: str
    op: str
    threshold: float
    value: float | None
    passed: bool | None
    reason: str


class PassageBlock(_Model):
    """A retrieved passage as the report keeps it: the text trimmed to `PASSAGE_CHARS` (for the HTML report)."""

    id: str
    title: str = ""
    text: str = ""


PASSAGE_CHARS = 600


class TraceBlock(_Model):
    answer: str | None
    refused: bool | None
    confidence: str | None
    retrieved_ids: list[str]
    latency_ms: float | None
    cost_usd: float | None
    error: str | None
    attempts: int = 0
    retry_wait_ms: float = 0.0
    server_latency_ms: float | None = None
    passages: list[PassageBlock] = Field(default_factory=list)
    refused_by: Literal["field", "empty", "pattern", "builtin", "judge"] | None = None
    """How the refusal was decided; null when the reply answered (or there was no reply)."""
    positional_ids: bool = False
    """True when the reply's passages had no ids and ragjudge numbered them S1, S2, ..."""
    warnings: list[str] = Field(default_factory=list)


class CaseBlock(_Model):
    id: str
    category: str | None
    status: Literal["pass", "fail", "error"]
    failed_conditions: list[str]
    metrics: dict[str, float | None]
    judge: dict[str, Any]
    trace: TraceBlock
    question: str = ""
    difficulty: str | None = None
    should_answer: bool | None = None
    """None in reports written before it was recorded: read it as the category implies."""
    expected: str | None = None
    golden_context_ids: list[str] = Field(default_factory=list)
    must_mention: list[str] = Field(default_factory=list)
    must_not_mention: list[str] = Field(default_factory=list)
    change: str | None = None
    """Against the baseline: regression, fixed, still_failing, still_passing, flaky, baseline_flaky, new,
    removed or not_comparable; None without a baseline."""
    flaky: bool = False
    """Passed, but only after repeats."""
    runs: list[dict[str, Any]] = Field(default_factory=list)
    """Every run ({status, failed_conditions, latency_ms, ...}) when the case was repeated; else empty."""
    k_of_n: str | None = None
    """`1 of 3 passed`, when the case was repeated."""
    baseline: dict[str, Any] | None = None
    """The baseline's result for this case: {status, failed_conditions}."""

    def first_latency_ms(self) -> float | None:
        """The first run's latency: latency percentiles use first runs only."""
        if self.runs:
            value = self.runs[0].get("latency_ms")
            return float(value) if isinstance(value, int | float) else None
        return self.trace.latency_ms


class ShardBlock(_Model):
    """Which part of the case set a `run --shard i/n` evaluated, so `merge` can tell a missing shard."""

    index: int
    count: int
    total_cases: int
    """Cases in the whole set, before sharding."""
    positions: list[int] = Field(default_factory=list)
    """Each case's place in the whole set, parallel to `cases`: `merge` restores the set's order."""


class DeltaBlock(_Model):
    """One metric now against the baseline, with its uncertainty."""

    metric: str
    """`pass_rate`, `faithfulness`, `judge.<dimension>` (deltas) or `p95_latency`, `cost` (ratios)."""
    base: float | None
    now: float | None
    delta: float | None
    """now - base for deltas; now / base for ratios."""
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    significant: bool | None
    test: str
    """How the interval and p-value were made, in words."""
    comparable: bool
    reason: str
    """The sentence the comment shows; for a metric not comparable, why not."""
    kind: Literal["delta", "ratio"] = "delta"
    cases: int = 0
    """Paired cases the figure is computed over."""


class ComparisonBlock(_Model):
    """The run against the baseline (`--baseline`)."""

    baseline: dict[str, Any]
    """{commit, ref, created_at, age_days, path}."""
    judge_comparable: bool
    judge_not_comparable_reason: str | None = None
    regressions: list[dict[str, Any]] = Field(default_factory=list)
    """The `regression` cases first, in report order: {id, category, failed_conditions, k_of_n, baseline}."""
    new_cases: list[str] = Field(default_factory=list)
    removed_cases: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    """Cases per `change` value."""
    deltas: list[DeltaBlock] = Field(default_factory=list)
    rules: list[RuleBlock] = Field(default_factory=list)
    """The regression rules' outcomes (scope `regression`)."""
    notices: list[str] = Field(default_factory=list)
    confidence: float = 0.95
    """Two-sided level of every interval (1 - gate.significance)."""


class InterruptedBlock(_Model):
    """Present when a signal stopped the run: the report holds only the cases finished before it."""

    signal: str
    cases_done: int
    cases_total: int
    reason: str


class Report(_Model):
    """The whole report as written by `--report`."""

    schema_version: Literal[1] = 1
    verdict: Literal["pass", "fail", "error"]
    suite: SuiteBlock
    rules: list[RuleBlock]
    cases: list[CaseBlock]
    judge_info: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "ragjudge", "version": __version__})
    generated_at: str = ""
    shard: ShardBlock | None = None
    interrupted: InterruptedBlock | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    """ragjudge_version, created_at, git_commit, git_ref, case_set_hash, rules_hash, judge_fingerprint, endpoint."""
    comparison: ComparisonBlock | None = None


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
    """Written whole or not at all: a reader never sees half a report; never a secret, even JSON-escaped."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for chunk in json_chunks(report):
            out.write(masking.mask(chunk))
    tmp.replace(path)


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


def load_report(path: Path) -> Report:
    """Read a report back (for `ragjudge comment`); errors name the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseFileError(f"{path}: report file not found", tip="pass the file written by --report") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseFileError(f"{path}: not a JSON report ({exc})") from None
    if isinstance(data, dict) and data.get("kind") == "canary":
        raise CaseFileError(f"{path}: this is a canary report; use `ragjudge canary` to render it")
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CaseFileError(f"{path}: not a ragjudge report: {loc}: {first['msg']}") from None
