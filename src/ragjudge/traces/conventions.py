"""Which span attributes say what, per convention: one table of rows each, read by `traces.findings` alone.

A new convention (or a framework's own attributes) is a new `Convention` here, not a code path. The attribute
names are the published ones: the OpenTelemetry GenAI semantic conventions (`gen_ai.*`: retrieval spans with
`gen_ai.retrieval.documents`, `execute_tool` spans, usage and time to first chunk), OpenInference's
(`retrieval.documents.<i>.document.*`, `llm.token_count.*`, `openinference.span.kind`) and Haystack's own
tracer (`haystack.component.run` spans, whose `haystack.component.output` is JSON when content tracing is on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SpanMatch:
    """Which spans a row reads: every condition given must hold."""

    name: str | None = None
    """The span's name, exactly (`haystack.component.run`)."""
    name_prefix: str | None = None
    """The start of the span's name (`execute_tool`, as `execute_tool <tool>`)."""
    attribute: str | None = None
    """An attribute the span must have..."""
    values: tuple[str, ...] = ()
    """...with one of these values (any value when empty)."""
    contains: str | None = None
    """...or whose value contains this (`Retriever` in `haystack.component.type`)."""


ANY_SPAN = SpanMatch()


@dataclass(frozen=True)
class DocumentsRow:
    """Where a span lays its retrieved documents, and where a document keeps its id, text and title."""

    spans: SpanMatch
    attribute: str
    """The attribute: a JSON list (or structured array), a JSON object, or the prefix of flattened keys."""
    layout: Literal["json", "flattened"]
    """`json`: one attribute holding the list (as JSON text or structured); `flattened`: `<attribute>.<i>.<key>`."""
    path: str = ""
    """Inside a JSON object, the dotted path to the list (`documents`); empty when the value is the list."""
    also_paths: tuple[str, ...] = ()
    """Paths tried in turn, for each span, when `path` finds no list (a tool's result: the list, or an object's)."""
    id_paths: tuple[str, ...] = ("id",)
    """Inside a document, where its id is: the first found wins."""
    text_paths: tuple[str, ...] = ("content",)
    title_paths: tuple[str, ...] = ()
    meta_paths: tuple[str, ...] = ()
    """Inside a document, where the team's own metadata keys sit (`` for the top level); a metadata value that is
    JSON text is read as JSON. `traces.id_key` (or `default_id_key`) is looked up there before `id_paths`."""
    default_id_key: str | None = None
    """The metadata key that holds the team's id by this convention's habit (Haystack: `doc_id`)."""
    which: Literal["last", "all"] = "last"
    """Which matching spans count: the `last` to end (a filter after the retriever), or `all` of them."""


@dataclass(frozen=True)
class TokensRow:
    """Token usage on a model span."""

    spans: SpanMatch
    input: str
    output: str
    """Attributes; or, with `inside`, dotted paths in that attribute's JSON (`*` for every item of a list)."""
    inside: str | None = None
    """A JSON attribute that holds the usage (Haystack's `haystack.component.output`)."""


@dataclass(frozen=True)
class ToolRow:
    """A tool call span: its tool's name, arguments and result attributes."""

    spans: SpanMatch
    name: str
    arguments: str
    result: str


@dataclass(frozen=True)
class Convention:
    """One convention's table."""

    name: str
    documents: tuple[DocumentsRow, ...] = ()
    tokens: tuple[TokensRow, ...] = ()
    tools: tuple[ToolRow, ...] = ()
    retrieval_spans: tuple[SpanMatch, ...] = ()
    """Spans whose durations add up to the retrieval time."""
    generation_spans: tuple[SpanMatch, ...] = ()
    """Spans whose durations add up to the generation time."""
    ttfc_seconds: tuple[str, ...] = ()
    """Attributes holding the model's time to first chunk, in seconds."""
    conversation_id: tuple[str, ...] = ()
    """Attributes holding the conversation id (a second way to join, beside `traceparent`)."""


_GENAI_OP = "gen_ai.operation.name"
_GENAI_MODEL_OPS = ("chat", "text_completion", "generate_content")
_OI_KIND = "openinference.span.kind"
_HAYSTACK_RUN = "haystack.component.run"

CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        name="gen_ai",
        documents=(
            DocumentsRow(
                spans=ANY_SPAN,
                attribute="gen_ai.retrieval.documents",
                layout="json",
                text_paths=("content", "text"),
                title_paths=("title",),
                meta_paths=("metadata",),
            ),
        ),
        tokens=(
            TokensRow(
                SpanMatch(attribute=_GENAI_OP, values=_GENAI_MODEL_OPS),
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens",
            ),
        ),
        tools=(
            ToolRow(
                SpanMatch(attribute=_GENAI_OP, values=("execute_tool",)),
                "gen_ai.tool.name",
                "gen_ai.tool.call.arguments",
                "gen_ai.tool.call.result",
            ),
        ),
        retrieval_spans=(SpanMatch(attribute=_GENAI_OP, values=("retrieval",)),),
        generation_spans=(SpanMatch(attribute=_GENAI_OP, values=_GENAI_MODEL_OPS),),
        # The semantic conventions' name, and the one Pydantic AI 2.78 records on its model spans.
        ttfc_seconds=("gen_ai.response.time_to_first_chunk", "gen_ai.client.operation.time_to_first_chunk"),
        conversation_id=("gen_ai.conversation.id",),
    ),
    Convention(
        name="openinference",
        documents=(
            DocumentsRow(
                spans=SpanMatch(attribute=_OI_KIND, values=("RETRIEVER",)),
                attribute="retrieval.documents",
                layout="flattened",
                id_paths=("document.id",),
                text_paths=("document.content",),
                meta_paths=("document.metadata",),
            ),
        ),
        tokens=(
            TokensRow(
                SpanMatch(attribute=_OI_KIND, values=("LLM",)),
                "llm.token_count.prompt",
                "llm.token_count.completion",
            ),
        ),
        tools=(ToolRow(SpanMatch(attribute=_OI_KIND, values=("TOOL",)), "tool.name", "input.value", "output.value"),),
        retrieval_spans=(SpanMatch(attribute=_OI_KIND, values=("RETRIEVER",)),),
        generation_spans=(SpanMatch(attribute=_OI_KIND, values=("LLM",)),),
        conversation_id=("session.id",),
    ),
    Convention(
        name="haystack",
        documents=(
            DocumentsRow(
                # The retriever's documents and every later filter's: the last to end reached the prompt.
                spans=SpanMatch(name=_HAYSTACK_RUN),
                attribute="haystack.component.output",
                layout="json",
                path="documents",
                meta_paths=("", "meta"),
                default_id_key="doc_id",
                which="last",
            ),
        ),
        tokens=(
            TokensRow(
                SpanMatch(name=_HAYSTACK_RUN, attribute="haystack.component.type", contains="Generator"),
                "replies.*.meta.usage.prompt_tokens",
                "replies.*.meta.usage.completion_tokens",
                inside="haystack.component.output",
            ),
        ),
        retrieval_spans=(SpanMatch(name=_HAYSTACK_RUN, attribute="haystack.component.type", contains="Retriever"),),
        generation_spans=(SpanMatch(name=_HAYSTACK_RUN, attribute="haystack.component.type", contains="Generator"),),
    ),
)
"""Every convention ragjudge reads, in the order their passages are preferred."""

BY_NAME = {c.name: c for c in CONVENTIONS}

RETRIEVAL_TOOLS = "retrieval_tools"
TOOL_RESULT_PATHS = ("documents", "results")
"""Where a retrieval tool's result keeps its documents: the result is the list, or an object holds it here."""


def retrieval_tools(names: tuple[str, ...]) -> Convention:
    """`traces.retrieval_tools`: an agent that retrieves with a tool (Pydantic AI's `search_docs`) lists its
    documents in the tool call's result. Made of every convention's tool rows, so a convention's tool spans are
    read for documents too with no row more; each call's documents count (an agent may search twice), from the
    first convention whose tool spans list any."""
    return Convention(
        name=RETRIEVAL_TOOLS,
        documents=tuple(
            DocumentsRow(
                spans=SpanMatch(attribute=tool.name, values=names),
                attribute=tool.result,
                layout="json",
                also_paths=TOOL_RESULT_PATHS,
                id_paths=("id", "doc_id"),
                text_paths=("content", "text", "page_content"),
                title_paths=("title",),
                meta_paths=("", "metadata", "meta"),
                which="all",
            )
            for convention in CONVENTIONS
            for tool in convention.tools
        ),
    )
