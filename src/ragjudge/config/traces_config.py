"""`traces:`: join each case with the service's OpenTelemetry trace (issue 41).

Absent, nothing about tracing happens: no header is added, no port is opened. Set, every request carries a
W3C `traceparent` and the spans the service exports are read for what its reply did not say.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from ragjudge.config.section import Section

_HOST_PORT = re.compile(r"(?P<host>[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


class TraceStoreConfig(Section):
    """`traces.store`: read each case's trace from the team's trace store instead of receiving it."""

    kind: str = Field(description="The store's kind (`phoenix`; `ragjudge.traces.stores`).")
    url: str = Field(description="The store's base URL (Phoenix: where its UI and REST API answer).")
    project: str = Field("default", description="The store's project the service exports to.")
    api_key_env: str | None = Field(
        None,
        description="The environment variable that holds the store's API key, sent as `Authorization: Bearer`; "
        "never printed. Unset: no key is sent.",
    )


class TraceExportConfig(Section):
    """`traces.export`: each case's verdicts sent back as `gen_ai.evaluation.result` events, over OTLP/HTTP."""

    url: str = Field(description="The OTLP/HTTP endpoint's base URL (`/v1/traces` is added unless given).")


class TracePriceConfig(Section):
    """`traces.price`: what the service's model costs, to turn the tokens its spans record into its cost."""

    input_usd_per_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_usd_per_mtok: float = Field(ge=0, description="USD per million output tokens.")


class TracesConfig(Section):
    """`traces:`: the service's OpenTelemetry spans, joined with each case."""

    receive: str = Field(
        "127.0.0.1:4318",
        description="HOST:PORT of the built-in OTLP/HTTP receiver (`/v1/traces`) for the run's duration; port 0 "
        "picks a free one. A host other than loopback needs `allow_remote: true`.",
    )
    allow_remote: bool = Field(
        False, description="Let `receive` bind a host other than loopback (spans then come from the network)."
    )
    settle_s: float = Field(5.0, ge=0, le=120, description="How long after a reply its spans may still arrive (s).")
    conventions: list[str] | None = Field(
        None,
        description="The span conventions read, by name (`ragjudge.traces.conventions`: `gen_ai`, `openinference`, "
        "`haystack`); unset: all of them.",
    )
    documents: str | None = Field(
        None,
        description="Which spans' documents count as the passages: `last` (the last span that carries documents: "
        "a filter after the retriever) or `all`; unset: each convention's own default.",
    )
    retrieval_tools: list[str] = Field(
        default_factory=list,
        max_length=32,
        description="Tools whose result lists the retrieved documents (an agent that retrieves with a tool, e.g. "
        "Pydantic AI's `search_docs`): each call's result (a JSON list of documents, or an object with one under "
        "`documents` or `results`; ids from `id` or `doc_id`, or `id_key`) counts as the passages, before any "
        "convention's retriever spans. Unset: tool results are tool results only.",
    )
    id_key: str | None = Field(
        None,
        description="The key, among a document's metadata, that holds the team's own id (`doc_id`); unset: each "
        "convention's default (Haystack: `doc_id`, else the document's id).",
    )
    max_body_bytes: int = Field(
        4_000_000, ge=1024, le=64_000_000, description="A larger OTLP request is refused (HTTP 413) unread."
    )
    max_spans: int = Field(
        100_000, ge=1, le=10_000_000, description="Spans kept in a run; past this, spans are dropped and counted."
    )
    max_attribute_chars: int = Field(
        20_000, ge=100, le=1_000_000, description="A longer attribute value is cut to this many characters."
    )
    price: TracePriceConfig | None = Field(
        None,
        description="The service's model price: each case's `trace.spans.cost_usd` from the tokens its spans "
        "record, apart from the judge's cost; unset: no service cost.",
    )
    store: TraceStoreConfig | None = Field(
        None,
        description="Read each trace from the team's trace store by the trace id sent, instead of receiving it: "
        "no receiver is started, and `receive` must be left out. Joins by `traceparent` only.",
    )
    export: TraceExportConfig | None = Field(
        None, description="Send each case's verdicts back as `gen_ai.evaluation.result` events over OTLP/HTTP."
    )

    @field_validator("receive")
    @classmethod
    def _host_port(cls, value: str) -> str:
        found = _HOST_PORT.fullmatch(value.strip())
        if found is None or int(found["port"]) > 65535:
            raise ValueError("must be HOST:PORT, e.g. 127.0.0.1:4318 (port 0: any free port)")
        return value.strip()

    @field_validator("documents")
    @classmethod
    def _documents(cls, value: str | None) -> str | None:
        if value is not None and value not in ("last", "all"):
            raise ValueError("must be `last` or `all`")
        return value

    def bind(self) -> tuple[str, int]:
        """The receiver's host (without brackets) and port."""
        found = _HOST_PORT.fullmatch(self.receive)
        assert found is not None  # checked when read
        return found["host"].strip("[]"), int(found["port"])

    def is_loopback(self) -> bool:
        host = self.receive.rpartition(":")[0]
        return host in LOOPBACK_HOSTS
