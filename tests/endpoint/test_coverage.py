"""The suite-level mapping check: keys that resolved in no reply, passages that missed a key, positional ids."""

from __future__ import annotations

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.coverage import mapping_warnings
from ragjudge.endpoint.reply import parse_reply

DOCS = [{"id": "hash1", "content": "Refunds take 5 days.", "meta": {"doc_id": "doc-1"}}]


def reply(answer="Refunds take 5 days.", docs=DOCS, **extra):
    return {"out": {"answer": answer, "docs": docs, **extra}}


def read(data, mapping):
    return parse_reply(data, mapping, 1.0)


def test_a_refused_path_that_resolves_in_no_reply_is_warned_once():
    mapping = ResponseMapping(answer="out.answer", retrieved="out.docs", refused="out.declined")
    replies = [(f"c{i}", read(reply(), mapping)) for i in range(3)]
    assert mapping_warnings(replies, mapping) == [
        "endpoint.response.refused (out.declined) resolved in none of the 3 replies: refusals were decided by "
        "empty answers and refusal phrases only; check the path with `ragjudge probe`"
    ]


def test_a_refused_path_found_in_one_reply_is_enough():
    mapping = ResponseMapping(answer="out.answer", retrieved="out.docs", refused="out.declined")
    replies = [("a", read(reply(), mapping)), ("b", read(reply(declined=True), mapping))]
    assert mapping_warnings(replies, mapping) == []


def test_passage_id_and_text_paths_that_resolve_nowhere():
    mapping = ResponseMapping(
        answer="out.answer", retrieved="out.docs", retrieved_id="metadata.doc_id", retrieved_text="page_content"
    )
    replies = [("a", read(reply(), mapping)), ("b", read(reply(), mapping)), ("oos", read(reply(docs=[]), mapping))]
    assert mapping_warnings(replies, mapping) == [
        "endpoint.response.retrieved_id (metadata.doc_id) resolved in none of the 2 replies with passages: passages "
        "have no ids, so context_recall and context_precision cannot match golden ids; check the path with "
        "`ragjudge probe`",
        "endpoint.response.retrieved_text (page_content) resolved in none of the 2 replies with passages: passages "
        "have no text, so faithfulness has no evidence to check claims against; check the path with `ragjudge probe`",
    ]


def test_a_passage_id_path_missing_in_some_passages_names_the_cases():
    mapping = ResponseMapping(answer="out.answer", retrieved="out.docs", retrieved_id="meta.doc_id")
    partial = [*DOCS, {"id": "hash2", "content": "x"}]
    replies = [("good", read(reply(), mapping)), ("partial", read(reply(docs=partial), mapping))]
    assert mapping_warnings(replies, mapping) == [
        "endpoint.response.retrieved_id (meta.doc_id) resolved to nothing in 1 passage(s) of 1 replies (cases partial)"
    ]


def test_positional_ids_and_missing_text_are_said_in_the_report():
    mapping = ResponseMapping()
    replies = [
        ("a", read({"answer": "x", "retrieved": [{"body": "no known keys"}]}, mapping)),
        ("b", read({"answer": "x", "retrieved": [{"body": "y"}, {"body": "z"}]}, mapping)),
        ("err", None),
    ]
    assert mapping_warnings(replies, mapping) == [
        "passages carried no text under text, excerpt, content, page_content in any of the 2 replies with passages: "
        "passages have no text, so faithfulness has no evidence to check claims against; map "
        "endpoint.response.retrieved_text",
        "passages in 2 replies carried no id (cases a, b): ragjudge numbered them S1, S2, ... by position, which "
        "golden ids never match; map endpoint.response.retrieved_id (or retrieved_ids)",
    ]


def test_no_replies_no_warnings():
    assert mapping_warnings([("a", None)], ResponseMapping(refused="x")) == []
