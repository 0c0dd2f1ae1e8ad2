"""parse_reply: the reply shapes of the seeds, and `response:` mappings of dotted paths."""

from __future__ import annotations

import pytest

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.paths import dig
from ragjudge.endpoint.reply import MAX_CONVERSATION_ID_CHARS, ReplyShapeError, parse_reply
from ragjudge.endpoint.trace import Passage

NO_MAPPING = ResponseMapping()


def parse(data, mapping=NO_MAPPING, latency_ms=12.5):
    return parse_reply(data, mapping, latency_ms)


# --- answer, refused, confidence -----------------------------------------------------------------


def test_answer_refused_confidence():
    trace = parse({"answer": "Refunds take 7 days.", "refused": False, "confidence": "High "})
    assert trace.answer == "Refunds take 7 days."
    assert trace.refused is False
    assert trace.confidence == "high"
    assert trace.passages == ()
    assert trace.citations == ()
    assert trace.cost_usd is None
    assert trace.server_latency_ms is None
    assert trace.latency_ms == 12.5


def test_refusal_with_confidence_none():
    trace = parse({"answer": "抱歉，这个问题超出了我的服务范围。", "refused": True, "confidence": "none"})
    assert (trace.refused, trace.confidence) == (True, "none")


@pytest.mark.parametrize(("answer", "refused"), [("An answer.", False), ("", True), ("   ", True)])
def test_refused_defaults_to_an_empty_answer(answer, refused):
    assert parse({"answer": answer}).refused is refused


@pytest.mark.parametrize("value", ["", "  "])
def test_blank_confidence_is_none(value):
    assert parse({"answer": "a", "confidence": value}).confidence is None


def test_refusal_without_an_answer_is_accepted():
    trace = parse({"refused": True, "confidence": "none"})
    assert (trace.answer, trace.refused) == ("", True)


def test_missing_answer_names_the_field_and_lists_the_keys():
    with pytest.raises(ReplyShapeError) as info:
        parse({"output": "text", "docs": [], "meta": {}})
    assert str(info.value) == (
        'reply has no "answer" field (keys: docs, meta, output); '
        "set endpoint.response.answer to the answer's dotted path (did you mean output?)"
    )


def test_missing_answer_with_refused_false_is_an_error():
    # Saying "not refused" without any answer is a shape ragjudge cannot read, not an empty answer.
    with pytest.raises(ReplyShapeError) as info:
        parse({"refused": False, "text": "hi"})
    assert str(info.value).startswith('reply has no "answer" field (keys: refused, text);')


def test_null_answer_counts_as_missing():
    with pytest.raises(ReplyShapeError, match=r'^reply has no "answer" field \(keys: answer\);'):
        parse({"answer": None})


def test_empty_object():
    with pytest.raises(ReplyShapeError, match=r'^reply has no "answer" field \(keys: none\);'):
        parse({})


@pytest.mark.parametrize(("data", "kind"), [([], "list"), ("text", "str"), (3, "int"), (None, "NoneType")])
def test_reply_must_be_an_object(data, kind):
    with pytest.raises(ReplyShapeError) as info:
        parse(data)
    assert str(info.value) == f"reply is a JSON {kind}, not an object"


def test_non_string_answer_is_stringified():
    assert parse({"answer": 42}).answer == "42"


# --- passages ------------------------------------------------------------------------------------


def test_retrieved_objects_with_id_title_text():
    trace = parse(
        {
            "answer": "a",
            "retrieved": [
                {"id": "doc-refund-1", "title": "Refunds", "text": "  Seven days, no reason needed.  "},
                {"source": "doc-refund-3", "excerpt": "Gifts go back with the main item."},
                {"content": "Content only."},
                {"id": "doc-empty", "title": "A title alone"},
            ],
        }
    )
    assert trace.passages == (
        Passage("doc-refund-1", "Refunds", "Seven days, no reason needed."),
        Passage("doc-refund-3", "(untitled)", "Gifts go back with the main item."),
        Passage("S3", "(untitled)", "Content only."),
        Passage("doc-empty", "A title alone", ""),
    )
    assert trace.retrieved_ids == ("doc-refund-1", "doc-refund-3", "S3", "doc-empty")
    # A title is not evidence: only passages with text are.
    assert [p.id for p in trace.evidence] == ["doc-refund-1", "doc-refund-3", "S3"]


