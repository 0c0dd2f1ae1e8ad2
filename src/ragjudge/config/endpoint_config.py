"""`endpoint:`: how the RAG endpoint under test is called, and how its reply is read (`response:`, `refusal:`)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ragjudge.config import presets
from ragjudge.config.headers import Headers
from ragjudge.config.protocol import BuiltinProtocol, FailureShapeName, ProtocolSetting
from ragjudge.config.section import MAX_TIMEOUT_S, Section
from ragjudge.transport import urls

DEFAULT_BODY = '{"question": {{ question | tojson }}}'


class ResponseMapping(Section):
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
    tool_calls: str | None = Field(
        None,
        description="Path to the list of tool calls the service made (each a `name` or `function.name`, its "
        "`arguments`, `args` or `input`, its `result` or `output`); unset: `tool_calls`, `toolCalls`. A streamed "
        "reply's calls are read by its protocol.",
    )
    retrieval_tool: str | None = Field(
        None,
        description="The name of the agent's retrieval tool: the results of its calls are the passages (a list, "
        "or an object whose `response.retrieved` or default keys hold them); a case whose agent never called it "
        "retrieved nothing.",
    )
    conversation_id: str | None = Field(
        None,
        description="Path to the id a stateful service gives a conversation, passed to the next turn's templates "
        "as `conversation_id`; unset: `conversation_id`, `conversationId`.",
    )


class RefusalConfig(Section):
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


class EndpointConfig(Section):
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
        "streamed), `openai-responses` (the Responses API), `ai-sdk` (an AI SDK UI message stream route), "
        "`langserve` (a LangServe runnable's `/stream`) or `ag-ui` (an AG-UI agent endpoint): the body, the "
        "protocol of the same name, and response "
        "keys; a given `body`, `protocol` and `response:` keys win.",
    )
    protocol: ProtocolSetting | None = Field(
        None,
        description="How a streamed reply's events are read: a built-in protocol's name, or one declared with "
        "`text`, `end`, `error`, `passages`, ... (docs/streams.md: Stream protocols). Unset: the mapped "
        "`answer_delta` in every event, and the stream ends when the connection closes.",
    )
    ignore_failure_shapes: list[FailureShapeName] = Field(
        default_factory=list,
        description="Common failure shapes every stream reader takes for a failure, whatever the protocol, turned "
        "off by name for a stream that uses one for something else: `error-event`, `error-object`, `type-error`, "
        "`run-error`, `response-failed`, `finish-reason-error` (docs/streams.md: Failures). A built-in protocol's "
        "marker of that shape goes too; a declared `error:` marker stays.",
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
        description="Dotted paths into the reply; a key left out reads its default keys "
        "(docs/replies.md: Response mapping).",
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
