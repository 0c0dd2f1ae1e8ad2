"""The config file (`ragjudge.yml`): pydantic models, loading and path resolution.

Key names are part of the public contract. Unknown keys are errors naming the
key's path; values are never echoed in errors, because some are secrets.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from ragjudge import masking
from ragjudge.config import safeyaml
from ragjudge.config.envsubst import substitute
from ragjudge.config.headers import Headers
from ragjudge.config.templatepath import check_contained, workspace
from ragjudge.errors import ConfigError

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

    answer: str | None = None
    refused: str | None = None
    confidence: str | None = None
    retrieved: str | None = Field(None, description="Path to the list of passages.")
    retrieved_id: str | None = Field(None, description="Path to the id inside one passage.")
    retrieved_text: str | None = Field(None, description="Path to the text inside one passage.")
    retrieved_title: str | None = Field(None, description="Path to the title inside one passage.")
    retrieved_ids: str | None = Field(None, description="Path to a list of ids parallel to `retrieved`.")
    citations: str | None = None
    cost_usd: str | None = None
    latency_ms: str | None = Field(None, description="Server-reported latency, kept beside ragjudge's own.")


class RefusalConfig(_Strict):
    """How a reply that declines in words is recognised (besides the `refused` field and an empty answer)."""

    patterns: list[str] = Field(
        default_factory=list, description="Regexes, case-insensitive, searched in the normalised answer."
    )
    builtin: bool = Field(True, description="The built-in English and Chinese refusal phrases.")
    judge: bool = Field(False, description="Let the LLM judge classify declines, in the call it already makes.")

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for i, pattern in enumerate(value):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"patterns.{i} is not a valid regular expression: {exc}") from None
        return value


def check_http_url(value: str | None) -> str | None:
    """http(s) with a host, or a ValueError saying what is wrong (never echoing the URL: it may hold a token)."""
    if value is None:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme.lower() not in ("http", "https"):
        found = f"a {parts.scheme}:// URL" if parts.scheme and "://" in value else "no scheme"
        raise ValueError(f"must be an http:// or https:// URL with a host (found {found})")
    try:
        host = parts.hostname
    except ValueError:
        host = None
    if not host:
        raise ValueError("must be an http:// or https:// URL with a host (found no host)")
    return value


class EndpointConfig(_Strict):
    """How to call the RAG endpoint under test."""

    url: str | None = None
    method: Literal["POST", "PUT", "GET"] = "POST"
    headers: Headers = Field(default_factory=dict)
    body: str = DEFAULT_BODY
    timeout_s: float = Field(30.0, gt=0, le=MAX_TIMEOUT_S)
    retries: int = Field(2, ge=0, le=10)
    concurrency: int = Field(8, ge=1, le=256)
    max_response_bytes: int = Field(5_000_000, gt=0)
    max_log_body_bytes: int = Field(20_000, gt=0, description="With --log-bodies: each reply body kept up to this.")
    max_wait_s: float = Field(60.0, ge=0, description="A longer Retry-After ends the call at once instead.")
    follow_redirects: bool = Field(False, description="Off: a 3xx reply is a case error naming its Location.")
    allow_cross_origin: bool = Field(
        False, description="With follow_redirects: follow a hop to another origin (without headers or body)."
    )
    response: ResponseMapping = Field(default_factory=ResponseMapping)
    refusal: RefusalConfig = Field(default_factory=RefusalConfig)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return check_http_url(value)

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class EscalateConfig(_Strict):
    """Re-judge borderline judgements with a stronger model."""

    model: str
    band: float = Field(0.1, ge=0)
    base_url: str | None = None


class PriceConfig(_Strict):
    """USD per million tokens for one model."""

    input_per_mtok: float = Field(0.0, ge=0)
    output_per_mtok: float = Field(0.0, ge=0)


class JudgeConfig(_Strict):
    """Which judge scores the answers, and how it is called."""

    model_config = ConfigDict(populate_by_name=True)

    provider: Literal["offline", "openai"] = "offline"
    model: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key: SecretStr | None = None
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int | None = 7
    concurrency: int = Field(8, ge=1, le=256)
    timeout_s: float = Field(60.0, gt=0, le=MAX_TIMEOUT_S)
    max_retries: int = Field(4, ge=0, le=20)
    max_wait_s: float = Field(60.0, ge=0, description="A longer Retry-After ends the call at once instead.")
    max_retry_time_s: float = Field(
        300.0, ge=0, description="Run-wide: time spent waiting to retry; past it, later judgements are unscored."
    )
    samples: int = Field(1, ge=1, le=15)
    combined: bool = Field(
        True,
        description="Ask the rubric and the claim-level verdicts in one call per answered case (false: two calls).",
    )
    cache: Path | None = Path(".ragjudge/cache")
    max_passages: int = Field(20, ge=1, le=1000, description="Passages shown to the judge, in retrieval order.")
    max_passage_chars: int = Field(
        4000,
        ge=50,
        le=1_000_000,
        validation_alias=AliasChoices("max_passage_chars", "excerpt_chars"),
        description="Each passage is trimmed to this for the judge (`excerpt_chars` is its older name).",
    )
    escalate: EscalateConfig | None = None
    prices: dict[str, PriceConfig] = Field(default_factory=dict)
    calibration: Path | None = None
    require_calibration: bool = False
    min_overlap: float = Field(
        0.5, gt=0, le=1, description="Offline judge: share of a claim's tokens that must appear in one passage."
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return check_http_url(value)


class GateConfig(_Strict):
    """Threshold rules: `metric: "OP number"` per case and per suite, and against the baseline."""

    case: dict[str, str] | None = None
    suite: dict[str, str] | None = None
    regression: dict[str, str] | None = Field(
        None, description="Rules against the baseline (see docs/regressions.md); default newly_failing <= 0."
    )
    significance: float = Field(
        0.05, gt=0, le=0.5, description="A delta or ratio rule fails only when the change is also significant."
    )


class BaselineConfig(_Strict):
    """The report from main that a run is compared with."""

    report: Path | None = None
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
    treatment_dislikes: str
    treatment_responses: str
    control_dislikes: str
    control_responses: str
    headers: Headers = Field(default_factory=dict)


class FeedbackConfig(_Strict):
    """Production thumbs-down counts per arm: exactly one source."""

    file: Path | None = Field(None, description='JSON: {"treatment": {"dislikes", "responses"}, "control": {...}}.')
    url: str | None = Field(None, description="The same JSON over HTTP (GET).")
    headers: Headers = Field(default_factory=dict, description="Sent with `url`.")
    prometheus: FeedbackPrometheus | None = None

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
    feedback: FeedbackConfig | None = None
    rules: dict[str, str] = Field(
        default_factory=lambda: {
            "dislike_rate_ratio": "<= 1.5",
            "p95_latency_ratio": "<= 1.5",
            "p95_latency_ms": "<= 3000",
            "faithfulness": ">= 0.95",
        },
        description="Given rules replace the defaults; a metric left out is not checked.",
    )
    decision: Literal["statistical", "point"] = "statistical"
    confidence: float = Field(0.95, gt=0.5, lt=1)
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


class Config(_Strict):
    """The whole `ragjudge.yml`."""

    endpoint: EndpointConfig = Field(default_factory=EndpointConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    cases: list[Path] = Field(default_factory=list)
    gate: GateConfig = Field(default_factory=GateConfig)
    template: Path | None = None
    canary: CanaryConfig | None = None
    max_case_file_bytes: int = Field(
        DEFAULT_MAX_CASE_FILE_BYTES, gt=0, description="A larger case file is refused before it is read."
    )
    baseline: BaselineConfig = Field(default_factory=BaselineConfig)
    repeat: RepeatConfig = Field(default_factory=RepeatConfig)
    serve: ServeConfig = Field(default_factory=ServeConfig)

    def case_rules(self) -> dict[str, str]:
        return dict(DEFAULT_CASE_RULES if self.gate.case is None else self.gate.case)

    def suite_rules(self) -> dict[str, str]:
        rules = dict(DEFAULT_SUITE_RULES if self.gate.suite is None else self.gate.suite)
        # With no explicit tolerance, any failed or errored case fails the gate.
        rules.setdefault("pass_rate", ">= 1.0")
        return rules


def format_validation_error(source: str, error: ValidationError) -> str:
    """One line per problem, naming the key path; never the offending value."""
    lines = []
    for item in error.errors(include_input=False, include_url=False):
        loc = ".".join(str(p) for p in item["loc"]) or "(top level)"
        if item["type"] == "extra_forbidden":
            lines.append(f"{source}: unknown key {loc!r}")
        else:
            lines.append(f"{source}: {loc}: {str(item['msg']).removeprefix('Value error, ')}")
    return "\n".join(lines)


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
        raise ConfigError(
            format_validation_error(source, exc), tip="see the README's config section for every key"
        ) from None
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
    return config.model_copy(
        update={
            "judge": judge,
            "cases": [p for p in (_resolve(base_dir, c) for c in config.cases) if p is not None],
            "template": _template(base_dir, config.template, source),
            "canary": canary,
            "baseline": config.baseline.model_copy(update={"report": _resolve(base_dir, config.baseline.report)}),
        }
    )


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
        if "{{" in text:
            # An unquoted `body: {"q": {{ question | tojson }}}` is a YAML mapping, and a broken one.
            tip = "quote values that hold a Jinja template: body: '{\"question\": {{ question | tojson }}}'"
        raise ConfigError(f"{target}: invalid YAML{where}: {problem}", tip=tip) from None
    try:
        return parse_config(data, str(target), target.resolve().parent)
    except RecursionError:
        raise ConfigError(f"{target}: {_TOO_DEEP}", tip=_TOO_DEEP_TIP) from None