def test_id_wins_over_source_and_text_over_excerpt():
    trace = parse({"answer": "a", "retrieved": [{"id": "i", "source": "s", "text": "t", "excerpt": "e"}]})
    assert trace.passages == (Passage("i", "(untitled)", "t"),)


def test_numeric_ids_become_strings():
    trace = parse({"answer": "a", "retrieved": [{"id": 7, "text": "x"}]})
    assert trace.retrieved_ids == ("7",)


def test_sources_is_read_like_retrieved():
    trace = parse(
        {
            "answer": "a",
            "sources": [{"source": "kb/invoices.md", "title": "Invoices", "excerpt": "VAT invoices need a tax id."}],
        }
    )
    assert trace.passages == (Passage("kb/invoices.md", "Invoices", "VAT invoices need a tax id."),)


def test_retrieved_strings_with_parallel_retrieved_ids():
    # The seed's RagTrace: retrieved: string[]; retrievedIds: string[].
    trace = parse(
        {
            "answer": "a",
            "refused": False,
            "retrieved": ["退款政策：7 天无理由退换", "赠品需随主商品退回"],
            "retrievedIds": ["doc-refund-1", "doc-refund-3"],
        }
    )
    assert trace.passages == (
        Passage("doc-refund-1", "(untitled)", "退款政策：7 天无理由退换"),
        Passage("doc-refund-3", "(untitled)", "赠品需随主商品退回"),
    )


def test_more_ids_than_passages_still_count_for_recall():
    trace = parse({"answer": "a", "retrieved": ["one"], "retrievedIds": ["d1", "d2", "d3"]})
    assert trace.retrieved_ids == ("d1", "d2", "d3")
    assert [p.text for p in trace.passages] == ["one", "", ""]
    assert [p.id for p in trace.evidence] == ["d1"]


def test_fewer_ids_than_passages_fall_back_to_positions():
    trace = parse({"answer": "a", "retrieved": ["one", "two"], "retrieved_ids": ["d1"]})
    assert trace.retrieved_ids == ("d1", "S2")


def test_ids_alone_without_passages():
    trace = parse({"answer": "a", "retrievedIds": ["d1", "d2"]})
    assert trace.retrieved_ids == ("d1", "d2")
    assert trace.evidence == ()


def test_retrieved_that_is_not_a_list_is_an_error_naming_the_field():
    with pytest.raises(ReplyShapeError) as info:
        parse({"answer": "a", "retrieved": "doc-1"})
    assert str(info.value) == "endpoint.response.retrieved: retrieved is a string, not a list of passages"


# --- citations, cost, latency --------------------------------------------------------------------


def test_citations_as_objects_and_strings():
    trace = parse(
        {
            "answer": "a",
            "citations": [
                {"title": "Refunds", "source": "doc-refund-1"},
                {"id": "doc-2"},
                {"title": "Only a title"},
                "doc-3",
            ],
        }
    )
    assert trace.citations == ("doc-refund-1", "doc-2", "Only a title", "doc-3")


@pytest.mark.parametrize("key", ["costUsd", "cost_usd"])
def test_cost_in_either_spelling(key):
    assert parse({"answer": "a", key: 0.0031}).cost_usd == 0.0031


@pytest.mark.parametrize("value", ["0.01", True, None, [1]])
def test_cost_that_is_not_a_number_is_unknown(value):
    assert parse({"answer": "a", "costUsd": value}).cost_usd is None


def test_reported_latency_is_kept_beside_the_measured_one():
    trace = parse({"answer": "a", "latencyMs": 98765}, latency_ms=31.0)
    assert trace.server_latency_ms == 98765.0
    assert trace.latency_ms == 31.0


def test_snake_case_latency_is_also_server_latency():
    trace = parse({"answer": "a", "latency_ms": 40}, latency_ms=31.0)
    assert (trace.server_latency_ms, trace.latency_ms) == (40.0, 31.0)


# --- response mapping ----------------------------------------------------------------------------


