"""What spans say, read by the conventions' rows (`traces/conventions.py` read by `traces/findings.py`): GenAI
retrieval spans, OpenInference retriever spans (flattened, the team's id in the metadata JSON), Haystack component
output (the last filter's documents, `doc_id` from meta, Python repr text), tokens, tool calls and timings, and
secrets masked on the way to the report."""

from __future__ import annotations

import json
from typing import Any

from ragjudge.traces.conventions import BY_NAME, CONVENTIONS
from ragjudge.traces.findings import read_spans
from ragjudge.traces.otlp import Span
from ragjudge.traces.redaction import redact_text


def span(name: str, start_ms: int, end_ms: int, **attributes: Any) -> Span:
    return Span("a" * 32, f"{start_ms:016x}", "b" * 16, name, start_ms * 10**6, end_ms * 10**6, attributes)


def read(spans: list[Span], documents: str | None = None, id_key: str | None = None) -> Any:
    return read_spans(spans, CONVENTIONS, documents=documents, id_key=id_key, redact=redact_text)


def test_openinference_retriever_documents_flattened_with_the_team_id_from_metadata() -> None:
    retriever = span(
        "retrieve",
        0,
        5,
        **{
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.0.document.id": "hash-0",
            "retrieval.documents.0.document.content": "Returns within 7 days.",
            "retrieval.documents.0.document.metadata": json.dumps({"doc_id": "policy-returns"}),
            "retrieval.documents.1.document.id": "hash-1",
            "retrieval.documents.1.document.content": "Shipping is free.",
        },
    )
    llm = span(
        "llm", 5, 9, **{"openinference.span.kind": "LLM", "llm.token_count.prompt": 50, "llm.token_count.completion": 9}
    )
    by_default = read([retriever, llm])
    assert [(p.id, p.text, p.from_trace) for p in by_default.passages] == [
        ("hash-0", "Returns within 7 days.", True),
        ("hash-1", "Shipping is free.", True),
    ]
    assert by_default.passages_from == "openinference"
    assert (by_default.input_tokens, by_default.output_tokens) == (50, 9)
    assert (by_default.retrieval_ms, by_default.generation_ms) == (5.0, 4.0)
    assert by_default.conventions == ("openinference",)
    # traces.id_key: the team's id among the metadata, where a document has it.
    assert [p.id for p in read([retriever], id_key="doc_id").passages] == ["policy-returns", "hash-1"]


def haystack(start_ms: int, kind: str, output: str) -> Span:
    return span(
        "haystack.component.run",
        start_ms,
        start_ms + 2,
        **{"haystack.component.type": kind, "haystack.component.output": output},
    )


def test_haystack_the_last_filters_documents_count_with_doc_id_from_meta() -> None:
    retrieved = [
        {"id": "h1", "content": "Returns within 7 days.", "doc_id": "policy-returns"},
        {"id": "h2", "content": "Gift cards.", "doc_id": "faq-gifts"},
    ]
    kept = retrieved[:1]
    spans = [
        haystack(0, "InMemoryBM25Retriever", json.dumps({"documents": retrieved})),
        haystack(3, "DocumentCleaner", json.dumps({"documents": kept})),
        haystack(6, "OpenAIChatGenerator", json.dumps({"replies": ["..."]})),
    ]
    reading = read(spans)
    assert [(p.id, p.text) for p in reading.passages] == [("policy-returns", "Returns within 7 days.")]
    assert reading.passages_from == "haystack"
    assert (reading.retrieval_ms, reading.generation_ms) == (2.0, 2.0)
    # traces.documents: all: every span's documents, in the order the spans ended.
    assert [p.id for p in read(spans, documents="all").passages] == ["policy-returns", "faq-gifts", "policy-returns"]


def test_haystack_python_repr_output_and_meta_nested() -> None:
    output = repr({"documents": [{"id": "h1", "content": "Seven days.", "meta": {"doc_id": "policy-returns"}}]})
    reading = read([haystack(0, "InMemoryBM25Retriever", output)])
    assert [(p.id, p.text) for p in reading.passages] == [("policy-returns", "Seven days.")]


def test_genai_structured_documents_tools_and_ttfc() -> None:
    spans = [
        span(
            "retrieval",
            0,
            3,
            **{"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": [{"id": "d1", "score": 0.9}]},
        ),
        span(
            "execute_tool search",
            3,
            4,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.arguments": '{"q": "refunds", "headers": {"Authorization": "Bearer abcdefghijkl"}}',
                "gen_ai.tool.call.result": "called with Bearer abcdefghijklmnop",
            },
        ),
        span(
            "chat",
            4,
            10,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 10,
                "gen_ai.usage.output_tokens": 2,
                "gen_ai.response.time_to_first_chunk": 0.25,
            },
        ),
        span("chat", 10, 12, **{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5}),
        # The agent span's own totals are not a model span's: not counted twice.
        span("invoke_agent", 0, 12, **{"gen_ai.operation.name": "invoke_agent", "gen_ai.usage.input_tokens": 15}),
    ]
    reading = read(spans)
    assert [(p.id, p.text) for p in reading.passages] == [("d1", "")]  # an id alone still counts for recall
    assert (reading.input_tokens, reading.output_tokens, reading.ttfc_ms) == (15, 2, 250.0)
    (call,) = reading.tool_calls
    assert call.name == "search"
    assert call.arguments == '{"q": "refunds", "headers": {"Authorization": "***"}}'
    assert call.result == "called with Bearer ***"


