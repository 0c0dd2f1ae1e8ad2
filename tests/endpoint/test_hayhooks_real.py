"""`ragjudge probe` and `ragjudge run` against a real `hayhooks run` serving a real Haystack pipeline.

tests/fakes/hayhooks_server.py starts hayhooks on loopback with tests/fakes/hayhooks_app/support_rag: BM25 over an
in-memory store, a PromptBuilder, an OpenAIChatGenerator talking to our FakeOpenAI, an AnswerBuilder. The config is
the hayhooks example of docs/replies.md, verbatim: what a team would paste. Skipped where hayhooks is not installed.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from tests.fakes.hayhooks_server import DECLINE_EN, DECLINE_ZH, FAKE_KEY, RunningHayhooks, answer_from_prompt

from ragjudge.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs" / "replies.md"

CASES = [
    {
        "id": "refund-en",
        "question": "How long do refunds take?",
        "golden_context_ids": ["refund-policy"],
        "must_mention": ["14 days"],
    },
    {"id": "shipping", "question": "How long does express shipping take?", "golden_context_ids": ["shipping-times"]},
    {"id": "refund-zh", "question": "退款需要多久？", "golden_context_ids": ["退款政策"]},
    {"id": "penguins", "question": "Can penguins fly?", "category": "out-of-scope"},
    {"id": "mars-zh", "question": "火星的首都是哪里？", "category": "超纲"},
]


def docs_hayhooks_endpoint(url: str) -> dict[str, Any]:
    """The docs' hayhooks config block (the YAML after its `# hayhooks / Haystack` comment), URL replaced."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# hayhooks / Haystack.*?)```", text, re.DOTALL)
    assert block is not None, "docs/replies.md has no hayhooks config example"
    endpoint: dict[str, Any] = yaml.safe_load(block.group(1))["endpoint"]
    assert endpoint["url"] == "http://127.0.0.1:1416/support_rag/run"
    return {**endpoint, "url": url, "retries": 0}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hayhooks_server: RunningHayhooks) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(CASES, allow_unicode=True), encoding="utf-8")
    endpoint = docs_hayhooks_endpoint(f"{hayhooks_server.url}/support_rag/run")
    config = {"endpoint": endpoint, "cases": ["cases.yaml"]}
    (tmp_path / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_probe_maps_the_real_reply_with_the_docs_config(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "probe", "--question", "How long do refunds take?")
    assert (code, err) == (0, "")
    assert "result: the reply maps cleanly" in out
    answer = '"Refunds are issued within 14 days of the return being received. [refund-policy]"'
    assert f"  answer (result.answer_builder.answers.0.data): {answer}" in out
    assert "  retrieved (result.answer_builder.answers.0.documents): a list of 1 item of objects" in out
    assert '    [1] id refund-policy · title (untitled) · text "Refunds are issued within 14 days' in out
    assert "  declined: no; confidence: (none)" in out


def test_without_a_body_the_real_server_422_names_the_field(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    config = {"endpoint": {"url": f"{hayhooks_server.url}/support_rag/run", "retries": 0}}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    code, out, _ = run(capsys, "probe", "--question", "How long do refunds take?")
    assert code == 1
    assert (
        "  hint: the server wants a body field 'query': set endpoint.body to something like "
        "'{\"query\": {{ question | tojson }}}'"
    ) in out


def test_run_reads_answers_doc_ids_and_declines_from_the_real_server(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    hayhooks_server.openai.reset()
    code, out, err = run(capsys, "run", "--report", "r.json", "--comment-file", "c.md")
    assert (code, err) == (0, "")
    assert out.startswith(
        "ragjudge: PASS: 5 of 5 cases pass and every rule holds.\n"
        "  5/5 cases passed, 0 failed, 0 errored (judge: offline-lexical)\n"
    )
    data = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    cases = {c["id"]: c for c in data["cases"]}
    got = {cid: (c["status"], c["trace"]["refused_by"], c["trace"]["retrieved_ids"]) for cid, c in cases.items()}
    assert got == {
        "refund-en": ("pass", None, ["refund-policy"]),
        "shipping": ("pass", None, ["shipping-times"]),
        "refund-zh": ("pass", None, ["退款政策"]),
        "penguins": ("pass", "builtin", []),
        "mars-zh": ("pass", "builtin", []),
    }
    assert cases["refund-en"]["trace"]["answer"] == (
        "Refunds are issued within 14 days of the return being received. [refund-policy]"
    )
    assert (cases["penguins"]["trace"]["answer"], cases["mars-zh"]["trace"]["answer"]) == (DECLINE_EN, DECLINE_ZH)
    assert data["suite"]["rejection_accuracy"] == 1
    # Every case went through the real generator to the fake, with the server's fake key.
    chats = [r for r in hayhooks_server.openai.requests if r["path"] == "/v1/chat/completions"]
    assert len(chats) == len(CASES)
    assert {r["headers"]["authorization"] for r in chats} == {f"Bearer {FAKE_KEY}"}
    assert {r["body"]["model"] for r in chats} == {"gpt-4o-mini"}


def test_the_content_hash_ids_fail_recall_without_retrieved_id(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    endpoint = docs_hayhooks_endpoint(f"{hayhooks_server.url}/support_rag/run")
    del endpoint["response"]["retrieved_id"]
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, _, _ = run(capsys, "run", "--report", "r.json")
    assert code == 1
    refund = next(c for c in json.loads((ws / "r.json").read_text(encoding="utf-8"))["cases"] if c["id"] == "refund-en")
    (retrieved,) = refund["trace"]["retrieved_ids"]
    assert re.fullmatch(r"[0-9a-f]{64}", retrieved)
    assert refund["failed_conditions"] == [f"context_recall 0.000 < 1 (missing refund-policy; retrieved {retrieved})"]


def test_the_server_stays_on_loopback_and_writes_no_telemetry_id(hayhooks_server: RunningHayhooks) -> None:
    # Haystack's telemetry, when on, writes its user id to ~/.haystack/config.yaml; hayhooks itself keeps its
    # dashboard token in ~/.cache/hayhooks.
    assert not (hayhooks_server.home / ".haystack").exists()
    output = hayhooks_server.output()
    assert "Haystack sends anonymous usage data" not in output
    assert hayhooks_server.url in output  # uvicorn listening on 127.0.0.1 only


CHAT_BODY = '{"model": "support_rag", "messages": [{"role": "user", "content": {{ question | tojson }}}]}'


def test_run_through_the_openai_compatible_chat_route(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    # The chat route answers in OpenAI's chat.completion shape, with no documents: only answers and declines.
    cases = [{k: v for k, v in c.items() if k != "golden_context_ids"} for c in CASES]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    endpoint = {
        "url": f"{hayhooks_server.url}/v1/chat/completions",
        "retries": 0,
        "body": CHAT_BODY,
        "response": {"answer": "choices.0.message.content"},
    }
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, out, err = run(capsys, "run", "--report", "r.json")
    assert (code, err) == (0, ""), out
    data = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    got = {c["id"]: (c["status"], c["trace"]["refused_by"]) for c in data["cases"]}
    assert got == {
        "refund-en": ("pass", None),
        "shipping": ("pass", None),
        "refund-zh": ("pass", None),
        "penguins": ("pass", "builtin"),
        "mars-zh": ("pass", "builtin"),
    }
    refund = next(c for c in data["cases"] if c["id"] == "refund-zh")
    assert refund["trace"]["answer"] == "退款在收到退货后14天内处理。 [退款政策]"


def test_the_streaming_chat_route_sends_chunks_that_add_up_to_the_answer(hayhooks_server: RunningHayhooks) -> None:
    # What the real server sends: chunks ending on a `finish_reason` chunk, and no `[DONE]`.
    body = {"model": "support_rag", "stream": True, "messages": [{"role": "user", "content": "Can penguins fly?"}]}
    reply = requests.post(f"{hayhooks_server.url}/v1/chat/completions", json=body, timeout=30)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/event-stream; charset=utf-8"
    events = [e for e in reply.text.split("\n\n") if e.strip()]
    assert all(e.startswith("data: ") for e in events)
    chunks = [json.loads(e[len("data: ") :]) for e in events if e != "data: [DONE]"]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert {c["model"] for c in chunks} == {"support_rag"}
    text = "".join(c["choices"][0]["delta"]["content"] or "" for c in chunks)
    assert text == DECLINE_EN
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "data: [DONE]" not in events
    assert len(chunks) > 3  # word by word, as the fake model streamed it


def test_run_reads_the_real_streaming_chat_route_timed_to_the_first_token(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    # hayhooks 2.1 ends its chunk stream with a `finish_reason` chunk and no `[DONE]`: that is a complete reply.
    cases = [{k: v for k, v in c.items() if k != "golden_context_ids"} for c in CASES]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    endpoint = {
        "url": f"{hayhooks_server.url}/v1/chat/completions",
        "retries": 0,
        "body": CHAT_BODY.replace('"model"', '"stream": true, "model"'),
        "response": {"answer_delta": "choices.0.delta.content"},
    }
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, out, err = run(capsys, "run", "--report", "r.json")
    assert (code, err) == (0, ""), out
    data = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    got = {c["id"]: (c["status"], c["trace"]["refused_by"]) for c in data["cases"]}
    assert got["penguins"] == ("pass", "builtin") and got["refund-zh"] == ("pass", None)
    refund = next(c for c in data["cases"] if c["id"] == "refund-zh")
    assert refund["trace"]["answer"] == "退款在收到退货后14天内处理。 [退款政策]"
    assert all(c["trace"]["ttft_ms"] is not None for c in data["cases"])
    assert 0 < refund["trace"]["ttft_ms"] <= refund["trace"]["latency_ms"]
    assert data["suite"]["p95_ttft_ms"] is not None


def test_a_conversation_through_the_real_streaming_chat_route(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    # The whole conversation goes in `messages` every turn (hayhooks validates them as OpenAI chat messages);
    # each turn is its own stream, timed to its first token, and the out-of-scope turn is declined in words.
    cases = [
        {
            "id": "refund-then-penguins",
            "turns": [
                {"question": "How long do refunds take?", "must_mention": ["14 days"]},
                {"question": "Can penguins fly?", "category": "out-of-scope"},
            ],
        },
        {"id": "refund-zh", "question": "退款需要多久？"},
    ]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    endpoint = {
        "url": f"{hayhooks_server.url}/v1/chat/completions",
        "retries": 0,
        "body": '{"model": "support_rag", "stream": true, "messages": {{ messages | tojson }}}',
        "response": {"answer_delta": "choices.0.delta.content"},
    }
    config = {"endpoint": endpoint, "cases": ["cases.yaml"], "gate": {"suite": {"rejection_accuracy": ">= 1"}}}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    before = len(hayhooks_server.openai.requests)
    code, out, err = run(capsys, "run", "--report", "r.json")
    assert (code, err) == (0, ""), out
    data = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    chat = next(c for c in data["cases"] if c["id"] == "refund-then-penguins")
    assert [(t["status"], t["trace"]["refused_by"]) for t in chat["turns"]] == [("pass", None), ("pass", "builtin")]
    assert chat["turns"][0]["trace"]["answer"] == (
        "Refunds are issued within 14 days of the return being received. [refund-policy]"
    )
    assert all(0 < t["trace"]["ttft_ms"] <= t["trace"]["latency_ms"] for t in chat["turns"])
    # The model behind hayhooks was asked once per turn: three turns in all.
    assert len(hayhooks_server.openai.requests) - before == 3


def test_probes_first_suggestion_on_the_plain_route_is_the_generated_answer(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    # The wrapper runs the pipeline with include_outputs_from={"retriever"}: the retriever's documents come
    # first in the reply, and their text must not be taken for the answer.
    body = '{"query": {{ question | tojson }}}'
    config = {"endpoint": {"url": f"{hayhooks_server.url}/support_rag/run", "retries": 0, "body": body}}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    code, out, _ = run(capsys, "probe", "--question", "How long do refunds take?")
    assert code == 1
    mapping = out.split("\nmapping (endpoint.response)\n", 1)[1].splitlines()
    assert mapping[0] == "  answer: nothing (tried answer): did you mean result.answer_builder.answers.0.data?"
    assert mapping[3] == (
        "  retrieved: nothing (tried retrieved, sources, contexts): did you mean "
        "result.answer_builder.answers.0.documents?"
    )
    suggested = out.split("\nsuggested mapping:", 1)[1].splitlines()
    assert suggested[2:5] == [
        "    answer: result.answer_builder.answers.0.data",
        "    retrieved: result.answer_builder.answers.0.documents",
        "    retrieved_id: meta.doc_id",
    ]
    # Pasted as it is, the suggestion maps cleanly, and the first case's golden id is among the passage ids.
    endpoint = {**config["endpoint"], "response": dict(line.strip().split(": ", 1) for line in suggested[2:5])}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, out, _ = run(capsys, "probe")
    assert out.endswith("\nresult: the reply maps cleanly\n"), out
    assert code == 0


def test_probe_names_the_retriever_text_mapped_as_the_answer(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    endpoint = docs_hayhooks_endpoint(f"{hayhooks_server.url}/support_rag/run")
    endpoint["response"] = {**endpoint["response"], "answer": "result.retriever.documents.0.content"}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, out, _ = run(capsys, "probe", "--case", "refund-en")
    assert code == 1
    assert (
        "  warning: endpoint.response.answer reads a retrieved passage, not the generated answer "
        "(result.retriever.documents.0.content): did you mean result.answer_builder.answers.0.data?"
    ) in out.splitlines()
    assert "    answer: result.answer_builder.answers.0.data" in out.splitlines()


def test_the_openai_chat_preset_wires_the_real_chat_route_in_one_line(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    cases = [{k: v for k, v in c.items() if k != "golden_context_ids"} for c in CASES]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases, allow_unicode=True), encoding="utf-8")
    endpoint = {"url": f"{hayhooks_server.url}/v1/chat/completions", "preset": "openai-chat", "model": "support_rag"}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, out, _ = run(capsys, "run", "--report", "r.json")
    assert code == 0, out
    data = json.loads((ws / "r.json").read_text(encoding="utf-8"))
    got = {c["id"]: (c["status"], c["trace"]["refused_by"]) for c in data["cases"]}
    assert got["penguins"] == ("pass", "builtin") and got["refund-en"] == ("pass", None)
    refund = next(c for c in data["cases"] if c["id"] == "refund-en")
    assert (
        refund["trace"]["answer"] == "Refunds are issued within 14 days of the return being received. [refund-policy]"
    )
    assert all(c["trace"]["ttft_ms"] is not None for c in data["cases"])


def test_probe_s_first_hint_on_the_bare_chat_route_is_the_openai_chat_preset(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    # Field-by-field 422 hints here lead to a second 422 ("model", then "messages"): the preset is the fix.
    config = {"endpoint": {"url": f"{hayhooks_server.url}/v1/chat/completions", "retries": 0}}
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    code, out, _ = run(capsys, "probe", "--question", "How long do refunds take?")
    hints = [line for line in out.splitlines() if line.startswith("  hint: ")]
    assert hints[0] == (
        "  hint: /v1/chat/completions looks like an OpenAI-compatible chat completions route: set "
        "`preset: openai-chat`, `model: <the model; for hayhooks, the pipeline's name>` under endpoint: (it sends "
        "the body that API takes and reads its stream)"
    )
    assert code == 1


def test_the_preset_reads_hayhooks_stream_without_done_as_whole_and_a_cut_model_stream_is_no_pass(
    ws: Path, capsys: pytest.CaptureFixture[str], hayhooks_server: RunningHayhooks
) -> None:
    cases = [{"id": "refund-en", "question": "How long do refunds take?", "must_mention": ["14 days"]}]
    (ws / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    endpoint = {
        "url": f"{hayhooks_server.url}/v1/chat/completions",
        "preset": "openai-chat",
        "model": "support_rag",
        "retries": 0,
    }
    (ws / "ragjudge.yml").write_text(yaml.safe_dump({"endpoint": endpoint, "cases": ["cases.yaml"]}), encoding="utf-8")
    code, out, _ = run(capsys, "run", "--report", "r.json")
    trace = json.loads((ws / "r.json").read_text(encoding="utf-8"))["cases"][0]["trace"]
    assert (code, trace["protocol"], trace["finish_reason"]) == (0, "openai-chat", "stop"), out
    responder = hayhooks_server.openai.responder
    try:
        hayhooks_server.openai.responder = lambda body, i: dataclasses.replace(
            answer_from_prompt(body, i), cut_after_chars=20
        )
        code, out, _ = run(capsys, "run", "--report", "r.json")
    finally:
        hayhooks_server.openai.responder = responder
    case = json.loads((ws / "r.json").read_text(encoding="utf-8"))["cases"][0]
    # hayhooks passes on the 20 characters it got and closes: no finish_reason, no `[DONE]`, so a cut.
    assert case["failed_conditions"] == ["endpoint error: stream ended before its end (5 events, 20 characters)"]
    assert (case["status"], case["trace"]["answer"], code) == ("error", None, 3)