def test_mapping_of_dotted_paths():
    mapping = ResponseMapping(
        answer="data.output.text",
        refused="data.output.declined",
        confidence="data.output.certainty",
        retrieved="data.docs",
        retrieved_id="doc_id",
        retrieved_text="chunk",
        retrieved_title="meta.name",
        citations="data.refs",
        cost_usd="data.usage.usd",
        latency_ms="data.timing.ms",
    )
    reply = {
        "data": {
            "output": {"text": "Invoices are emailed.", "declined": False, "certainty": "LOW"},
            "docs": [
                {"doc_id": "inv-1", "chunk": "Invoices are emailed within 24 h.", "meta": {"name": "Invoices"}},
                {"doc_id": "inv-2", "chunk": "VAT needs a tax id."},
            ],
            "refs": ["inv-1"],
            "usage": {"usd": 0.25},
            "timing": {"ms": 210},
        },
        # Shapes ragjudge knows by default are ignored once a path is mapped.
        "answer": "not this one",
        "retrieved": [{"id": "not-this", "text": "x"}],
    }
    trace = parse(reply, mapping)
    assert trace.answer == "Invoices are emailed."
    assert trace.refused is False
    assert trace.confidence == "low"
    assert trace.passages == (
        Passage("inv-1", "Invoices", "Invoices are emailed within 24 h."),
        Passage("inv-2", "(untitled)", "VAT needs a tax id."),
    )
    assert trace.citations == ("inv-1",)
    assert trace.cost_usd == 0.25
    assert trace.server_latency_ms == 210.0


def test_mapping_of_the_answer_only_keeps_the_default_shapes_for_the_rest():
    mapping = ResponseMapping(answer="result.answer")
    trace = parse({"result": {"answer": "yes"}, "retrievedIds": ["d1"], "costUsd": 0.1}, mapping)
    assert (trace.answer, trace.retrieved_ids, trace.cost_usd) == ("yes", ("d1",), 0.1)


def test_mapping_with_a_parallel_ids_path():
    mapping = ResponseMapping(answer="out", retrieved="hits.texts", retrieved_ids="hits.ids")
    trace = parse({"out": "a", "hits": {"texts": ["t1", "t2"], "ids": ["k1", "k2"]}}, mapping)
    assert trace.passages == (Passage("k1", "(untitled)", "t1"), Passage("k2", "(untitled)", "t2"))


def test_mapping_to_a_missing_answer_path_names_the_path():
    with pytest.raises(ReplyShapeError) as info:
        parse({"data": {"result": "x"}}, ResponseMapping(answer="data.output.text"))
    assert str(info.value) == (
        "endpoint.response.answer: data.output.text resolves to nothing: data is an object with keys result: "
        "did you mean data.result?"
    )


def test_mapping_path_through_list_indexes():
    mapping = ResponseMapping(answer="choices.0.message.content")
    trace = parse({"choices": [{"message": {"content": "from a list"}}]}, mapping)
    assert trace.answer == "from a list"


@pytest.mark.parametrize("path", ["a.c", "items.2.text", "items.-3", "items.x", "a.b.c", "nope"])
def test_dig_misses_are_missing_not_none(path):
    data = {"a": {"b": 1}, "items": [{"text": "first"}, {"text": "last"}]}
    # A path that leads nowhere is a missing field, not a null one.
    assert dig(data, path) is not None
    with pytest.raises(ReplyShapeError, match=f"^endpoint.response.answer: {path} resolves to nothing: "):
        parse(data, ResponseMapping(answer=path))


# --- mappings cannot fail silently ---------------------------------------------------------------

HAYHOOKS = {
    "result": {
        "answer_builder": {
            "answers": [
                {
                    "data": "Refunds take 5 working days.",
                    "query": "How long do refunds take?",
                    "documents": [
                        {"id": "9f" * 32, "content": "Refunds: 5 working days.", "meta": {"doc_id": "doc-refund-1"}},
                        {"id": "ab" * 32, "content": "Shipping is free.", "meta": {"doc_id": "doc-ship-2"}},
                    ],
                    "meta": {"model": "m"},
                }
            ]
        }
    }
}
HAYHOOKS_MAPPING = ResponseMapping(
    answer="result.answer_builder.answers.0.data",
    retrieved="result.answer_builder.answers.0.documents",
    retrieved_id="meta.doc_id",
)


