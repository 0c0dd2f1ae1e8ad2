"""`ragjudge run` on conversations (`turns:`) against services that stream: an OpenAI-compatible chat that gets
the whole conversation in `messages`, and a stateful service with named SSE events that issues a conversation
id. Each turn carries the earlier ones; a forgetful service fails naming the turn; faults are case errors."""

from __future__ import annotations

import json
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.endpoint.test_receiving import openai_chunk, sse
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.responder_server import Exchange, ResponderServer
from tests.judge.openai_helpers import claims_json, merged, rubric_json, user_text

Q_RETURN = "我想退货，耳机有质量问题"
Q_SHIPPING = "那运费谁出？"
Q_FLIGHT = "能帮我订一张机票吗？"
Q_INVOICE = "电子发票多久能收到？"
A_RETURN = "质量问题商品可在签收后15天内申请退货。"
A_SHIPPING = "质量问题产生的来回运费由商家承担。"
A_FORGOT = "无理由退货的寄回运费由买家承担。"
A_DECLINE = "抱歉，知识库中没有相关信息。"
A_INVOICE = "电子发票在3个工作日内发送至预留邮箱。"

PASSAGES = {
    "doc-quality": {"id": "doc-quality", "title": "质量问题退换货", "text": A_RETURN + A_SHIPPING},
    "doc-7day": {"id": "doc-7day", "title": "7天无理由退货", "text": A_FORGOT},
    "doc-invoice": {"id": "doc-invoice", "title": "电子发票", "text": A_INVOICE},
}

CASES: list[dict[str, Any]] = [
    {
        "id": "refund-chat",
        "category": "refunds",
        "turns": [
            {"question": Q_RETURN, "golden_context_ids": ["doc-quality"], "must_mention": ["15天"]},
            {"question": Q_SHIPPING, "golden_context_ids": ["doc-quality"], "must_mention": ["商家承担"]},
        ],
    },
    {
        "id": "then-off-topic",
        "category": "refunds",
        "turns": [
            {"question": Q_RETURN, "golden_context_ids": ["doc-quality"]},
            {"question": Q_FLIGHT, "category": "out_of_scope"},
        ],
    },
    {"id": "invoice", "question": Q_INVOICE, "golden_context_ids": ["doc-invoice"], "must_mention": ["3个工作日"]},
]


