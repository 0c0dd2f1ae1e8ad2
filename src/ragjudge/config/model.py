"""The config file (`ragjudge.yml`): pydantic models, loading and path resolution.

Key names are part of the public contract. Unknown keys are errors naming the
key's path; values are never echoed in errors, because some are secrets.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from ragjudge import masking
from ragjudge.config import presets, safeyaml
from ragjudge.config.envsubst import substitute
from ragjudge.config.headers import Headers
from ragjudge.config.mistakes import recognise
from ragjudge.config.protocol import UNION_TAGS, BuiltinProtocol, ProtocolSetting
from ragjudge.config.templatepath import check_contained, workspace
from ragjudge.errors import ConfigError
from ragjudge.transport import urls

DEFAULT_BODY = '{"question": {{ question | tojson }}}'
DEFAULT_CASE_RULES: dict[str, str] = {"context_recall": ">= 1.0", "latency_ms": "<= 10000"}
MAX_TIMEOUT_S = 3600.0
"""An hour: a longer per-call timeout is a typo, and a gate must end."""
DEFAULT_SUITE_RULES: dict[str, str] = {
    "pass_rate": ">= 0.9",
    "rejection_accuracy": ">= 0.9",
    "p95_latency_ms": "<= 3000",
}


_TOO_DEEP = "nested too deeply to read (lists or mappings hundreds of levels deep)"
_TOO_DEEP_TIP = "see the README's config section: no key nests more than a few levels"

DEFAULT_MAX_CASE_FILE_BYTES = 50_000_000
"""50 MB: a larger case file is refused before it is parsed (`max_case_file_bytes` in ragjudge.yml)."""


class _Strict(BaseModel):
    # `.inf` and `.nan` are valid YAML floats: refused here, naming the key, rather than
    # ending as an OverflowError in a socket timeout or a rule that never fails.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ResponseMapping(_Strict):
    """Dotted paths into an endpoint reply whose shape is not one ragjudge knows."""

    answer: str | None = Field(None, description="Path to the answer text; unset: the `answer` key.")
    answer_delta: str | None = Field(
        None,
        description="In a streamed reply: path to the answer's next piece in each event (appended in order, e.g. "
        "`choices.0.delta.content`); every other path is read from the last event where it resolves.",
    )
    refused: str | None = Field(
        None,
        description="Path to the service's own declined flag (a boolean, or `true`/`false`/`yes`/`no` as text); "
        "unset: the `refused` key.",
    )
    confidence: str | None = Field(
        None,
        description="Path to the stated confidence (text such as `high`, `medium`, `low`, `none`); "
        "unset: the `confidence` key.",
    )
    retrieved: str | None = Field(
        None,
        description="Path to the list of passages, in retrieval order; unset: the first of `retrieved`, "
        "`sources`, `contexts`.",
    )
    retrieved_id: str | None = Field(
        None, description="Path to the id inside one passage; unset: the first of `id`, `source`, `doc_id`."
    )
    retrieved_text: str | None = Field(
        None,
        description="Path to the text inside one passage; unset: the first of `text`, `excerpt`, `content`, "
        "`page_content`.",
    )
    retrieved_title: str | None = Field(
        None, description="Path to the title inside one passage; unset: the `title` key."
    )
    retrieved_ids: str | None = Field(
        None,
        description="Path to a list of ids parallel to `retrieved` (or alone); unset: `retrievedIds`, `retrieved_ids`.",
    )
    citations: str | None = Field(
        None, description="Path to what the answer cites (a list); unset: the `citations` key."
    )
    cost_usd: str | None = Field(
        None,
        description="Path to the call's cost in USD (a number; once mapped it must be there); unset: "
        "`cost_usd`, `costUsd`.",
    )
    latency_ms: str | None = Field(
        None,
        description="Path to the server-reported latency in ms, kept beside ragjudge's own and never gated on; "
        "unset: `latencyMs`, `latency_ms`.",
    )
    conversation_id: str | None = Field(
        None,
        description="Path to the id a stateful service gives a conversation, passed to the next turn's templates "
        "as `conversation_id`; unset: `conversation_id`, `conversationId`.",
    )


class RefusalConfig(_Strict):
    """How a reply that declines in words is recognised (besides the `refused` field and an empty answer)."""

    patterns: list[str] = Field(
        default_factory=list, description="Regexes, case-insensitive, searched in the normalised answer."
    )
    builtin: bool = Field(True, description="The built-in English and Chinese refusal phrases.")
    judge: bool = Field(
        False,
        description="Let the LLM judge classify declines, in the call it already makes (`judge.provider: openai` "
        "only: the offline judge ignores it, with a warning).",
    )

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for i, pattern in enumerate(value):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"patterns.{i} is not a valid regular expression: {exc}") from None
        return value


class EndpointConfig(_Strict):
    """How to call the RAG endpoint under test."""

    url: str | None = Field(
        None,
        description="The endpoint's http(s) URL, a Jinja template (`{{ ... }}` is URL-encoded); `--endpoint` "
        "overrides. Unset: `run` needs `--endpoint` (or `--traces`).",
    )
    method: Literal["POST", "PUT", "GET"] = Field(
        "POST", description="`POST`, `PUT` or `GET` (any case); a GET sends no body."
    )
    headers: Headers = Field(
        default_factory=dict,
        description="Sent with every call. Values of 6 characters or more are masked as secrets; "
        "names must be HTTP tokens, values latin-1 without CR or LF.",
    )
    body: str = Field(
        DEFAULT_BODY,
        description="The request body, a sandboxed Jinja template with `question`, `case`, `messages`, `history`, "
        "`turn`, `conversation_id` and `model`; checked as JSON before any call unless a header sets another "
        "Content-Type. Given, it wins over a preset's.",
    )
    preset: BuiltinProtocol | None = Field(
        None,
        description="Wire a well-known API in one line: `openai-chat` (OpenAI-compatible chat completions, "
        "streamed), `openai-responses` (the Responses API), `ai-sdk` (an AI SDK UI message stream route) or "
        "`langserve` (a LangServe runnable's `/stream`): the body, the protocol of the same name, and response "
        "keys; a given `body`, `protocol` and `response:` keys win.",
    )
    protocol: ProtocolSetting | None = Field(
        None,
        description="How a streamed reply's events are read: a built-in protocol's name, or one declared with "
        "`text`, `end`, `error`, `passages`, ... (README: Stream protocols). Unset: the mapped `answer_delta` in "
        "every event, and the stream ends when the connection closes.",
    )
    model: str | None = Field(
        None,
        description="The model the request names (`model` in the body template); needed by the `openai-chat` "
        "and `openai-responses` presets unless `body` is given.",
    )
    timeout_s: float = Field(
        30.0,
        gt=0,
        le=MAX_TIMEOUT_S,
        description="Seconds per attempt, for the whole of it (connect, status line, headers, body); at most 3600.",
    )
    retries: int = Field(
        2,
        ge=0,
        le=10,
        description="Attempts after the first, on connection errors, timeouts, 429 and 5xx, with backoff "
        "(Retry-After honoured); 0 to 10.",
    )
    concurrency: int = Field(8, ge=1, le=256, description="Endpoint calls in flight at once (1 to 256).")
    max_response_bytes: int = Field(
        5_000_000, gt=0, description="A reply body over this many bytes is a case error (`reply over N bytes`)."
    )
    max_log_body_bytes: int = Field(
        20_000, gt=0, description="With --log-bodies: each reply body is kept in the log up to this many bytes."
    )
    max_request_bytes: int = Field(
        1_000_000,
        gt=0,
        description="What the URL and body templates may render, each, in bytes: a template that would render "
        "(or build a value) over it is exit 2 naming the key, stopped before it grows further; a conversation's "
        "turn that only the service's earlier answers carry over it is that turn's error, not sent.",
    )
    max_wait_s: float = Field(
        60.0, ge=0, description="Seconds: a longer Retry-After ends the call at once (a case error naming it)."
    )
    follow_redirects: bool = Field(
        False,
        description="Off: a 3xx reply is a case error naming its Location; on: redirects within the origin are "
        "followed.",
    )
    allow_cross_origin: bool = Field(
        False, description="With follow_redirects: follow a hop to another origin (without headers or body)."
    )
    stream: Literal["auto", "sse", "ndjson", "none"] = Field(
        "auto",
        description="How the reply is read: `auto` by its Content-Type (`text/event-stream`: SSE; "
        "`application/x-ndjson`, `application/jsonl`: NDJSON; else one JSON body), `sse`, `ndjson`, or `none` "
        "(always one JSON body).",
    )
    idle_timeout_s: float = Field(
        30.0,
        gt=0,
        le=MAX_TIMEOUT_S,
        description="Seconds a streamed reply may send no bytes before the attempt is a timeout; `timeout_s` "
        "still bounds the whole reply.",
    )
    response: ResponseMapping = Field(
        default_factory=ResponseMapping,
        description="Dotted paths into the reply; a key left out reads its default keys (README: Response mapping).",
    )
    refusal: RefusalConfig = Field(
        default_factory=RefusalConfig, description="How a reply that declines in words is recognised."
    )

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data: Any) -> Any:
        return presets.apply(data)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return None if value is None else urls.check_http_url(value)

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class EscalateConfig(_Strict):
    """Re-judge borderline judgements with a stronger model."""

    model: str = Field(description="The stronger model whose verdict stands for a borderline judgement.")
    band: float = Field(
        0.1,
        ge=0,
        description="How near a rule's threshold is borderline, as a share of the metric's range (1 for "
        "faithfulness, 4 for the 1-5 rubric).",
    )
    base_url: str | None = Field(None, description="Where the stronger model is served; unset: `judge.base_url`.")


class PriceConfig(_Strict):
    """USD per million tokens for one model."""

    input_per_mtok: float = Field(0.0, ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(0.0, ge=0, description="USD per million completion tokens.")


CRITERION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
"""A criterion's name: an identifier starting with a letter, so that `criteria.NAME` reads as a metric in rules
(a leading underscore is Python's mark of a private name, which the judge's reply model refuses)."""
BUILTIN_DIMENSIONS = frozenset({"grounding", "relevance", "calibration", "citations", "tone"})
"""The judge's own rubric dimensions: a criterion may not take their names (they share the reply's scores)."""


class CriterionConfig(_Strict):
    """One of the team's own criteria: a question the judge scores 1 to 5 between two anchors the team wrote."""

    question: str = Field(min_length=1, max_length=2000, description="What the judge is asked about the answer.")
    score_1: str = Field(min_length=1, max_length=1000, description="What an answer that deserves 1 looks like.")
    score_5: str = Field(min_length=1, max_length=1000, description="What an answer that deserves 5 looks like.")
    categories: list[str] = Field(
        default_factory=list,
        description="Only cases of these categories (compared with case, `-`, `_` and spaces folded); empty: any.",
    )
    tags: list[str] = Field(
        default_factory=list, description="Only cases carrying at least one of these tags; empty: any."
    )

    @field_validator("question", "score_1", "score_5")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