def test_the_hayhooks_shape_maps_with_list_indexing():
    trace = parse(HAYHOOKS, HAYHOOKS_MAPPING)
    assert trace.answer == "Refunds take 5 working days."
    assert trace.passages == (
        Passage("doc-refund-1", "(untitled)", "Refunds: 5 working days."),
        Passage("doc-ship-2", "(untitled)", "Shipping is free."),
    )
    assert (trace.refused, trace.refused_by, trace.read.positional_ids) == (False, None, 0)


def test_an_object_where_text_is_expected_names_its_keys_and_the_likely_path():
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, ResponseMapping(answer="result.answer_builder.answers.0"))
    assert str(info.value) == (
        "endpoint.response.answer: result.answer_builder.answers.0 is an object with keys data, query, documents, "
        "meta: did you mean result.answer_builder.answers.0.data?"
    )


def test_a_list_where_text_is_expected_is_never_a_python_repr():
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, ResponseMapping(answer="result.answer_builder.answers"))
    assert str(info.value) == (
        "endpoint.response.answer: result.answer_builder.answers is a list of 1 item of objects: "
        "did you mean result.answer_builder.answers.0.data?"
    )
    assert "{'" not in str(info.value)


def test_a_path_that_leads_nowhere_names_the_deepest_level_reached():
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, ResponseMapping(answer="result.answer_builder.answers.0.text"))
    assert str(info.value) == (
        "endpoint.response.answer: result.answer_builder.answers.0.text resolves to nothing: "
        "result.answer_builder.answers.0 is an object with keys data, query, documents, meta: "
        "did you mean result.answer_builder.answers.0.data?"
    )


def test_a_list_index_past_the_end_names_the_list():
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, ResponseMapping(answer="result.answer_builder.answers.3.data"))
    assert str(info.value).startswith(
        "endpoint.response.answer: result.answer_builder.answers.3.data resolves to nothing: "
        "result.answer_builder.answers is a list of 1 item of objects"
    )


def test_passages_mapped_to_an_object_suggest_the_list_inside():
    mapping = HAYHOOKS_MAPPING.model_copy(update={"retrieved": "result.answer_builder.answers.0"})
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, mapping)
    assert str(info.value) == (
        "endpoint.response.retrieved: result.answer_builder.answers.0 is an object with keys data, query, "
        "documents, meta: did you mean result.answer_builder.answers.0.documents?"
    )


def test_a_mapped_passage_list_missing_from_an_answer_is_a_case_error():
    mapping = HAYHOOKS_MAPPING.model_copy(update={"retrieved": "result.docs"})
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, mapping)
    assert str(info.value) == (
        "endpoint.response.retrieved: result.docs resolves to nothing: result is an object with keys answer_builder: "
        "did you mean result.answer_builder.answers.0.documents?"
    )


def test_a_mapped_passage_list_may_be_missing_from_a_refusal():
    mapping = ResponseMapping(answer="out", retrieved="docs")
    trace = parse({"out": "I don't have information about that."}, mapping)
    assert (trace.refused_by, trace.passages) == ("builtin", ())


def test_a_list_of_non_objects_where_passages_are_expected():
    with pytest.raises(ReplyShapeError) as info:
        parse({"answer": "a", "docs": [3, 4]}, ResponseMapping(retrieved="docs"))
    assert str(info.value) == (
        "endpoint.response.retrieved: docs.0 is the number 3, not a passage: each passage must be an object or text"
    )
    with pytest.raises(ReplyShapeError) as info:
        parse({"answer": "a", "docs": ["text"]}, ResponseMapping(retrieved="docs", retrieved_id="id"))
    assert str(info.value) == (
        "endpoint.response.retrieved: docs.0 is a string, not a passage: each passage must be an object "
        "(retrieved_id/retrieved_text/retrieved_title are paths inside one)"
    )


def test_an_object_as_a_passage_id_is_an_error_with_the_full_path():
    mapping = HAYHOOKS_MAPPING.model_copy(update={"retrieved_id": "meta"})
    with pytest.raises(ReplyShapeError) as info:
        parse(HAYHOOKS, mapping)
    assert str(info.value) == (
        "endpoint.response.retrieved_id: result.answer_builder.answers.0.documents.0.meta is an object with keys "
        "doc_id: did you mean result.answer_builder.answers.0.documents.0.meta.doc_id?"
    )


