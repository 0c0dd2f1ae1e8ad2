"""`serve:`: the limits of `ragjudge serve`, the analysis service for Flagger and Argo Rollouts."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from ragjudge.config.section import Section


class ServeConfig(Section):
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