def check_criterion_name(name: str) -> str | None:
    """Why `name` cannot name a criterion, or None when it can."""
    if not isinstance(name, str) or not CRITERION_NAME.fullmatch(name):
        return f"{name!r} is not a criterion name: letters, digits and _, starting with a letter, at most 64 characters"
    if name in BUILTIN_DIMENSIONS:
        return f"{name!r} is a built-in judge dimension: give the criterion a name of its own"
    return None


class JudgeConfig(_Strict):
    """Which judge scores the answers, and how it is called."""

    model_config = ConfigDict(populate_by_name=True)

    provider: Literal["offline", "openai"] = Field(
        "offline",
        description="`offline`: the free, deterministic lexical judge; `openai`: an OpenAI-compatible model.",
    )
    model: str = Field("gpt-4o-mini", description="The judge model (`openai` only); `--judge-model` overrides.")
    base_url: str | None = Field(
        None,
        description="An OpenAI-compatible http(s) base URL (vLLM, Ollama, LiteLLM, Azure OpenAI...); unset: the "
        "SDK's default, api.openai.com. `--judge-base-url` overrides.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="The judge's API key, a secret; unset: `--judge-api-key-env VAR`, else `OPENAI_API_KEY`.",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature, 0 to 2.")
    seed: int | None = Field(
        7,
        description="Sent where the server accepts it (sample i sends seed + i); null sends none.",
    )
    concurrency: int = Field(
        8,
        ge=1,
        le=256,
        description="Judge calls in flight at most (1 to 256); a 429 lowers the number, successes raise it back.",
    )
    timeout_s: float = Field(
        60.0, gt=0, le=MAX_TIMEOUT_S, description="Seconds per judge call, for the whole of it; at most 3600."
    )
    max_retries: int = Field(
        4,
        ge=0,
        le=20,
        description="Retries of a judge call on 429, 5xx and timeouts, with backoff (never on 401, 403 or "
        "insufficient_quota); 0 to 20.",
    )
    max_wait_s: float = Field(
        60.0, ge=0, description="Seconds: a longer Retry-After ends that judge call at once (unscored, with why)."
    )
    max_retry_time_s: float = Field(
        300.0, ge=0, description="Run-wide: time spent waiting to retry; past it, later judgements are unscored."
    )
    samples: int = Field(
        1,
        ge=1,
        le=15,
        description="Ask each judgement this many times (1 to 15) and take the median per dimension; the spread "
        "is reported. Use a temperature above 0.",
    )
    combined: bool = Field(
        True,
        description="Ask the rubric and the claim-level verdicts in one call per answered case (false: two calls).",
    )
    cache: Path | None = Field(
        Path(".ragjudge/cache"),
        description="Folder of validated judge replies, reused when the same prompt is asked again; null: no "
        "cache. Relative to the config file's folder.",
    )
    max_passages: int = Field(20, ge=1, le=1000, description="Passages shown to the judge, in retrieval order.")
    max_passage_chars: int = Field(
        4000,
        ge=50,
        le=1_000_000,
        validation_alias=AliasChoices("max_passage_chars", "excerpt_chars"),
        description="Each passage is trimmed to this for the judge (`excerpt_chars` is its older name).",
    )
    max_answer_chars: int = Field(
        8000,
        ge=100,
        le=1_000_000,
        description="The answer is cut to this many characters for the judge, and so is each earlier question and "
        "answer of a conversation; the prompt says where, and the judgement records the answer's cut "
        "(`answer_cut`).",
    )
    escalate: EscalateConfig | None = Field(
        None, description="Re-judge borderline judgements with a stronger model; unset: no escalation."
    )
    prices: dict[str, PriceConfig] = Field(
        default_factory=dict,
        description="Per model name, its token prices for the judge's cost; a model not listed costs 0.",
    )
    calibration: Path | None = Field(
        None,
        description="The calibration record `ragjudge calibrate` writes and `run` checks (relative to the config "
        "file's folder); unset: `.ragjudge/calibration.json` in the working directory.",
    )
    require_calibration: bool = Field(
        False,
        description="`openai` judge: a missing, unfit or stale calibration refuses to gate (every case errors, "
        "exit 3) instead of warning. The offline judge warns that it has none.",
    )
    min_overlap: float = Field(
        0.5, gt=0, le=1, description="Offline judge: share of a claim's tokens that must appear in one passage."
    )
    reference: bool = Field(
        True,
        description="Judge each answered case against its reference answer (`expected`): its points covered, "
        "partly covered, missing or contradicted, in the same call; false: the reference reaches no judge.",
    )
    criteria: dict[str, CriterionConfig] = Field(
        default_factory=dict,
        description="The team's own criteria by name, each scored 1 to 5 in the same call for the answered cases "
        "it applies to (`criteria.NAME` in rules).",
    )

    @field_validator("criteria")
    @classmethod
    def _criterion_names(cls, value: dict[str, CriterionConfig]) -> dict[str, CriterionConfig]:
        for name in value:
            problem = check_criterion_name(name)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return None if value is None else urls.check_http_url(value)


class GateConfig(_Strict):
    """Threshold rules: `metric: "OP number"` per case and per suite, and against the baseline."""

    case: dict[str, str] | None = Field(
        None,
        description="Rules each case must meet; given, they replace the defaults (context_recall >= 1.0, "
        "latency_ms <= 10000).",
    )
    suite: dict[str, str] | None = Field(
        None,
        description="Rules on the suite's metrics; given, they replace the defaults (pass_rate >= 0.9, "
        "rejection_accuracy >= 0.9, p95_latency_ms <= 3000), and pass_rate >= 1.0 is added if absent.",
    )
    regression: dict[str, str] | None = Field(
        None, description="Rules against the baseline (see docs/regressions.md); default newly_failing <= 0."
    )
    significance: float = Field(
        0.05, gt=0, le=0.5, description="A delta or ratio rule fails only when the change is also significant."
    )
    max_error_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description="The error budget, 0 to 1: when a larger share of the cases errored, the verdict is `error` "
        "(exit 3) naming the error that dominated, whatever the cases left say; a run where every case errored "
        "is `error` whatever the budget.",
    )