def test_a_mapped_passage_id_that_is_missing_is_left_empty_and_counted_not_invented():
    mapping = HAYHOOKS_MAPPING.model_copy(update={"retrieved_id": "meta.document_id"})
    trace = parse(HAYHOOKS, mapping)
    assert trace.retrieved_ids == ("", "")
    assert trace.read.missed == (("retrieved_id", 2),)
    assert trace.read.positional_ids == 0


def test_positional_ids_only_when_the_reply_has_no_id_at_all():
    trace = parse({"answer": "a", "retrieved": [{"text": "one"}, "two"]})
    assert trace.retrieved_ids == ("S1", "S2")
    assert trace.read.positional_ids == 2
    with_ids = parse({"answer": "a", "retrieved": [{"text": "one"}], "retrievedIds": ["d1"]})
    assert (with_ids.retrieved_ids, with_ids.read.positional_ids) == (("d1",), 0)


def test_an_answer_mapped_to_null_says_so():
    with pytest.raises(ReplyShapeError) as info:
        parse({"out": None}, ResponseMapping(answer="out"))
    assert str(info.value) == "endpoint.response.answer: out is null, not text"


def test_a_mapped_number_must_be_a_number():
    with pytest.raises(ReplyShapeError) as info:
        parse({"answer": "a", "usage": {"usd": "0.01"}}, ResponseMapping(cost_usd="usage.usd"))
    assert str(info.value) == "endpoint.response.cost_usd: usage.usd is a string, not a number"
    with pytest.raises(ReplyShapeError) as info:
        parse({"answer": "a"}, ResponseMapping(cost_usd="usage.usd"))
    assert (
        str(info.value)
        == "endpoint.response.cost_usd: usage.usd resolves to nothing: the reply is an object with keys answer"
    )


@pytest.mark.parametrize(
    ("data", "mapping", "unknown"),
    [
        ({"answer": "a"}, NO_MAPPING, True),  # a chat reply: the service does not expose its passages
        ({"answer": "a", "sources": None}, NO_MAPPING, True),
        ({"answer": "a", "sources": []}, NO_MAPPING, False),  # said: nothing retrieved
        ({"answer": "a", "retrievedIds": []}, NO_MAPPING, False),
        ({"answer": "a", "refs": []}, ResponseMapping(retrieved="refs"), False),
    ],
)
def test_passages_are_unknown_only_when_nothing_maps_or_carries_them(data, mapping, unknown) -> None:
    trace = parse(data, mapping)
    assert (trace.passages, trace.passages_unknown) == ((), unknown)


def test_a_path_suggested_through_a_list_names_its_index() -> None:
    data = {"answers": [{"data": "Refunds take 30 days.", "meta": {}}]}
    with pytest.raises(ReplyShapeError) as caught:
        parse_reply(data, ResponseMapping(answer="answers"), 1.0)
    assert str(caught.value) == (
        "endpoint.response.answer: answers is a list of 1 item of objects: did you mean answers.0.data?"
    )


# --- conversation_id: whole up to its bound, an error past it --------------------------------------


def test_a_conversation_id_is_kept_whole_up_to_8192_characters() -> None:
    assert MAX_CONVERSATION_ID_CHARS == 8192
    session = "s" * 8192
    assert parse({"answer": "ok", "conversation_id": session}).conversation_id == session
    assert parse({"answer": "ok", "conversationId": "a" * 1205}).conversation_id == "a" * 1205


def test_a_conversation_id_over_the_bound_is_an_error_naming_the_bound_and_the_path() -> None:
    mapping = ResponseMapping(conversation_id="meta.session")
    with pytest.raises(ReplyShapeError) as raised:
        parse({"answer": "ok", "meta": {"session": "s" * 8193}}, mapping)
    assert str(raised.value) == (
        "the conversation id is 8,193 characters, over the 8,192 ragjudge carries (endpoint.response.conversation_id, "
        "read at meta.session): an id is never cut, a cut one names another conversation"
    )
