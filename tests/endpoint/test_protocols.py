"""Stream protocols as data: each built-in one read by the one reader, a team's own declared in config, and an
undeclared stream read without guessing (and its failures never an answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragjudge.cases.case import Case, Exchange
from ragjudge.config.endpoint_config import EndpointConfig, ResponseMapping
from ragjudge.config.loader import load_config
from ragjudge.endpoint.events import Event, SseParser
from ragjudge.endpoint.protocols import BUILTIN, declared, read_body
from ragjudge.endpoint.recognition import recognise
from ragjudge.endpoint.reply import ReplyShapeError, parse_reply
from ragjudge.endpoint.stream import Assembly, StreamFault
from ragjudge.endpoint.wiring import carries_history, history_warning
from ragjudge.errors import ConfigError


def _read(protocol: Any, events: list[tuple[str, Any]], mapping: ResponseMapping | None = None) -> Assembly:
    """Events given as (name, JSON value or raw text), read until the protocol stops; the close is checked."""
    assembly = Assembly(mapping or ResponseMapping(), protocol=protocol)
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        if assembly.add(Event(name, text)):
            break
    else:
        assembly.check_end()
    return assembly


def _ai(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "", {"type": kind, **fields}


AI_OK = [
    _ai("start", messageId="m-1"),
    _ai("source-document", sourceId="refund-policy", mediaType="text/plain", title="Refunds"),
    _ai("source-document", sourceId="shipping-times", mediaType="text/plain", title="Shipping"),
    _ai("data-sources", data={"documents": [{"id": "refund-policy", "text": "Refunds take 14 days."}]}),
    _ai("start-step"),
    _ai("reasoning-start", id="r"),
    _ai("reasoning-delta", id="r", delta="The user asks about refunds."),
    _ai("reasoning-end", id="r"),
    _ai("text-start", id="t"),
    _ai("text-delta", id="t", delta="Refunds take "),
    _ai("text-delta", id="t", delta="14 days."),
    _ai("text-end", id="t"),
    _ai("finish-step"),
    _ai("finish", finishReason="stop"),
    ("", "[DONE]"),
]


def test_the_ai_sdk_stream_reads_text_parts_only_and_collects_every_source_part() -> None:
    assembly = _read(BUILTIN["ai-sdk"], AI_OK)
    trace = parse_reply(assembly.reply(), ResponseMapping(), 1.0)
    assert trace.answer == "Refunds take 14 days."  # the reasoning is not the answer
    assert [(p.id, p.title) for p in trace.passages] == [("refund-policy", "Refunds"), ("shipping-times", "Shipping")]
    assert "".join(assembly.reasoning) == "The user asks about refunds."
    assert (assembly.finish_reason, assembly.ended) == ("stop", True)


def test_a_reasoning_part_is_not_the_first_token() -> None:
    assembly = Assembly(ResponseMapping(), protocol=BUILTIN["ai-sdk"])
    assembly.add(Event("", json.dumps({"type": "reasoning-delta", "id": "r", "delta": "thinking"})))
    assert assembly.first_answer is False
    assembly.add(Event("", json.dumps({"type": "text-delta", "id": "t", "delta": "Refunds"})))
    assert assembly.first_answer is True


@pytest.mark.parametrize(
    ("last", "reason"),
    [
        (_ai("error", errorText="An error occurred."), "the stream sent an error part: An error occurred."),
        (_ai("abort"), "the stream was aborted"),
        (_ai("finish", finishReason="error"), 'the stream finished with finishReason "error"'),
    ],
)
def test_an_ai_sdk_failure_is_a_fault_never_an_empty_answer(last: tuple[str, Any], reason: str) -> None:
    with pytest.raises(StreamFault) as caught:
        _read(BUILTIN["ai-sdk"], [_ai("start"), last, ("", "[DONE]")])
    assert str(caught.value) == reason


def test_an_ai_sdk_stream_cut_before_finish_is_a_cut_not_its_partial_text() -> None:
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(3 events, 17 characters\)$"):
        _read(
            BUILTIN["ai-sdk"],
            [_ai("start"), _ai("text-start", id="t"), _ai("text-delta", id="t", delta="Express shipping ")],
        )


def test_an_undeclared_ai_sdk_failure_is_still_a_fault() -> None:
    # The generic reader knows the common failure shapes: an outage never reads as a decline.
    with pytest.raises(StreamFault, match=r"^the stream sent an error part: An error occurred\.$"):
        _read(None, [_ai("start"), _ai("error", errorText="An error occurred."), ("", "[DONE]")])
    with pytest.raises(StreamFault, match=r'^the stream finished with finishReason "error"$'):
        _read(None, [_ai("start"), _ai("finish", finishReason="error"), ("", "[DONE]")])


def test_a_team_names_its_data_part_as_the_passages_by_extending_the_ai_sdk(tmp_path: Path) -> None:
    config = tmp_path / "ragjudge.yml"
    config.write_text(
        "endpoint:\n  url: http://127.0.0.1:1/api/chat\n  preset: ai-sdk\n  protocol:\n    extends: ai-sdk\n"
        "    passages: {where: {type: data-sources}, path: data.documents, id: id, text: text}\n",
        encoding="utf-8",
    )
    protocol = declared(load_config(config).endpoint.protocol)
    assert protocol is not None and protocol.name == "ai-sdk" and protocol.text == BUILTIN["ai-sdk"].text
    trace = parse_reply(_read(protocol, AI_OK).reply(), ResponseMapping(), 1.0)
    assert [(p.id, p.text) for p in trace.passages] == [("refund-policy", "Refunds take 14 days.")]


RETRIEVAL_TOKEN_DONE = [
    ("retrieval", {"passages": [{"id": "doc-1", "text": "Refunds take 14 days."}]}),
    ("token", {"text": "Refunds take "}),
    ("token", {"text": "14 days."}),
    ("done", {"conversation_id": "c-7"}),
]


def _declared(yaml_protocol: str, tmp_path: Path) -> Any:
    config = tmp_path / "ragjudge.yml"
    config.write_text(f"endpoint:\n  url: http://127.0.0.1:1/chat\n  protocol:\n{yaml_protocol}", encoding="utf-8")
    return declared(load_config(config).endpoint.protocol)


def test_a_declared_named_event_protocol_reads_its_events(tmp_path: Path) -> None:
    protocol = _declared(
        "    text: {event: token, path: text}\n    passages: {event: retrieval, path: passages}\n"
        "    conversation_id: {event: done, path: conversation_id}\n    end: {event: done}\n",
        tmp_path,
    )
    trace = parse_reply(_read(protocol, RETRIEVAL_TOKEN_DONE).reply(), ResponseMapping(), 1.0)
    assert (trace.answer, trace.retrieved_ids, trace.conversation_id) == ("Refunds take 14 days.", ("doc-1",), "c-7")
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(3 events, 21 characters\)$"):
        _read(protocol, RETRIEVAL_TOKEN_DONE[:3])


def test_a_declared_end_that_never_comes_is_a_cut(tmp_path: Path) -> None:
    protocol = _declared("    text: {event: token, path: text}\n    end: {event: finished}\n", tmp_path)
    with pytest.raises(StreamFault, match=r"^stream ended before its end \(4 events, 21 characters\)$"):
        _read(protocol, RETRIEVAL_TOKEN_DONE)


def test_undeclared_named_events_ending_in_done_end_at_the_close() -> None:
    trace = parse_reply(
        _read(None, RETRIEVAL_TOKEN_DONE, ResponseMapping(answer_delta="text")).reply(), ResponseMapping(), 1.0
    )
    assert trace.answer == "Refunds take 14 days."


@pytest.mark.parametrize(
    ("protocol", "message"),
    [
        (
            "    text: {event: token, path: text}\n    end: {}\n",
            "endpoint.protocol.end.0: give at least one of event, data, where, has",
        ),
        ("    end: {event: done}\n", "endpoint.protocol: text: say which events carry the answer text"),
        (
            "    extends: vercel\n",
            "endpoint.protocol.extends: Input should be 'openai-chat', 'openai-responses', 'ai-sdk', 'langserve' or "
            "'ag-ui'",
        ),
        ("    text: {event: token}\n    ending: {event: done}\n", "unknown key 'endpoint.protocol.ending'"),
    ],
)
def test_a_bad_declared_protocol_is_exit_2_naming_the_key(tmp_path: Path, protocol: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _declared(protocol, tmp_path)
    assert message in str(caught.value)


def _responses(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}


FILE_SEARCH = {
    "type": "file_search_call",
    "id": "fs_1",
    "status": "completed",
    "queries": ["refunds"],
    "results": [
        {
            "file_id": "file-1",
            "filename": "refund-policy.md",
            "score": 0.9,
            "text": "Refunds take 14 days.",
            "attributes": {"doc_id": "refund-policy"},
        }
    ],
}


def test_the_responses_stream_reads_text_deltas_and_file_search_results() -> None:
    events = [
        _responses("response.created", response={"status": "in_progress"}),
        _responses("response.output_item.done", output_index=0, item=FILE_SEARCH),
        _responses("response.output_text.delta", delta="Refunds take "),
        _responses("response.output_text.delta", delta="14 days."),
        _responses("response.completed", response={"status": "completed", "usage": {"total_tokens": 17}}),
    ]
    assembly = _read(BUILTIN["openai-responses"], events)
    trace = parse_reply(assembly.reply(), ResponseMapping(), 1.0)
    assert (trace.answer, trace.retrieved_ids) == ("Refunds take 14 days.", ("file-1",))
    assert [p.title for p in trace.passages] == ["refund-policy.md"]
    assert (assembly.usage, assembly.finish_reason) == ({"total_tokens": 17}, "completed")


@pytest.mark.parametrize(
    ("last", "reason"),
    [
        (
            _responses(
                "response.failed", response={"status": "failed", "error": {"code": "server_error", "message": "boom"}}
            ),
            "the response failed: boom",
        ),
        (
            _responses("response.incomplete", response={"incomplete_details": {"reason": "max_output_tokens"}}),
            "the response is incomplete: max_output_tokens",
        ),
        (
            _responses("error", code="server_error", message="The server had an error"),
            "the stream sent an error event: The server had an error",
        ),
    ],
)
def test_a_responses_failure_is_a_fault(last: tuple[str, Any], reason: str) -> None:
    with pytest.raises(StreamFault) as caught:
        _read(BUILTIN["openai-responses"], [_responses("response.output_text.delta", delta="Refu"), last])
    assert str(caught.value) == reason


def test_a_responses_body_is_read_from_its_output_items() -> None:
    body = {
        "object": "response",
        "status": "completed",
        "output": [
            FILE_SEARCH,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Refunds take 14 days.", "annotations": []}],
            },
        ],
    }
    data = read_body(BUILTIN["openai-responses"], body, ResponseMapping())
    assert data == {
        "answer": "Refunds take 14 days.",
        "retrieved": [{"id": "file-1", "text": "Refunds take 14 days.", "title": "refund-policy.md"}],
        "tool_calls": [],
    }
    with pytest.raises(ReplyShapeError, match=r"^the response failed: boom$"):
        read_body(
            BUILTIN["openai-responses"], {**body, "status": "failed", "error": {"message": "boom"}}, ResponseMapping()
        )


def test_recognise_names_what_each_stream_looks_like() -> None:
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "a"}}]}
    assert recognise([("", chunk)]).name == "openai-chat"  # type: ignore[union-attr]
    assert recognise([("response.created", {"type": "response.created"})]).name == "openai-responses"  # type: ignore[union-attr]
    assert recognise([("", {"type": "start"})]).name == "ai-sdk"  # type: ignore[union-attr]
    assert recognise([], header="v1").name == "ai-sdk"  # type: ignore[union-attr]
    assert recognise([("metadata", {"run_id": "r"}), ("data", {"answer": "a"})]).name == "langserve"  # type: ignore[union-attr]
    named = recognise([("retrieval", {}), ("token", {"text": "a"}), ("done", {})])
    assert named is not None and (named.name, named.label) == ("named-events", "named events (retrieval, token, done)")
    assert recognise([("", {"answer": "a"})]) is None


def _case(turns: int) -> Case:
    turn = Case("c::1", "Q?", None, (), None, True, (), (), None, None, (), "cases.yaml")
    return Case("c", "Q?", None, (), None, True, (), (), None, None, (), "cases.yaml", turns=(turn,) * turns)


def test_a_conversation_sent_without_its_history_is_warned_about() -> None:
    bare = EndpointConfig(url="http://127.0.0.1:1/rag/stream", preset="langserve")
    assert carries_history(bare) is False
    warning = history_warning([_case(2)], bare)
    assert warning is not None and warning.startswith(
        "1 conversation case ('c') but endpoint.body and endpoint.url use none of `messages`, `history`, "
        "`ui_messages`, `conversation_id`: every turn reaches the service without the conversation before it"
    )
    assert history_warning([_case(0)], bare) is None  # no conversation, nothing to carry
    for preset, model in (("openai-chat", "m"), ("openai-responses", "m"), ("ai-sdk", None)):
        assert carries_history(EndpointConfig(url="http://127.0.0.1:1/", preset=preset, model=model)), preset


def test_the_ai_sdk_body_sends_the_conversation_as_ui_messages() -> None:
    from ragjudge.endpoint.client import EndpointClient

    client = EndpointClient(EndpointConfig(preset="ai-sdk"), "http://127.0.0.1:1/api/chat")
    turn = Case(
        "c::2",
        "Who pays?",
        None,
        (),
        None,
        True,
        (),
        (),
        None,
        None,
        (),
        "cases.yaml",
        turn=2,
        history=(Exchange("Refund?", "Yes, within 14 days."),),
    )
    _, body = client.render(turn)
    assert body is not None
    assert json.loads(body) == {
        "id": "c::2",
        "messages": [
            {"id": "c::2-1", "role": "user", "parts": [{"type": "text", "text": "Refund?"}]},
            {"id": "c::2-2", "role": "assistant", "parts": [{"type": "text", "text": "Yes, within 14 days."}]},
            {"id": "c::2-3", "role": "user", "parts": [{"type": "text", "text": "Who pays?"}]},
        ],
        "trigger": "submit-message",
    }


def test_a_sse_parser_and_the_ai_sdk_protocol_read_the_wire_as_sent() -> None:
    wire = b"".join(f"data: {json.dumps(d) if not isinstance(d, str) else d}\n\n".encode() for _, d in AI_OK)
    parser = SseParser()
    events = parser.feed(wire) + parser.close()
    assembly = Assembly(ResponseMapping(), protocol=BUILTIN["ai-sdk"])
    stopped = [assembly.add(e) for e in events]
    assert stopped.index(True) == len(AI_OK) - 2  # at `finish`: `[DONE]` is never read


def test_a_passage_event_whose_path_holds_null_carried_none_and_passages_stay_unknown(tmp_path: Path) -> None:
    # A Responses search whose results were not `include`d: `results: null` is "not sent", never "retrieved nothing".
    protocol = _declared(
        "    extends: openai-responses\n    passages: {where: {type: response.output_item.done}, path: item.results}\n",
        tmp_path,
    )
    events = [
        _responses("response.output_item.done", item={**FILE_SEARCH, "results": None}),
        _responses("response.output_text.delta", delta="Refunds take 14 days."),
        _responses("response.completed", response={"status": "completed"}),
    ]
    trace = parse_reply(_read(protocol, events).reply(), ResponseMapping(), 1.0)
    assert (trace.passages, trace.passages_unknown) == ((), True)


# Decisions a mutation sample of the protocols left unpinned (bench/mutation.py --module endpoint/protocols.py).


def test_a_chunk_is_recognised_by_its_choices_delta_without_an_object_name() -> None:
    looks = recognise([("", {"choices": [{"index": 0, "delta": {"content": "a"}}]})])
    assert looks is not None and looks.name == "openai-chat"
    assert recognise([("", {"choices": [{"index": 0, "message": {"content": "a"}}]})]) is None


def test_named_events_are_listed_up_to_six_in_the_label() -> None:
    looks = recognise([(f"e{i}", {}) for i in range(8)])
    assert looks is not None and looks.label == "named events (e0, e1, e2, e3, e4, e5)"
    assert looks.events == tuple(f"e{i}" for i in range(8))


def test_a_declared_text_event_with_no_path_reads_its_data_as_text(tmp_path: Path) -> None:
    protocol = _declared("    text: {event: token}\n    end: {event: done}\n", tmp_path)
    assembly = _read(protocol, [("token", "Refunds "), ("token", "take 14 days."), ("done", "")])
    assert assembly.reply() == {"answer": "Refunds take 14 days."}


def test_a_responses_body_s_refusal_part_is_a_declined_answer_at_the_mapped_path() -> None:
    body = {
        "object": "response",
        "status": "completed",
        "output": [
            {"type": "file_search_call", "results": None},
            {
                "type": "message",
                "content": [{"type": "output_audio"}, {"type": "refusal", "refusal": "I can not help with that."}],
            },
        ],
    }
    data = read_body(BUILTIN["openai-responses"], body, ResponseMapping(refused="declined"))
    assert data == {
        "answer": "I can not help with that.",
        "declined": True,
        "tool_calls": [],
    }  # results null: passages unknown


def test_a_file_search_result_without_a_filename_has_no_title() -> None:
    body = {
        "object": "response",
        "status": "completed",
        "output": [{"type": "file_search_call", "results": [{"file_id": "file-1", "text": "Refunds."}]}],
    }
    data = read_body(BUILTIN["openai-responses"], body, ResponseMapping(retrieved_id="doc"))
    assert data == {"answer": "", "retrieved": [{"doc": "file-1", "text": "Refunds."}], "tool_calls": []}