class BaselineConfig(_Strict):
    """The report from main that a run is compared with."""

    report: Path | None = Field(
        None,
        description="Main's JSON report (relative to the config file's folder); `--baseline` overrides. Unset: "
        "no comparison; a file that does not exist is a warning.",
    )
    max_age_days: float = Field(7.0, gt=0, description="An older baseline is compared, with a warning.")


class RepeatConfig(_Strict):
    """Re-running what fails, to tell a flaky case from a broken one."""

    max: int = Field(1, ge=1, le=10, description="Runs at most per case; 1 runs every case once.")
    pass_at: int = Field(1, ge=1, le=10, description="Passing runs a case needs.")

    @model_validator(mode="after")
    def _reachable(self) -> RepeatConfig:
        if self.pass_at > self.max:
            raise ValueError(f"pass_at ({self.pass_at}) must not exceed max ({self.max})")
        return self


class FeedbackPrometheus(_Strict):
    """Feedback counts from Prometheus: one PromQL instant query per arm and count, each result summed."""

    url: str = Field(description="Prometheus base URL; `/api/v1/query` is appended.")
    treatment_dislikes: str = Field(description="PromQL: the canary's thumbs-down count.")
    treatment_responses: str = Field(description="PromQL: the canary's response count.")
    control_dislikes: str = Field(description="PromQL: the stable version's thumbs-down count.")
    control_responses: str = Field(description="PromQL: the stable version's response count.")
    headers: Headers = Field(default_factory=dict, description="Sent with every query (e.g. a bearer token).")


