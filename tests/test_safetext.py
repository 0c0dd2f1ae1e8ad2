"""Text from outside is made safe where it enters: lone surrogates and control characters become U+FFFD.

Each door is tried with the JSON escape `"\\ud800"` (which `json.loads` turns into a lone surrogate that no
UTF-8 writer accepts) and with control characters: an endpoint reply (a JSON body and a stream), a judge
reply, a case file, a saved report read back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragjudge.cases.case import Case
from ragjudge.cases.caseset import load_cases
from ragjudge.config.endpoint_config import EndpointConfig, ResponseMapping
from ragjudge.endpoint.client import EndpointClient
from ragjudge.endpoint.decoding import decode
from ragjudge.endpoint.events import Event
from ragjudge.endpoint.stream import Assembly
from ragjudge.judge.interface import RUBRIC_DIMENSIONS
from ragjudge.judge.replies import parse_rubric
from ragjudge.report.reading import load_report
from ragjudge.report.writing import write_report
from ragjudge.safetext import clean_data, clean_text, is_safe
from tests.fakes.reports import gate_report
from tests.fakes.responder_server import Exchange, ResponderServer
from tests.judge.openai_helpers import rubric_json

R = "\ufffd"


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("plain, 七天 and 😀\ttab\nLF\rCR", "plain, 七天 and 😀\ttab\nLF\rCR"),
        ("a\ud800b", f"a{R}b"),
        ("\udfff\ud800", f"{R}{R}"),  # low before high is no pair
        ("\ud83d\ude00", "😀"),  # a pair split in two code points is joined
        ("nul\x00 esc\x1b[31m del\x7f c1\x85 bell\x07 ff\x0c", f"nul{R} esc{R}[31m del{R} c1{R} bell{R} ff{R}"),
        ("\ufffe\uffff", f"{R}{R}"),
    ],
)
def test_clean_text_replaces_each_unsafe_code_point(text: str, safe: str) -> None:
    assert clean_text(text) == safe
    assert is_safe(safe)


def test_clean_data_cleans_keys_and_values_at_any_depth_without_recursion() -> None:
    deep: list[object] = ["\ud800"]
    for _ in range(5000):
        deep = [deep]
    data = {"k\udc00": ["\x00", {"x": "\ud800", 3: 1.5}], "deep": deep, "n": None}
    out = clean_data(data)
    assert out["k" + R] == [R, {"x": R, 3: 1.5}]
    node = out["deep"]
    while isinstance(node[0], list):
        node = node[0]
    assert node == [R]
    assert clean_data("\ud800") == R


def test_an_endpoint_json_reply_is_cleaned_duplicate_key_paths_too() -> None:
    decoded = decode('{"answer": "bad \\ud800 \\u0000", "k\\udfff": 1, "k\\udfff": 2}')
    assert decoded.data == {"answer": f"bad {R} {R}", f"k{R}": 2}
    assert decoded.duplicate_keys == (f"k{R}",)


def test_a_stream_reply_is_cleaned_once_joined() -> None:
    mapping = ResponseMapping(answer_delta="delta")
    assembly = Assembly(mapping)
    for data in ('{"delta": "\\ud83d"}', '{"delta": "\\ude00 and \\ud800"}', '{"delta": "\\u001b"}'):
        assembly.add(Event("", data))
    assert assembly.reply()["answer"] == f"😀 and {R}{R}"


def test_a_text_stream_is_cleaned() -> None:
    assembly = Assembly(ResponseMapping())
    assembly.add(Event("", "plain \x00 text"))
    assert assembly.reply() == {"answer": f"plain {R} text"}


def test_a_judge_reply_is_cleaned() -> None:
    text = rubric_json(reasons={"grounding": "the fee \\ud800 is in no passage\u0000"}).replace("\\\\", "\\")
    _, reasons = parse_rubric(text, RUBRIC_DIMENSIONS)
    assert reasons["grounding"] == f"the fee {R} is in no passage{R}"


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml"])
def test_a_case_file_is_cleaned(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"cases{suffix}"
    if suffix == ".jsonl":
        path.write_text('{"id": "c\\ud800", "question": "why\\u0000?", "must_mention": ["\\udfff"]}\n', "utf-8")
    else:
        path.write_text('- id: "c\\ud800"\n  question: "why\\0?"\n  must_mention: ["\\udfff"]\n', "utf-8")
    (case,) = load_cases([path]).cases
    assert (case.id, case.question, case.must_mention) == (f"c{R}", f"why{R}?", (R,))


def test_a_saved_report_read_back_is_cleaned_and_writes_again(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    text = gate_report([]).model_dump_json().replace('"warnings":[]', '"warnings":["w \\ud800 \\u0000"]')
    path.write_text(text, encoding="utf-8")
    report = load_report(path)
    assert report.warnings == [f"w {R} {R}"]
    write_report(report, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))["warnings"] == [f"w {R} {R}"]


# --- DEL, the C1 controls and U+FFFF where a reply enters: the trace, not only the writers -------------------

UNSAFE = "del\x7f c1\x80\x85\x9f csi\x9b[2J nonchar\uffff"
"""DEL, C1 controls (U+0080, NEL, U+009F, and the 8-bit CSI a terminal obeys) and the noncharacter U+FFFF."""
SAFE = f"del{R} c1{R}{R}{R} csi{R}[2J nonchar{R}"
STREAMED = {"response": {"answer_delta": "choices.0.delta.content"}}


def _sse(text: str, ascii_only: bool) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk, ensure_ascii=ascii_only).encode("utf-8") + b"\n\n"


def _responder(shape: str, ascii_only: bool) -> Callable[[Exchange], None]:
    """The answer `Refunds take 5 days: UNSAFE`, in one JSON body or an OpenAI stream split mid-way, its
    characters sent as they are (`ascii_only` False: raw UTF-8 bytes) or as `\\u` escapes."""

    def respond(ex: Exchange) -> None:
        answer = f"Refunds take 5 days: {UNSAFE}"
        if shape == "json":
            body = json.dumps({"answer": answer, "retrieved": []}, ensure_ascii=ascii_only).encode("utf-8")
            ex.send(200, body)
        else:
            half = len(answer) // 2 + 3
            ex.stream([_sse(answer[:half], ascii_only), _sse(answer[half:], ascii_only), b"data: [DONE]\n\n"])

    return respond


@pytest.mark.parametrize("shape", ["json", "stream"])
@pytest.mark.parametrize("ascii_only", [False, True], ids=["raw", "escaped"])
def test_del_c1_and_uffff_in_a_reply_are_made_safe_in_the_trace(shape: str, ascii_only: bool) -> None:
    with ResponderServer(_responder(shape, ascii_only)) as server:
        config = EndpointConfig(retries=0, **(STREAMED if shape == "stream" else {}))
        result = EndpointClient(config, server.url).call(_case())
    assert result.trace is not None, result.error
    assert result.trace.answer == f"Refunds take 5 days: {SAFE}"
    assert (result.trace.ttft_ms is not None) is (shape == "stream")


def test_decoding_cleans_del_c1_and_uffff_sent_raw_as_well_as_escaped() -> None:
    raw = json.dumps({"answer": UNSAFE, UNSAFE: 1}, ensure_ascii=False)
    assert "\\" not in raw  # nothing escaped: only the characters themselves say the text is unsafe
    assert decode(raw).data == {"answer": SAFE, SAFE: 1}
    assert decode(json.dumps({"answer": UNSAFE})).data == {"answer": SAFE}


def _case() -> Case:
    return Case(
        id="c1",
        question="How long do refunds take?",
        expected=None,
        golden_context_ids=(),
        category=None,
        should_answer=True,
        must_mention=(),
        must_not_mention=(),
        source=None,
        difficulty=None,
        tags=(),
        origin="t",
    )
