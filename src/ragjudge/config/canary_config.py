"""`canary:`: the canary decision (`ragjudge canary`, `ragjudge serve`): its arms, sample, feedback source and
rules."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from ragjudge.config.headers import Headers
from ragjudge.config.section import Section
from ragjudge.metrics.names import DISLIKE_RATE_RATIO, FAITHFULNESS, P95_LATENCY_MS, P95_LATENCY_RATIO


class FeedbackPrometheus(Section):
    """Feedback counts from Prometheus: one PromQL instant query per arm and count, each result summed."""

    url: str = Field(description="Prometheus base URL; `/api/v1/query` is appended.")
    treatment_dislikes: str = Field(description="PromQL: the canary's thumbs-down count.")
    treatment_responses: str = Field(description="PromQL: the canary's response count.")
    control_dislikes: str = Field(description="PromQL: the stable version's thumbs-down count.")
    control_responses: str = Field(description="PromQL: the stable version's response count.")
    headers: Headers = Field(default_factory=dict, description="Sent with every query (e.g. a bearer token).")


class FeedbackConfig(Section):
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


class CanaryConfig(Section):
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
            DISLIKE_RATE_RATIO: "<= 1.5",
            P95_LATENCY_RATIO: "<= 1.5",
            P95_LATENCY_MS: "<= 3000",
            FAITHFULNESS: ">= 0.95",
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