class FeedbackConfig(_Strict):
    """Production thumbs-down counts per arm: exactly one source."""

    file: Path | None = Field(None, description='JSON: {"treatment": {"dislikes", "responses"}, "control": {...}}.')
    url: str | None = Field(None, description="The same JSON over HTTP (GET).")
    headers: Headers = Field(default_factory=dict, description="Sent with `url`.")
    prometheus: FeedbackPrometheus | None = Field(None, description="The counts from Prometheus queries.")

    @model_validator(mode="after")
    def _one_source(self) -> FeedbackConfig:
        given = [name for name in ("file", "url", "prometheus") if getattr(self, name) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise ValueError(f"give exactly one of file, url or prometheus (found: {found})")
        return self


class CanaryConfig(_Strict):
    """The canary decision (`ragjudge canary`)."""

    sample: Path | None = Field(None, description="The fixed canary question sample (case-file format).")
    treatment: str | None = Field(None, description="The canary's URL; other endpoint settings come from `endpoint`.")
    control: str | None = Field(None, description="The stable version's URL.")
    feedback: FeedbackConfig | None = Field(
        None,
        description="Where the thumbs-down counts come from; `--feedback FILE` overrides. Needed by "
        "`dislike_rate_ratio` (without one, exit 2).",
    )
    rules: dict[str, str] = Field(
        default_factory=lambda: {
            "dislike_rate_ratio": "<= 1.5",
            "p95_latency_ratio": "<= 1.5",
            "p95_latency_ms": "<= 3000",
            "faithfulness": ">= 0.95",
        },
        description="Given rules replace the defaults; a metric left out is not checked.",
    )
    decision: Literal["statistical", "point"] = Field(
        "statistical",
        description="`statistical`: each rule decided on an interval, too little data inconclusive; `point`: "
        "point estimates compared with the thresholds (docs/canary.md).",
    )
    confidence: float = Field(
        0.95, gt=0.5, lt=1, description="Two-sided level of every interval, between 0.5 and 1 (exclusive)."
    )
    min_responses: int = Field(200, ge=1, description="Per arm, for the dislike rate.")
    min_requests: int = Field(50, ge=1, description="Per arm, for latency (and scored answers, for faithfulness).")
    bootstrap: int = Field(2000, ge=100, le=100_000, description="Bootstrap resamples.")
    seed: int = Field(12345, description="Bootstrap seed: the same data gives the same intervals.")


class ServeConfig(_Strict):
    """`ragjudge serve`: the analysis service for Flagger and Argo Rollouts."""

    max_concurrent: int = Field(2, ge=1, le=64, description="Analyses running at once; more is HTTP 429.")
    reanalyse_s: float = Field(
        300.0, ge=0, description="Flagger `rollout` hook: start a fresh analysis once the last is this old (s)."
    )
    keep: int = Field(20, ge=1, le=1000, description="Analyses remembered per canary name (latest first).")
    max_names: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="Canary names remembered; a new one past this drops the name whose last analysis finished "
        "longest ago (a name with an analysis running is never dropped: with none to drop, HTTP 503).",
    )
    metrics_names: int = Field(
        50,
        ge=1,
        le=10_000,
        description="Canary names `/metrics` shows: those whose latest analysis finished most recently. A scrape "
        "needs the canaries rolling out now, not every name kept; this bounds the body's size.",
    )
    allowed_hosts: list[str] | None = Field(
        None,
        description="Hosts a caller may name in `treatment`, `control` or `feedback_url` (exact, or `*.suffix`; "
        "`{name}`/`{namespace}` filled in); others are HTTP 400. Unset: the hosts of `canary.treatment`, "
        "`canary.control` and the feedback URL.",
    )
    max_connections: int = Field(
        32,
        ge=1,
        le=1024,
        description="Connections served at once by a fixed pool of threads (once they have sent bytes; idle ones "
        "wait apart); as many again wait, and one more is answered HTTP 503 at once.",
    )
    read_timeout_s: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Seconds a connection has to send its whole request (head and body); then it is closed "
        "(HTTP 408 once the head has arrived).",
    )

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: list[str] | None) -> list[str] | None:
        for host in value or ():
            # A host alone: a port or a path here would never match, and silently so.
            if not host or any(c in host for c in "/@[] \t") or re.fullmatch(r"[^:]+:\d*", host):
                raise ValueError(
                    f"{host!r} is not a host name without a port (give e.g. rag.prod.svc or *.svc.cluster.local)"
                )
        return value