def test_the_conventions_are_rows_of_one_registry() -> None:
    assert [c.name for c in CONVENTIONS] == ["gen_ai", "openinference", "haystack"]
    assert BY_NAME["gen_ai"].documents[0].attribute == "gen_ai.retrieval.documents"
    assert BY_NAME["openinference"].documents[0].layout == "flattened"
    assert BY_NAME["haystack"].documents[0].default_id_key == "doc_id"


def test_no_spans_say_nothing() -> None:
    reading = read([span("GET /health", 0, 1)])
    assert (reading.passages, reading.tool_calls, reading.input_tokens, reading.conventions) == ((), (), None, ())


def test_haystack_token_usage_from_the_generators_replies_meta() -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 7}
    output = json.dumps({"replies": [{"role": "assistant", "meta": {"usage": usage}}, {"meta": {"usage": usage}}]})
    streamed = json.dumps({"replies": [{"meta": {"usage": None}}]})  # the streamed route records none
    reading = read([haystack(0, "OpenAIChatGenerator", output), haystack(3, "OpenAIChatGenerator", streamed)])
    assert (reading.input_tokens, reading.output_tokens) == (80, 14)
    assert read([haystack(0, "OpenAIChatGenerator", streamed)]).input_tokens is None


def test_a_token_count_is_not_taken_for_a_credential() -> None:
    text = '{"max_tokens": 512, "input_tokens": 3, "access_token": "abc", "password": "hunter22"}'
    assert redact_text(text) == '{"max_tokens": 512, "input_tokens": 3, "access_token": "***", "password": "***"}'


def test_a_retriever_that_lists_no_document_is_known_empty_not_unknown() -> None:
    # A real hayhooks for an out-of-scope question: the retriever's output is `{"documents": []}`; the components
    # after it lay out no documents at all (None, not "nothing").
    spans = [
        haystack(0, "InMemoryBM25Retriever", json.dumps({"documents": []})),
        haystack(3, "PromptBuilder", json.dumps({"prompt": "Documents: none"})),
    ]
    reading = read(spans)
    assert (reading.passages, reading.passages_from, reading.conventions) == ((), "haystack", ("haystack",))
    # Spans that lay out no documents at all say nothing about them.
    assert read(spans[1:]).passages_from is None
    # A later filter that kept nothing: nothing reached the prompt.
    kept_none = [haystack(0, "InMemoryBM25Retriever", json.dumps({"documents": [{"id": "h", "content": "x"}]}))]
    kept_none.append(haystack(3, "DocumentCleaner", json.dumps({"documents": []})))
    assert (read(kept_none).passages, read(kept_none).passages_from) == ((), "haystack")


def test_genai_time_to_first_chunk_by_the_name_pydantic_ai_records() -> None:
    model = span(
        "chat m", 0, 9, **{"gen_ai.operation.name": "chat", "gen_ai.client.operation.time_to_first_chunk": 0.25}
    )
    assert read([model]).ttfc_ms == 250.0


def _tool(start_ms: int, name: str, result: Any, kind: str = "gen_ai") -> Span:
    text = result if isinstance(result, str) else json.dumps(result)
    if kind == "gen_ai":
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.result": text}
    else:
        attrs = {"openinference.span.kind": "TOOL", "tool.name": name, "output.value": text}
    return span(f"execute_tool {name}", start_ms, start_ms + 1, **attrs)


def test_a_declared_retrieval_tool_s_results_are_the_passages() -> None:
    from ragjudge.traces.conventions import retrieval_tools

    conventions = (retrieval_tools(("search_docs", "kb_lookup")), *CONVENTIONS)

    def passages(spans: list[Span], id_key: str | None = None) -> list[tuple[str, str]]:
        found = read_spans(spans, conventions, documents=None, id_key=id_key, redact=redact_text)
        return [(p.id, p.text or "") for p in found.passages]

    listed = [{"id": "refund-policy", "text": "Refunds within 14 days."}, {"id": "paypal", "text": "PayPal works."}]
    two_searches = [
        _tool(0, "search_docs", listed),
        _tool(2, "lookup_order", [{"id": "A123", "text": "shipped"}]),  # not declared: a tool result only
        _tool(4, "kb_lookup", {"documents": [{"doc_id": "shipping", "content": "2 days."}]}),
    ]
    # Every call's documents count (an agent may search twice), in the order the calls ended.
    assert passages(two_searches) == [
        ("refund-policy", "Refunds within 14 days."),
        ("paypal", "PayPal works."),
        ("shipping", "2 days."),
    ]
    found = read_spans(two_searches, conventions, documents=None, id_key=None, redact=redact_text)
    assert found.passages_from == "retrieval_tools" and all(p.from_trace for p in found.passages)
    # Tool calls are still tool calls, each counted once.
    assert [c.name for c in found.tool_calls] == ["search_docs", "lookup_order", "kb_lookup"]
    # OpenInference's tool spans too (`tool.name`, `output.value`).
    assert passages([_tool(0, "kb_lookup", listed[:1], kind="openinference")]) == [
        ("refund-policy", "Refunds within 14 days.")
    ]
    # The team's id among a document's metadata (traces.id_key).
    hashed = [_tool(0, "search_docs", {"results": [{"id": "h1", "metadata": {"doc_id": "returns"}, "text": "x"}]})]
    assert passages(hashed, id_key="doc_id") == [("returns", "x")]
    # An undeclared tool, or a result that is not a list of documents, gives none.
    assert passages([_tool(0, "lookup_order", listed)]) == []
    assert read_spans([_tool(0, "search_docs", "no documents")], conventions, documents=None, id_key=None,
                      redact=redact_text).passages_from is None  # fmt: skip
    # Without the declaration, a retrieval tool's result is not read as passages.
    assert read([_tool(0, "search_docs", listed)]).passages == ()
