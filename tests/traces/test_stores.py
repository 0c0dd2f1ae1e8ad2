"""A trace store's reply read into spans (`traces/stores.py`, `traces/store_reader.py`), within bounds: odd text made
safe, long values cut, the OpenInference span kind put back where the span itself said it, pages followed up to
`traces.max_spans`, and a reply of another shape refused with what is wrong. The reader against a loopback server
that answers as the test says (the real Phoenix: tests/traces/test_store_phoenix.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragjudge.traces.context import new_context
from ragjudge.traces.store_reader import StoreFailure, StoreReader
from ragjudge.traces.stores import BY_NAME, PHOENIX, STORES, BadReply, read_reply, spans_url
from tests.fakes.responder_server import Exchange, ResponderServer

TRACE = "0af7651916cd43dd8448eb211c80319c"


def phoenix_span(span_id: str, parent: str | None = None, kind: str = "UNKNOWN", **attributes: Any) -> dict[str, Any]:
    return {
        "id": "U3Bhbjox",
        "name": "retrieval",
        "context": {"trace_id": TRACE, "span_id": span_id},
        "span_kind": kind,
        "parent_id": parent,
        "start_time": "2026-12-05T15:04:34.615442+00:00",
        "end_time": "2026-12-05T15:04:34.617454Z",
        "status_code": "UNSET",
        "attributes": attributes,
        "events": [],
    }


def test_a_phoenix_span_reads_as_the_receiver_would_make_it() -> None:
    reply = {"data": [phoenix_span("b7ad6b7169203331", "00f067aa0ba902b7", "RETRIEVER", **{"a.b": 1})]}
    (span,), cursor = read_reply(PHOENIX, reply, 100)
    assert cursor is None
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, "b7ad6b7169203331", "00f067aa0ba902b7")
    assert span.start_ns == 1_796_483_074_615_442_000
    assert span.duration_ms == 2.012
    # The kind Phoenix keeps apart is put back, as the span's own attribute said it.
    assert span.attributes == {"a.b": 1, "openinference.span.kind": "RETRIEVER"}


def test_the_kind_phoenix_derived_from_gen_ai_attributes_is_not_put_back() -> None:
    derived = phoenix_span("b7ad6b7169203331", kind="LLM", **{"gen_ai.operation.name": "chat"})
    unknown = phoenix_span("c7ad6b7169203331", kind="UNKNOWN")
    spans, _ = read_reply(PHOENIX, {"data": [derived, unknown]}, 100)
    assert [dict(s.attributes) for s in spans] == [{"gen_ai.operation.name": "chat"}, {}]
    assert spans[1].parent_span_id == ""  # a null parent: a root span


def test_odd_text_is_made_safe_and_long_values_are_cut() -> None:
    body = json.dumps(
        {
            "data": [
                phoenix_span(
                    "b7ad6b7169203331",
                    **{
                        "text": "bad \ud800 and \x1b[31m escape",
                        "long": "x" * 500,
                        "list": list(range(2000)),
                        "deep": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}},
                    },
                )
            ]
        }
    )
    (span,), _ = read_reply(PHOENIX, json.loads(body), 100)
    assert span.attributes["text"] == "bad \ufffd and \ufffd[31m escape"
    assert span.attributes["long"] == "x" * 100
    assert len(span.attributes["list"]) == 1000
    assert span.attributes["deep"]["a"]["b"]["c"]["d"]["e"]["f"]["g"] == {"h": None}  # cut at MAX_DEPTH


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ([], "the reply is not a JSON object"),
        ({"data": {}}, "the reply has no `data` list"),
        ({"data": ["x"]}, "a span is not a JSON object"),
        ({"data": [{**phoenix_span("b7ad6b7169203331"), "parent_id": "zz"}]}, "`parent_id` is not 16 hex digits"),
        ({"data": [{**phoenix_span("b7ad6b7169203331"), "start_time": "yesterday"}]}, "`start_time` is not an ISO"),
        ({"data": [{**phoenix_span("b7ad6b7169203331"), "end_time": "2026-12-05T15:04:34"}]}, "with a zone"),
        ({"data": [{**phoenix_span("b7ad6b7169203331"), "attributes": [1]}]}, "`attributes` is not an object"),
    ],
)
def test_a_reply_of_another_shape_is_refused_saying_what_is_wrong(reply: Any, why: str) -> None:
    with pytest.raises(BadReply, match=why.replace("(", r"\(")):
        read_reply(PHOENIX, reply, 100)


def test_stores_are_rows_of_one_registry_and_the_project_is_quoted() -> None:
    assert [s.name for s in STORES] == ["phoenix"] and BY_NAME["phoenix"] is PHOENIX
    assert spans_url(PHOENIX, "http://127.0.0.1:6006/", "my project") == (
        "http://127.0.0.1:6006/v1/projects/my%20project/spans"
    )


def reader(url: str, max_spans: int = 1000) -> StoreReader:
    return StoreReader(
        PHOENIX, url, "default", api_key=None, max_body_bytes=100_000, max_spans=max_spans, max_attribute_chars=100
    )


def test_pages_are_followed_up_to_max_spans_and_the_rest_counted() -> None:
    def pages(ex: Exchange) -> None:
        n = ex.n
        ex.json({"data": [phoenix_span(f"{n:015x}{k}") for k in range(3)], "next_cursor": "more" if n < 2 else None})

    with ResponderServer(pages) as store:
        fetched = reader(store.origin, max_spans=7).fetch(TRACE)
    assert len(fetched.spans) == 7 and fetched.over == 2
    sent = [r.path for r in store.requests]
    assert sent[0] == f"/v1/projects/default/spans?trace_id={TRACE}&limit=1000"
    assert sent[1:] == [f"/v1/projects/default/spans?trace_id={TRACE}&limit=1000&cursor=more"] * 2


def test_it_waits_for_the_spans_to_come_and_stop_changing() -> None:
    context = new_context()
    top = {**phoenix_span("a" * 16, context.span_id), "context": {"trace_id": context.trace_id, "span_id": "a" * 16}}
    child = {**phoenix_span("b" * 16, "a" * 16), "context": {"trace_id": context.trace_id, "span_id": "b" * 16}}

    def ingesting(ex: Exchange) -> None:
        # Nothing yet, then the child alone, then both (the service's own span last): read once both stay put.
        ex.json({"data": [[], [child], [child, top]][min(ex.n, 2)]})

    with ResponderServer(ingesting) as store:
        fetched = reader(store.origin).settled(context, settle_s=10.0)
    assert {s.span_id for s in fetched.spans} == {"a" * 16, "b" * 16}
    assert len(store.requests) == 4  # the last ask saw the same spans as the one before


def test_a_redirect_is_not_followed_but_a_failure_naming_the_store() -> None:
    # The request may carry the store's API key: it goes to the store named, nowhere else.
    store = ResponderServer(lambda ex: ex.send(302, b"", headers={"Location": "http://example.com/"}))
    with store, pytest.raises(StoreFailure, match=f"^the trace store {store.origin} answered HTTP 302$"):
        reader(store.origin).fetch(TRACE)
    assert len(store.requests) == 1