class Config(_Strict):
    """The whole `ragjudge.yml`."""

    endpoint: EndpointConfig = Field(default_factory=EndpointConfig, description="The RAG endpoint under test.")
    judge: JudgeConfig = Field(default_factory=JudgeConfig, description="The judge; by default the offline one.")
    cases: list[Path] = Field(
        default_factory=list,
        description="Case files (YAML or JSONL), relative to the config file's folder; `--cases` overrides. "
        "Empty: `run` needs `--cases`.",
    )
    gate: GateConfig = Field(default_factory=GateConfig, description="The rules the gate applies.")
    template: Path | None = Field(
        None,
        description="A Jinja template for the comment, under the workspace or the config file's folder; "
        "`--template` overrides. Unset: the template shipped in the package.",
    )
    canary: CanaryConfig | None = Field(
        None, description="`ragjudge canary` and `ragjudge serve`; unset: their defaults."
    )
    max_case_file_bytes: int = Field(
        DEFAULT_MAX_CASE_FILE_BYTES, gt=0, description="A larger case file is refused before it is read."
    )
    baseline: BaselineConfig = Field(default_factory=BaselineConfig, description="Main's report to compare with.")
    repeat: RepeatConfig = Field(
        default_factory=RepeatConfig, description="Re-running failing cases; `--repeat MAX/PASS_AT` overrides."
    )
    serve: ServeConfig = Field(default_factory=ServeConfig, description="`ragjudge serve`'s limits.")
    # Where it was read from: not keys of the file, so a file cannot set them.
    _source: str | None = PrivateAttr(None)
    _folder: Path | None = PrivateAttr(None)

    @property
    def source(self) -> str | None:
        """The config file it was read from (`(defaults)` when there was none); None when built in code."""
        return self._source

    @property
    def folder(self) -> Path | None:
        """The folder its relative paths (`cases:` ...) were resolved against; None when built in code."""
        return self._folder

    def key(self, path: str) -> str:
        """`ragjudge.yml: gate.case`: a key named with the file it is in, for messages raised after loading."""
        return f"{self._source}: {path}" if self._source else path

    def case_rules(self) -> dict[str, str]:
        return dict(DEFAULT_CASE_RULES if self.gate.case is None else self.gate.case)

    def suite_rules(self) -> dict[str, str]:
        rules = dict(DEFAULT_SUITE_RULES if self.gate.suite is None else self.gate.suite)
        # With no explicit tolerance, any failed or errored case fails the gate.
        rules.setdefault("pass_rate", ">= 1.0")
        return rules


