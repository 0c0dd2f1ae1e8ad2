"""`judge:`: which judge scores the answers and how it is called; escalation, prices and the team's own criteria."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, ConfigDict, Field, SecretStr, field_validator

from ragjudge.config.section import MAX_TIMEOUT_S, Section
from ragjudge.transport import urls


class EscalateConfig(Section):
    """Re-judge borderline judgements with a stronger model."""

    model: str = Field(description="The stronger model whose verdict stands for a borderline judgement.")
    band: float = Field(
        0.1,
        ge=0,
        description="How near a rule's threshold is borderline, as a share of the metric's range (1 for "
        "faithfulness, 4 for the 1-5 rubric).",
    )
    base_url: str | None = Field(None, description="Where the stronger model is served; unset: `judge.base_url`.")


class PriceConfig(Section):
    """USD per million tokens for one model."""

    input_per_mtok: float = Field(0.0, ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(0.0, ge=0, description="USD per million completion tokens.")


CRITERION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
"""A criterion's name: an identifier starting with a letter, so that `criteria.NAME` reads as a metric in rules
(a leading underscore is Python's mark of a private name, which the judge's reply model refuses)."""
BUILTIN_DIMENSIONS = frozenset({"grounding", "relevance", "calibration", "citations", "tone"})
"""The judge's own rubric dimensions: a criterion may not take their names (they share the reply's scores)."""


class CriterionConfig(Section):
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


class JudgeConfig(Section):
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
    budget_usd: float | None = Field(
        None,
        gt=0,
        description="At most this many USD of judge calls a run (a shard, a canary, a `cases generate`: each its "
        'own), at `prices`: a call that would pass it is not made, the cases left are `error` ("budget exhausted: '
        '..."), every output is written and the run exits 3. Unset: no ceiling.',
    )
    max_calls: int | None = Field(
        None,
        ge=1,
        description="At most this many judge calls a run (a shard, a canary, a `cases generate`: each its own), kept "
        "like `budget_usd`. Unset: no ceiling.",
    )
    prices: dict[str, PriceConfig] = Field(
        default_factory=dict,
        description="Per model name, its token prices for the judge's cost; a model not listed has its cost unknown "
        "(null, never 0), with a warning naming the key to set.",
    )
    calibration: Path | None = Field(
        None,
        description="The calibration record `ragjudge calibrate` writes and `run` checks (relative to the config "
        "file's folder); unset: `.ragjudge/calibration.json` in the working directory.",
    )
    rejudge: int = Field(
        0,
        ge=0,
        le=10,
        description="At most this many more judgements of a case's reply while the judge's votes leave it undecided "
        "(0 to 10; no endpoint call; each a fresh sample, named, so a cache or main's report that holds it answers for "
        "it). The votes: every judgement of the reply, main's of the same reply, and for an answer changed since a "
        "main that passed the case, the pairwise judge's orders; `pass` at one net vote, `fail` at five "
        "(docs/judges.md). Undecided at the cap is `judge_split`, never a regression alone. Also lets an unsettled "
        "pairwise verdict be asked again, up to 3 more rounds. `--rejudge N` overrides.",
    )
    consistency_sample: int = Field(
        10,
        ge=0,
        le=1000,
        description="With `rejudge` >= 1: how many cases a run, picked at random (by a hash of their ids), a model "
        "judge judges a second time whatever it said first: the judge's flip rate (`judge_flip_rate`, the "
        "footer's) comes from them alone. One more call each; 0: no estimate.",
    )
    pairwise: bool = Field(
        True,
        description="With a baseline and the `openai` judge: judge each answer whose text changed since main "
        "against main's, in both orders (`better`, `worse` or `tie`; the regression rules `pairwise_loss_rate` "
        "and `pairwise_worse` read it). Two calls per changed answer; off: none.",
    )
    uncalibrated: Literal["gate", "report"] = Field(
        "gate",
        description="`openai` judge without a fit calibration of itself (missing, stale or unfit) and "
        "`require_calibration` off: `gate` blocks on the conditions only it decides, as a calibrated judge's; "
        "`report` reports them as `advisory_conditions` and does not block on them.",
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

    @field_validator(
        "seed",
        "concurrency",
        "max_retries",
        "samples",
        "max_passages",
        "max_passage_chars",
        "max_answer_chars",
        "rejudge",
        "consistency_sample",
        "max_calls",
        mode="before",
    )
    @classmethod
    def _a_count_not_a_boolean(cls, value: Any) -> Any:
        # YAML's `true` is an int to pydantic's lax mode: `rejudge: true` read as 1 rejudge (booleans are not counts).
        if isinstance(value, bool):
            raise ValueError(f"a number is expected, not {str(value).lower()}")
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return None if value is None else urls.check_http_url(value)