@dataclass
class Service:
    """A customer-service assistant that reads a follow-up in the light of the conversation so far."""

    first_token_s: float = 0.05
    forgetful: bool = False
    """Answers each question as if it were the first."""
    cut_on: str | None = None
    """The question whose stream is cut off mid-answer."""
    stall_on: str | None = None
    """The question whose stream stops sending (an idle stall)."""
    flaky_once: str | None = None
    """The question answered as if forgotten the first time it is asked, and right after."""
    seen: list[dict[str, Any]] = field(default_factory=list)
    conversations: dict[str, list[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, questions: list[str]) -> tuple[str, list[dict[str, str]]]:
        """The answer to the last question, with the passages it came from."""
        question, earlier = questions[-1], questions[:-1]
        if question == Q_SHIPPING:
            with self.lock:
                flaky = self.flaky_once == question
                if flaky:
                    self.flaky_once = None
            if self.forgetful or flaky or Q_RETURN not in earlier:
                return A_FORGOT, [PASSAGES["doc-7day"]]
            return A_SHIPPING, [PASSAGES["doc-quality"]]
        if question == Q_RETURN:
            return A_RETURN, [PASSAGES["doc-quality"]]
        if question == Q_INVOICE:
            return A_INVOICE, [PASSAGES["doc-invoice"]]
        return A_DECLINE, []

    def tokens(self, ex: Exchange, question: str, events: list[bytes], end: list[bytes]) -> None:
        """The stream: `events` after the wait for the first token, then `end` (or a cut, or a stall)."""
        pieces: list[bytes | float] = [self.first_token_s, *events]
        if question == self.cut_on:
            ex.stream(pieces[:3])  # the connection closes mid-answer
        elif question == self.stall_on:
            ex.stream([*pieces[:3], 5.0, *end])
        else:
            ex.stream([*pieces, *end])

    def openai(self, ex: Exchange) -> None:
        body = ex.request.json()
        with self.lock:
            self.seen.append(body)
        questions = [m["content"] for m in body["messages"] if m["role"] == "user"]
        answer, passages = self.reply(questions)
        chunks = [sse({**openai_chunk(""), "references": passages})]
        chunks += [sse(openai_chunk(answer[i : i + 4])) for i in range(0, len(answer), 4)]
        self.tokens(ex, questions[-1], chunks, [sse(openai_chunk(None, "stop")), b"data: [DONE]\n\n"])

    def stateful(self, ex: Exchange) -> None:
        body = ex.request.json()
        with self.lock:
            self.seen.append(body)
            conversation = body.get("conversation_id")
            if conversation not in self.conversations:
                conversation = f"conv-{len(self.conversations) + 1}"
                self.conversations[conversation] = []
            asked = self.conversations[conversation]
            asked.append(body["message"])
            questions = list(asked)
        answer, passages = self.reply(questions)
        events = [sse({"passages": passages}, "retrieval")]
        events += [sse({"text": answer[i : i + 4]}, "token") for i in range(0, len(answer), 4)]
        done = sse({"conversation_id": conversation, "refused": answer == A_DECLINE}, "done")
        self.tokens(ex, body["message"], events, [done, b"event: end\ndata:\n\n"])


OPENAI = {
    "body": '{"model": "support", "messages": {{ messages | tojson }}, "stream": true}',
    "idle_timeout_s": 2,
    "protocol": "openai-chat",
    "response": {"retrieved": "references"},
}
STATEFUL = {
    "body": '{"message": {{ question | tojson }}, "conversation_id": {{ conversation_id | tojson }}}',
    "idle_timeout_s": 2,
    # The declared protocol docs/streams.md shows for a `retrieval` / `token` / `done` service, with this one's `end`.
    "protocol": {
        "text": {"event": "token", "path": "text"},
        "passages": {"event": "retrieval", "path": "passages"},
        "conversation_id": {"event": "done", "path": "conversation_id"},
        "end": {"event": "end"},
    },
}
CASE_RULES = {"context_recall": ">= 1.0", "ttft_ms": "<= 5000"}
# Bounds with room for a loaded 2-core machine: the service sends its first token after 50 ms.
SUITE_RULES = {"pass_rate": ">= 1.0", "rejection_accuracy": ">= 1.0", "p95_ttft_ms": "<= 1000"}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


@pytest.fixture(params=["openai", "stateful"])
def shape(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _serve(service: Service, shape: str) -> ResponderServer:
    return ResponderServer(service.openai if shape == "openai" else service.stateful)


def _run(
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    service: Service,
    shape: str,
    *extra: str,
    cases: list[dict[str, Any]] | None = None,
) -> tuple[int, dict[str, Any], str]:
    with _serve(service, shape) as server:
        endpoint = OPENAI if shape == "openai" else STATEFUL
        write_config(ws, server.url, cases or CASES, case_rules=CASE_RULES, suite_rules=SUITE_RULES, endpoint=endpoint)
        outcome = run(capsys, "run", "--report", "report.json", *extra)
    return outcome.code, load(ws / "report.json"), outcome.out


def test_every_turn_carries_the_conversation_so_far_and_passes(
    ws: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    service = Service()
    code, report, out = _run(ws, capsys, service, shape)
    assert code == 0, out
    cases = by_id(report)
    assert {cid: (c["status"], c["failed_conditions"]) for cid, c in cases.items()} == {
        "refund-chat": ("pass", []),
        "then-off-topic": ("pass", []),
        "invoice": ("pass", []),
    }
    chat = cases["refund-chat"]
    assert [(t["turn"], t["question"], t["status"], t["trace"]["answer"]) for t in chat["turns"]] == [
        (1, Q_RETURN, "pass", A_RETURN),
        (2, Q_SHIPPING, "pass", A_SHIPPING),
    ]
    assert chat["question"] == Q_RETURN and cases["invoice"]["turns"] == []
    # Turn 2 was sent what turn 1 asked and what the service answered, assembled from its stream.
    to_turn_2 = [b for b in service.seen if Q_SHIPPING in json.dumps(b, ensure_ascii=False)]
    if shape == "openai":
        assert [m for b in to_turn_2 for m in b["messages"]] == [
            {"role": "user", "content": Q_RETURN},
            {"role": "assistant", "content": A_RETURN},
            {"role": "user", "content": Q_SHIPPING},
        ]
    else:
        firsts = [b["conversation_id"] for b in service.seen if b["message"] == Q_RETURN]
        assert firsts == [None, None]
        assert [b["conversation_id"] for b in to_turn_2] == [chat["turns"][0]["trace"]["conversation_id"]]
        # The service kept both questions under the id it issued (the three cases each opened one, in any order).
        assert service.conversations[chat["turns"][0]["trace"]["conversation_id"]] == [Q_RETURN, Q_SHIPPING]
    # Every turn is timed to its first token; the suite's TTFT percentiles are over the five turns and the case.
    ttfts = [t["trace"]["ttft_ms"] for c in cases.values() for t in (c["turns"] or [c])]
    assert len(ttfts) == 5 and all(50 <= t < 1000 for t in ttfts), ttfts
    assert report["suite"]["p95_ttft_ms"] == max(ttfts)
    # Suite metrics count turns (the declined second turn counts for rejection accuracy); pass counts, cases.
    assert (report["suite"]["cases"], report["suite"]["passed"], report["suite"]["rejection_accuracy"]) == (3, 3, 1.0)
    refused = cases["then-off-topic"]["turns"][1]
    assert (refused["should_answer"], refused["category"], refused["trace"]["refused"]) == (
        False,
        "out_of_scope",
        True,
    )


def test_a_service_that_forgets_earlier_turns_fails_the_conversation_naming_turn_2(
    ws: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    code, report, out = _run(ws, capsys, Service(forgetful=True), shape)
    assert code == 1, out
    chat = by_id(report)["refund-chat"]
    missing = 'missing required detail: "商家承担"'
    recall = "context_recall 0.000 < 1 (missing doc-quality; retrieved doc-7day)"
    assert chat["status"] == "fail"
    assert chat["failed_conditions"] == [f"turn 2: {missing}", f"turn 2: {recall}"]
    assert [(t["status"], t["failed_conditions"]) for t in chat["turns"]] == [("pass", []), ("fail", [missing, recall])]
    assert f"refund-chat fail: turn 2: {missing}" in out
    # The case rule's row counts the conversation once.
    (rule,) = [r for r in report["rules"] if r["metric"] == "context_recall"]
    assert rule["reason"] == "1 case(s) failed context_recall >= 1: refund-chat"


def test_a_failing_turn_is_placed_on_its_conversation_in_the_case_file(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runner names the workspace by a link to the folder the case file is read from.
    link = ws.parent / f"{ws.name}-link"
    link.symlink_to(ws, target_is_directory=True)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(link))
    code, report, out = _run(ws, capsys, Service(forgetful=True), "openai")
    assert code == 1, out
    lines = (ws / "cases.yaml").read_text(encoding="utf-8").splitlines()
    starts = [n for n, text in enumerate(lines, 1) if text.startswith("- ")]
    assert len(starts) == 3 and starts[0] == 1
    # The conversation failed on turn 2, and is placed where it starts (a turn's origin is not `file:line`);
    # the file is relative to the workspace though the case file was read by its real path.
    places = {c["id"]: (c["file"], c["line"]) for c in report["cases"]}
    assert places == {
        "refund-chat": ("cases.yaml", starts[0]),
        "then-off-topic": ("cases.yaml", starts[1]),
        "invoice": ("cases.yaml", starts[2]),
    }
    from ragjudge.github.annotations import gate_annotations
    from ragjudge.report.reading import load_report

    [note] = [n for n in gate_annotations(load_report(ws / "report.json")) if "refund-chat" in n.title]
    assert (note.title, note.properties()) == (
        "ragjudge: case refund-chat failed",
        {"file": "cases.yaml", "line": str(starts[0])},
    )


def test_slow_to_the_first_token_fails_p95_ttft(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report, out = _run(ws, capsys, Service(first_token_s=1.2), "openai")
    assert code == 1, out
    assert {c["status"] for c in report["cases"]} == {"pass"}
    (rule,) = [r for r in report["rules"] if r["metric"] == "p95_ttft_ms"]
    assert rule["passed"] is False and rule["value"] >= 1200
    assert rule["reason"].startswith("p95_ttft_ms ") and rule["reason"].endswith(" > 1000")


def test_a_cut_stream_errors_its_turn_and_the_turns_after_are_not_evaluated(
    ws: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    started = time.monotonic()
    code, report, out = _run(ws, capsys, Service(cut_on=Q_RETURN), shape)
    assert time.monotonic() - started < 15
    cut = "endpoint error: stream ended before its end (2 events, 4 characters)"
    # Both conversations open with the cut question: 2 of 3 cases errored, past the error budget.
    assert code == 3, out
    assert report["verdict"] == "error"
    assert report["error_reason"] == (
        "2 of 3 cases errored (67%), over gate.max_error_rate 0.5: the verdict is error; the error that dominated "
        f"(2 of 2): turn 1: {cut}"
    )
    chat = by_id(report)["refund-chat"]
    not_asked = "not evaluated: turn 1 got no reply, and this turn follows it"
    assert chat["status"] == "error"
    assert chat["failed_conditions"] == [f"turn 1: {cut}", f"turns 2 to 2: {not_asked}"]
    assert [(t["turn"], t["status"], t["failed_conditions"]) for t in chat["turns"]] == [
        (1, "error", [cut]),
        (2, "not evaluated", [not_asked]),
    ]
    assert chat["turns"][1]["trace"]["answer"] is None and chat["turns"][1]["metrics"] == {}


def test_a_stall_past_the_idle_timeout_is_an_error_within_the_bound(
    ws: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    started = time.monotonic()
    code, report, out = _run(ws, capsys, Service(stall_on=Q_SHIPPING), shape)
    assert time.monotonic() - started < 15
    assert code == 1, out
    chat = by_id(report)["refund-chat"]
    stalled = "endpoint error: idle timeout: no bytes for 2 s (endpoint.idle_timeout_s, 1 attempt)"
    assert chat["status"] == "error"
    assert chat["failed_conditions"] == [f"turn 2: {stalled}"]
    assert [t["status"] for t in chat["turns"]] == ["pass", "error"]


def test_a_repeat_reruns_the_whole_conversation(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = Service(flaky_once=Q_SHIPPING)
    code, report, out = _run(ws, capsys, service, "stateful", "--repeat", "3/1")
    assert code == 0, out
    chat = by_id(report)["refund-chat"]
    assert (chat["status"], chat["flaky"], chat["k_of_n"]) == ("pass", True, "1 of 2 passed")
    assert [r["status"] for r in chat["runs"]] == ["fail", "pass"]
    # Both runs asked both turns, each run in a conversation of its own.
    asked = [(b["message"], b["conversation_id"]) for b in service.seen if b["message"] in (Q_RETURN, Q_SHIPPING)]
    assert sorted(m for m, _ in asked) == sorted([Q_RETURN] * 3 + [Q_SHIPPING] * 2)
    assert len({cid for m, cid in asked if m == Q_SHIPPING}) == 2


def test_shards_split_by_conversation_and_merge_to_the_unsharded_suite(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = Service(forgetful=True)
    with _serve(service, "openai") as server:
        write_config(ws, server.url, CASES, case_rules=CASE_RULES, suite_rules=SUITE_RULES, endpoint=OPENAI)
        whole = run(capsys, "run", "--report", "whole.json")
        one = run(capsys, "run", "--shard", "1/2", "--report", "s1.json")
        two = run(capsys, "run", "--shard", "2/2", "--report", "s2.json")
    assert (whole.code, one.code, two.code) == (1, 0, 0)
    shards = [load(ws / "s1.json"), load(ws / "s2.json")]
    assert sorted(c["id"] for s in shards for c in s["cases"]) == ["invoice", "refund-chat", "then-off-topic"]
    merged_run = run(capsys, "merge", "s1.json", "s2.json", "--report", "merged.json")
    assert merged_run.code == 1, merged_run.out
    merged_report, unsharded = load(ws / "merged.json"), load(ws / "whole.json")
    keep = ("cases", "passed", "failed", "errored", "pass_rate", "rejection_accuracy", "endpoint_error_rate")
    assert {k: merged_report["suite"][k] for k in keep} == {k: unsharded["suite"][k] for k in keep}
    assert merged_report["suite"]["rejection_accuracy"] == 1.0
    assert by_id(merged_report)["refund-chat"]["turns"][1]["status"] == "fail"


def test_junit_html_and_comment_show_the_dialogue(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = Service(forgetful=True)
    with _serve(service, "openai") as server:
        write_config(ws, server.url, CASES, case_rules=CASE_RULES, suite_rules=SUITE_RULES, endpoint=OPENAI)
        outcome = run(capsys, "run", "--junit", "junit.xml", "--html", "report.html", "--comment-file", "comment.md")
    assert outcome.code == 1, outcome.out
    tree = ET.parse(ws / "junit.xml")
    (suite,) = [s for s in tree.iter("testsuite") if s.get("name") == "ragjudge cases"]
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(cases) == ["invoice", "refund-chat", "then-off-topic"]
    failure = cases["refund-chat"].find("failure")
    assert failure is not None and failure.get("message", "").startswith('turn 2: missing required detail: "商家承担"')
    out_text = cases["refund-chat"].findtext("system-out") or ""
    assert out_text.splitlines()[:3] == [
        "conversation of 2 turns:",
        f"turn 1 (pass): {Q_RETURN}",
        f"  answer: {A_RETURN}",
    ]
    assert f"turn 2 (fail): {Q_SHIPPING}" in out_text
    html = (ws / "report.html").read_text(encoding="utf-8")
    assert '<div class="turn" data-turn="2" data-status="fail">' in html
    assert f"<strong>Customer:</strong> {Q_SHIPPING}" in html and f"<strong>Assistant:</strong> {A_FORGOT}" in html
    comment = (ws / "comment.md").read_text(encoding="utf-8")
    assert "**Turn 2** · fail" in comment
    assert f"**Question:** {Q_SHIPPING}" in comment


def test_the_judge_is_shown_the_conversation_so_far_once_per_answered_turn(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGJUDGE_TEST_OPENAI_KEY", "sk-test-conversation")
    responder = merged(lambda body, n: Reply(content=rubric_json()), lambda body, n: Reply(content=claims_json()))
    with FakeOpenAI(responder) as judge, _serve(Service(), "openai") as server:
        write_config(ws, server.url, CASES, case_rules={"context_recall": ">= 1.0"}, endpoint=OPENAI)
        config = ws / "ragjudge.yml"
        text = config.read_text(encoding="utf-8").replace(
            "judge:\n  provider: offline\n",
            "judge:\n  provider: openai\n  model: gpt-4o-mini\n"
            f"  base_url: {judge.base_url}\n  api_key: ${{RAGJUDGE_TEST_OPENAI_KEY}}\n  max_retries: 0\n",
        )
        config.write_text(text, encoding="utf-8")
        outcome = run(capsys, "run", "--report", "report.json")
        prompts = [user_text(body) for body in judge.bodies]
    assert outcome.code == 0, outcome.out
    assert len(prompts) == 5  # one call per answered turn: 2 + 2 turns and the single case
    report = load(ws / "report.json")
    assert report["suite"]["judge_calls"] == 5
    (follow_up,) = [p for p in prompts if f"## Question\n{Q_SHIPPING}\n" in p]
    assert "This question is turn 2 of a conversation." in follow_up
    assert (
        f'<earlier_question turn="1">\n{Q_RETURN}\n</earlier_question>\n'
        f'<earlier_answer turn="1">\n{A_RETURN}\n</earlier_answer>\n'
    ) in follow_up
    (opening,) = [p for p in prompts if f"## Question\n{Q_INVOICE}\n" in p]
    assert "conversation" not in opening


def test_against_a_baseline_timing_ratios_pair_the_turns(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The baseline streams fast; now the service is slow to its first token on every turn.
    code, _, out = _run(ws, capsys, Service(first_token_s=0.05), "openai")
    assert code == 0, out
    (ws / "report.json").rename(ws / "baseline.json")
    with _serve(Service(first_token_s=1.2), "openai") as server:
        config = write_config(ws, server.url, CASES, case_rules=CASE_RULES, endpoint=OPENAI)
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["gate"]["regression"] = {"p95_ttft_ratio": "<= 2"}
        config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        outcome = run(capsys, "run", "--baseline", "baseline.json", "--report", "report.json")
    assert outcome.code == 1, outcome.out
    report = load(ws / "report.json")
    (ratio,) = [d for d in report["comparison"]["deltas"] if d["metric"] == "p95_ttft_ms"]
    assert ratio["cases"] == 5  # the four turns of the two conversations and the single case, paired turn by turn
    assert ratio["delta"] > 2 and ratio["significant"] is True
    assert ratio["test"] == "paired bootstrap of the ratio over 5 replies (conversations by turn) (2000 resamples)"
    (rule,) = [r for r in report["comparison"]["rules"] if r["metric"] == "p95_ttft_ratio"]
    assert rule["passed"] is False


def test_probe_on_a_conversation_runs_its_turns_carrying_the_conversation_id(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = Service()
    with _serve(service, "stateful") as server:
        write_config(ws, server.url, CASES, case_rules=CASE_RULES, suite_rules=SUITE_RULES, endpoint=STATEFUL)
        outcome = run(capsys, "probe", "--case", "refund-chat")
    assert outcome.code == 0, outcome.out
    lines = outcome.out.splitlines()
    assert [line for line in lines if line.startswith("== ")] == [
        "== refund-chat: turn 1 of 2",
        "== refund-chat: turn 2 of 2",
    ]
    assert lines.count("result: the reply maps cleanly") == 2
    assert [b["conversation_id"] for b in service.seen] == [None, "conv-1"]
    assert "  conversation_id for the next turn: conv-1" in lines


def test_probe_stops_a_conversation_at_a_turn_with_no_answer(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = Service(cut_on=Q_RETURN)
    with _serve(service, "openai") as server:
        write_config(ws, server.url, CASES, case_rules=CASE_RULES, suite_rules=SUITE_RULES, endpoint=OPENAI)
        outcome = run(capsys, "probe", "--case", "refund-chat")
    assert outcome.code == 1
    assert "turns 2 to 2 not sent: turn 1 gave no answer" in outcome.out
    assert len(service.seen) == 1


# --- a conversation whose answers outgrow endpoint.max_request_bytes ----------------------------------------------

Q_LONG = ("Tell me everything about returns.", "And about shipping?", "And about invoices?", "Anything else?")
LONG_ANSWER = ("Returns are accepted within 15 days of delivery. " * 40)[:1500]
SHORT = {"Hello?": "hello, how can I help", "Bye?": "goodbye", "Invoice?": "within 3 days"}
LIMIT = 2000
"""Turn 2 carries one 1,500-character answer and fits; turn 3 carries two and does not."""
OUTGROWN = (
    "endpoint error: not sent: endpoint.body renders over 2,000 bytes with the conversation's 2 earlier answers "
    "(endpoint.max_request_bytes: 2,000)"
)
NOT_ASKED = "not evaluated: turn 3 got no reply, and this turn follows it"


def _long_chat(case_id: str, *questions: str) -> dict[str, Any]:
    return {"id": case_id, "turns": [{"question": q} for q in questions]}


HEALTHY: list[dict[str, Any]] = [
    {"id": "short-chat", "turns": [{"question": "Hello?", "must_mention": ["hello"]}, {"question": "Bye?"}]},
    {"id": "single", "question": "Invoice?", "must_mention": ["3 days"]},
]


class Chatty:
    """A service that answers questions from `Q_LONG` at length (1,500 characters) and the rest briefly."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []
        self.lock = threading.Lock()

    def __call__(self, ex: Exchange) -> None:
        questions = [m["content"] for m in ex.request.json()["messages"] if m["role"] == "user"]
        with self.lock:
            self.asked.append(questions)
        question = questions[-1].removesuffix(" (again)")
        ex.json({"answer": LONG_ANSWER if question in Q_LONG else SHORT[question], "retrieved": []})


def _run_chatty(
    ws: Path, capsys: pytest.CaptureFixture[str], cases: list[dict[str, Any]], body: str | None = None
) -> tuple[Any, Chatty]:
    service = Chatty()
    endpoint = {"body": body or '{"messages": {{ messages | tojson }}}', "max_request_bytes": LIMIT}
    with ResponderServer(service) as server:
        write_config(ws, server.url, cases, endpoint=endpoint)
        outcome = run(
            capsys,
            "run",
            "--report",
            "report.json",
            "--comment-file",
            "comment.md",
            "--html",
            "report.html",
            "--junit",
            "junit.xml",
        )
    return outcome, service


def test_a_conversation_whose_answers_outgrow_the_request_limit_errors_that_turn_and_the_run_goes_on(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, service = _run_chatty(ws, capsys, [_long_chat("chatty", *Q_LONG), *HEALTHY])
    # One conversation of three errored, within the error budget: the gate fails (exit 1), it is not bad input.
    assert outcome.code == 1, outcome.err
    report = load(ws / "report.json")
    cases = by_id(report)
    assert {cid: (c["status"], c["failed_conditions"]) for cid, c in cases.items()} == {
        "chatty": ("error", [f"turn 3: {OUTGROWN}", f"turns 4 to 4: {NOT_ASKED}"]),
        "short-chat": ("pass", []),
        "single": ("pass", []),
    }
    turns = cases["chatty"]["turns"]
    assert [(t["turn"], t["status"], t["failed_conditions"]) for t in turns] == [
        (1, "pass", []),
        (2, "pass", []),
        (3, "error", [OUTGROWN]),
        (4, "not evaluated", [NOT_ASKED]),
    ]
    assert (turns[2]["trace"]["error"], turns[2]["trace"]["attempts"]) == (OUTGROWN, 0)
    # Turns 1 and 2 were asked, turn 3 was never sent; the healthy cases were asked as ever.
    assert sorted(service.asked) == sorted(
        [[Q_LONG[0]], [Q_LONG[0], Q_LONG[1]], ["Hello?"], ["Hello?", "Bye?"], ["Invoice?"]]
    )
    assert report["verdict"] == "fail" and report["suite"]["errored"] == 1
    assert f"chatty error: turn 3: {OUTGROWN}" in outcome.out
    # Every output is written.
    shown = OUTGROWN.replace("_", "\\_")  # markdown's escape
    assert f"| <code>chatty</code> | error | turn 3: {shown}<br>turns 4 to 4: {NOT_ASKED} |" in (
        (ws / "comment.md").read_text(encoding="utf-8").splitlines()
    )
    escaped = OUTGROWN.replace("'", "&#39;")  # Jinja's escape
    assert f'<div class="text">{escaped}</div>' in (ws / "report.html").read_text(encoding="utf-8")
    (suite,) = [s for s in ET.parse(ws / "junit.xml").iter("testsuite") if s.get("name") == "ragjudge cases"]
    junit = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(junit) == ["chatty", "short-chat", "single"]
    errored = junit["chatty"].find("error")
    assert errored is not None and errored.get("message", "").startswith(f"turn 3: {OUTGROWN}")


def test_conversations_outgrowing_the_limit_past_the_error_budget_are_exit_3_with_every_output(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [_long_chat("chatty", *Q_LONG), _long_chat("chatty-again", *(f"{q} (again)" for q in Q_LONG)), HEALTHY[1]]
    outcome, _ = _run_chatty(ws, capsys, cases)
    assert outcome.code == 3, outcome.err
    report = load(ws / "report.json")
    assert report["verdict"] == "error"
    assert report["error_reason"] == (
        "2 of 3 cases errored (67%), over gate.max_error_rate 0.5: the verdict is error; the error that dominated "
        f"(2 of 2): turn 3: {OUTGROWN}"
    )
    assert [(c["id"], c["status"]) for c in report["cases"]] == [
        ("chatty", "error"),
        ("chatty-again", "error"),
        ("single", "pass"),
    ]
    assert all((ws / name).stat().st_size > 0 for name in ("comment.md", "report.html", "junit.xml"))


@pytest.mark.parametrize(
    ("body", "questions", "case_id"),
    [
        # The template alone renders over the limit.
        ('{"messages": {{ messages | tojson }}, "pad": "{{ "x" * 3000 }}"}', Q_LONG[:2], "chatty turn 1"),
        # The case file's own questions, carried by turn 3, do (800 characters each; the answers play no part).
        (None, tuple(f"{n} " + "q" * 800 for n in range(3)), "chatty turn 3"),
    ],
)
def test_a_request_too_large_without_any_answer_is_still_exit_2_before_any_call(
    ws: Path, capsys: pytest.CaptureFixture[str], body: str | None, questions: tuple[str, ...], case_id: str
) -> None:
    outcome, service = _run_chatty(ws, capsys, [_long_chat("chatty", *questions), *HEALTHY], body)
    assert outcome.code == 2
    assert outcome.err.splitlines()[0] == (
        f"ragjudge: error: endpoint.body: the template renders over 2,000 bytes for case {case_id!r} "
        "(endpoint.max_request_bytes: 2,000); rendering was stopped there"
    )
    assert service.asked == []
    assert not (ws / "report.json").exists()


def test_probe_stops_a_conversation_at_the_turn_its_answers_made_too_large(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = Chatty()
    endpoint = {"body": '{"messages": {{ messages | tojson }}}', "max_request_bytes": LIMIT}
    with ResponderServer(service) as server:
        write_config(ws, server.url, [_long_chat("chatty", *Q_LONG), *HEALTHY], endpoint=endpoint)
        outcome = run(capsys, "probe", "--case", "chatty")
    assert outcome.code == 1, outcome.err
    lines = outcome.out.splitlines()
    at = lines.index("== chatty: turn 3 of 4")
    assert lines[at + 1 :] == [f"result: {OUTGROWN}", "", "turns 4 to 4 not sent: turn 3 gave no answer"]
    assert lines.count("result: the reply maps cleanly") == 2
    assert service.asked == [[Q_LONG[0]], [Q_LONG[0], Q_LONG[1]]]