_UNQUOTED_FLOOR = re.compile(r"([\w.]+):\s*(>=?\s*[-+]?\.?\d[\d.]*(?:[eE][-+]?\d+)?)")


def format_validation_error(source: str, error: ValidationError) -> str:
    """One line per problem, naming the key path; never the offending value."""
    return explain_validation_error(source, error)[0]


def explain_validation_error(source: str, error: ValidationError) -> tuple[str, str | None]:
    """The lines of `format_validation_error`, and the tip of the first newcomer mistake among them."""
    lines = []
    tip = None
    for item in error.errors(include_url=False):
        loc = ".".join(str(p) for p in item["loc"] if p not in UNION_TAGS) or "(top level)"
        mistake = recognise(item["loc"], item["type"], item.get("input"), echo=False)
        if item["type"] == "extra_forbidden":
            lines.append(f"{source}: unknown key {loc!r}")
        elif mistake is not None:
            lines.append(f"{source}: {loc}: {mistake.problem}")
            tip = tip or mistake.tip
        else:
            lines.append(f"{source}: {loc}: {str(item['msg']).removeprefix('Value error, ')}")
    return "\n".join(lines), tip


def _resolve(base: Path, path: Path | None) -> Path | None:
    if path is None:
        return None
    path = path.expanduser()
    return path if path.is_absolute() else base / path


def _template(base_dir: Path, path: Path | None, source: str) -> Path | None:
    resolved = _resolve(base_dir, path)
    if resolved is None:
        return None
    # A pull request can edit ragjudge.yml: its template must stay inside the repository.
    return check_contained(resolved, [workspace(), base_dir], f"{source}: template")


def parse_config(data: Any, source: str, base_dir: Path) -> Config:
    """Validate an already-parsed YAML tree and resolve its relative paths."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, not {type(data).__name__}")
    data = substitute(data, source)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        message, tip = explain_validation_error(source, exc)
        raise ConfigError(message, tip=tip or "see the README's config section for every key") from None
    register_secrets(config)
    judge = config.judge.model_copy(
        update={
            "cache": _resolve(base_dir, config.judge.cache),
            "calibration": _resolve(base_dir, config.judge.calibration),
        }
    )
    canary = config.canary
    if canary is not None:
        feedback = canary.feedback
        if feedback is not None:
            feedback = feedback.model_copy(update={"file": _resolve(base_dir, feedback.file)})
        canary = canary.model_copy(update={"sample": _resolve(base_dir, canary.sample), "feedback": feedback})
    resolved = config.model_copy(
        update={
            "judge": judge,
            "cases": [p for p in (_resolve(base_dir, c) for c in config.cases) if p is not None],
            "template": _template(base_dir, config.template, source),
            "canary": canary,
            "baseline": config.baseline.model_copy(update={"report": _resolve(base_dir, config.baseline.report)}),
        }
    )
    resolved._source, resolved._folder = source, base_dir
    return resolved


def register_secrets(config: Config) -> None:
    """Header values (tokens) and the judge's key are secrets however they were written."""
    headers = list(config.endpoint.headers.values())
    feedback = config.canary.feedback if config.canary else None
    if feedback is not None:
        headers += feedback.headers.values()
        if feedback.prometheus is not None:
            headers += feedback.prometheus.headers.values()
    # A literal short value (`Accept: json`) is not a credential; masking it would garble outputs.
    masking.register(*(value for value in headers if len(value) >= 6))
    if config.judge.api_key is not None:
        masking.register(config.judge.api_key.get_secret_value())


def load_config(path: Path | None) -> Config:
    """Load `path`, or `ragjudge.yml` in the working directory, or the defaults.

    An explicitly named file must exist; the implicit one is optional.
    """
    explicit = path is not None
    target = path if path is not None else Path("ragjudge.yml")
    if not target.exists():
        if explicit:
            raise ConfigError(f"{target}: config file not found", tip="pass --config with an existing file")
        return parse_config({}, "(defaults)", Path.cwd())
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{target}: not UTF-8 text", tip="save the config file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{target}: cannot read: {exc.strerror}") from None
    try:
        data = safeyaml.load(text).data
    except safeyaml.YamlLimitError as exc:
        if exc.too_deep:
            raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
        where = f" (line {exc.line})" if exc.line else ""
        raise ConfigError(f"{target}: refused{where}: {exc.message}", tip="write the config out plainly") from None
    except RecursionError:
        raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        tip = None
        line = text.splitlines()[mark.line] if mark is not None and mark.line < len(text.splitlines()) else ""
        rule = _UNQUOTED_FLOOR.search(line)
        if rule:
            # `pass_rate: >= 0.9` unquoted: YAML reads `>` as the start of a folded block.
            tip = f'quote a rule that starts with ">": {rule.group(1)}: "{rule.group(2).strip()}"'
        elif "{{" in text:
            # An unquoted `body: {"q": {{ question | tojson }}}` is a YAML mapping, and a broken one.
            tip = "quote values that hold a Jinja template: body: '{\"question\": {{ question | tojson }}}'"
        raise ConfigError(f"{target}: invalid YAML{where}: {problem}", tip=tip) from None
    try:
        return parse_config(data, str(target), target.resolve().parent)
    except RecursionError:
        raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
