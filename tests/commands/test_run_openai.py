"""`ragjudge run` end to end with `judge.provider: openai`: a loopback RAG service, a loopback OpenAI-compatible
judge spoken to by the real `openai` SDK, and the report, comment and log that come out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import (
    KEY,
    PASSAGES,
    by_kind,
    claim,
    claims_json,
    kind_of,
    kinds,
    merged,
    rubric_json,
    user_text,
)

ENV_KEY = "RAGJUDGE_TEST_OPENAI_KEY"

Q_GOOD = "How long do refunds take?"
Q_FAITH = "Who pays for return shipping?"
Q_GROUND = "Is there a restocking fee?"
Q_BROKEN = "Can I change my invoice title?"
Q_OOS = "What's the weather in Paris tomorrow?"

A_GOOD = "Refunds take 5 working days."
A_FAITH = "Refunds take 5 working days. 运费由商家承担。"
A_GROUND = "A 10% restocking fee applies to every return."
A_BROKEN = "You can change the invoice title within 30 days."
A_OOS = "I'm sorry, I don't have information about that."

CASES = [
    {"id": "good", "question": Q_GOOD, "category": "refund"},
    {"id": "faith", "question": Q_FAITH, "category": "shipping"},
    {"id": "ground", "question": Q_GROUND, "category": "refund"},
    {"id": "broken", "question": Q_BROKEN, "category": "invoice"},
    {"id": "oos", "question": Q_OOS, "category": "out_of_scope"},
]

RAG_REPLIES: dict[str, Any] = {
    Q_GOOD: answer(A_GOOD, ["p1"], PASSAGES),
    Q_FAITH: answer(A_FAITH, ["p1", "p2"], PASSAGES),
    Q_GROUND: answer(A_GROUND, ["p1"], PASSAGES),
    Q_BROKEN: answer(A_BROKEN, ["p2"], PASSAGES),
    Q_OOS: answer(A_OOS, [], {}, refused=True, confidence="none"),
}

GROUND_REASON = "the 10% restocking fee appears in no passage"
PROSE = "This answer seems fine to me, I would rate it highly."

RUBRIC_BY_QUESTION: dict[str, str] = {
    Q_GOOD: rubric_json(),
    Q_FAITH: rubric_json(),
    Q_GROUND: rubric_json({"grounding": 2}, {"grounding": GROUND_REASON}),
    Q_BROKEN: PROSE,  # never valid: this judgement ends unscored
    Q_OOS: rubric_json({"grounding": 5, "calibration": 5}, dims=("grounding", "calibration")),
}
CLAIMS_BY_ANSWER: dict[str, str] = {
    A_GOOD: claims_json(claim("Refunds take 5 working days.", True, "p1")),
    A_FAITH: claims_json(
        claim("Refunds take 5 working days.", True, "p1", "p1 says so"),
        claim("运费由商家承担", False, None, "p2 says the buyer pays return shipping"),
    ),
    A_GROUND: claims_json(claim("A 10% restocking fee applies to every return.", True, "p1", "judge thinks so")),
    A_BROKEN: claims_json(claim("You can change the invoice title within 30 days.", True, "p2")),
}


def claims_responder(body: dict[str, Any], call_index: int) -> Reply:
    text = user_text(body)
    for ans, reply in CLAIMS_BY_ANSWER.items():
        if f"<answer>\n{ans}\n</answer>" in text:
            return Reply(content=reply)
    raise AssertionError(f"unexpected faithfulness request: {text[-200:]}")


def rubric_responder(body: dict[str, Any], call_index: int) -> Reply:
    text = user_text(body)
    for question, reply in RUBRIC_BY_QUESTION.items():
        if f"## Question\n{question}\n" in text:
            return Reply(content=reply)
    raise AssertionError(f"unexpected rubric request: {text[:200]}")


def judge_responder(body: dict[str, Any], call_index: int) -> Reply:
    """Answers like a judge would, per question (rubric) or per answer (claims); both at once when combined."""
    kind = kind_of(body)
    if kind == "faithfulness":
        return claims_responder(body, call_index)
    if kind == "combined":
        return merged(rubric_responder, claims_responder)(body, call_index)
    return rubric_responder(body, call_index)


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(judge_responder) as fake:
        yield fake


@pytest.fixture
def rag() -> Iterator[RagServer]:
    with RagServer(RAG_REPLIES) as server:
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def write_config(
    tmp_path: Path,
    rag_url: str,
    base_url: str,
    *,
    judge: dict[str, Any] | None = None,
    case: dict[str, str] | None = None,
    suite: dict[str, str] | None = None,
    cases: list[dict[str, Any]] | None = None,
) -> Path:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases or CASES, allow_unicode=True), encoding="utf-8")
    judge_block: dict[str, Any] = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "base_url": base_url,
        "api_key": "${" + ENV_KEY + "}",
        "max_retries": 1,
        "timeout_s": 10,
        "concurrency": 4,
        "cache": "judge-cache",
        "prices": {"gpt-4o-mini": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
    }
    judge_block.update(judge or {})
    config = {
        "endpoint": {"url": rag_url, "timeout_s": 5, "retries": 0},
        "cases": ["cases.yaml"],
        "judge": {k: v for k, v in judge_block.items() if v is not None},
        "gate": {
            "case": case if case is not None else {"faithfulness": ">= 0.8", "judge.grounding": ">= 3"},
            "suite": suite if suite is not None else {"pass_rate": ">= 0.9"},
        },
    }
    path = tmp_path / "ragjudge.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


class Run:
    def __init__(self, code: int, out: str, err: str, folder: Path) -> None:
        self.code, self.out, self.err = code, out, err
        self.report_text = (
            (folder / "report.json").read_text(encoding="utf-8") if (folder / "report.json").exists() else ""
        )
        self.comment = (folder / "comment.md").read_text(encoding="utf-8") if (folder / "comment.md").exists() else ""
        self.log_text = (folder / "eval.jsonl").read_text(encoding="utf-8") if (folder / "eval.jsonl").exists() else ""
        self.report: dict[str, Any] = json.loads(self.report_text) if self.report_text else {}
        self.log = [json.loads(line) for line in self.log_text.splitlines()]

    def case(self, case_id: str) -> dict[str, Any]:
        found: list[dict[str, Any]] = [c for c in self.report["cases"] if c["id"] == case_id]
        assert len(found) == 1, case_id
        return found[0]

    def everything(self) -> str:
        return "\n".join([self.out, self.err, self.report_text, self.comment, self.log_text])


def run(config: Path, capsys: pytest.CaptureFixture[str], *extra: str, name: str = "out") -> Run:
    folder = config.parent / name
    folder.mkdir(exist_ok=True)
    code = main(
        [
            "run",
            "--config",
            str(config),
            "--report",
            str(folder / "report.json"),
            "--comment-file",
            str(folder / "comment.md"),
            "--log",
            str(folder / "eval.jsonl"),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err, folder)


# ------------------------------------------------------------------------------------------ the run
def test_verdicts_and_reasons_with_an_openai_compatible_judge(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run(write_config(tmp_path, rag.url, judge_server.base_url), capsys)
    assert r.code == 1, r.err
    assert r.report["verdict"] == "fail"
    statuses = {c["id"]: c["status"] for c in r.report["cases"]}
    assert statuses == {"good": "pass", "faith": "fail", "ground": "fail", "broken": "error", "oos": "pass"}

    assert r.case("faith")["failed_conditions"] == [
        'faithfulness 0.500 < 0.8 (1 of 2 claims unsupported: "运费由商家承担")'
    ]
    assert r.case("ground")["failed_conditions"] == [f"judge.grounding 2 < 3: {GROUND_REASON}"]
    # One combined reply carries both judgements: when it stays invalid, neither is scored.
    invalid = "judge reply invalid after 2 attempts: the reply is not a JSON object"
    broken = r.case("broken")
    # One cause, said once, naming both judgements it left unscored (not blamed on faithfulness alone).
    assert [c.split(" (")[0] for c in broken["failed_conditions"]] == [
        f"faithfulness and judge.grounding unscored: {invalid}"
    ]
    # The unscored judgement is never a number, and the case is an error, never a pass.
    assert broken["judge"]["scores"] == {} and "judge.grounding" not in broken["metrics"]
    assert [u["judgement"] for u in broken["judge"]["unscored"]] == ["rubric", "faithfulness"]
    assert broken["judge"]["faithfulness"] is None and broken["judge"]["claims"] == []

    suite = r.report["suite"]
    assert (suite["cases"], suite["passed"], suite["failed"], suite["errored"]) == (5, 2, 2, 1)
    assert suite["judge_error_rate"] == pytest.approx(0.2)
    assert suite["faithfulness"] == pytest.approx((1.0 + 0.5 + 1.0) / 3)  # oos refused: not applicable
    assert suite["judge_calls"] == 6  # 1 per answered case, +1 retry for the broken one, 1 for the refusal
    assert suite["judge_cache_hits"] == 0
    assert suite["judge_tokens"] == 6 * 120
    assert suite["judge_cost_usd"] == pytest.approx(6 * (100 * 1.0 + 20 * 2.0) / 1e6)
    assert suite["cost_usd"] == pytest.approx(suite["judge_cost_usd"])
    assert r.case("good")["judge"]["cost_usd"] == pytest.approx(140 / 1e6)
    assert r.case("good")["judge"]["tokens"] == 120
    assert judge_server.call_count == 6
    assert kinds(judge_server).count("combined") == 5 and kinds(judge_server).count("negative") == 1

    # The out-of-scope refusal: only grounding and calibration asked, no claim audit, rule skipped.
    oos = r.case("oos")["judge"]
    assert oos["scores"] == {"grounding": 5, "calibration": 5} and oos["faithfulness"] is None
    assert r.report["judge_info"]["provider"] == "openai"
    assert r.report["judge_info"]["model"] == "gpt-4o-mini"
    assert r.report["judge_info"]["base_url_host"] == "127.0.0.1"
    assert r.report["judge_info"]["lexical"] is False
    assert r.report["judge_info"]["combined"] is True

    # The comment: verdict, the failing conditions, unsupported claims, the judge's reasons, unscored ones.
    assert r.comment.startswith("## ❌ ragjudge: FAIL")
    assert "2 of 5 cases passed" in r.comment
    assert "运费由商家承担" in r.comment and "p2 says the buyer pays return shipping" in r.comment
    assert "Unsupported claims:" in r.comment
    assert GROUND_REASON in r.comment
    assert "Unscored judgements:" in r.comment
    assert "judge reply invalid after 2 attempts" in r.comment
    assert "lexical" not in r.comment

    # stdout names each failing case and why.
    assert r.out.splitlines()[:2] == [
        "ragjudge: FAIL: Blocked by pass_rate 0.400 < 0.9. 3 more cases must pass.",
        "  2/5 cases passed, 2 failed, 1 errored (judge: gpt-4o-mini)",
    ]
    assert "broken error: faithfulness and judge.grounding unscored: judge reply invalid" in r.out


def test_with_combined_false_each_judgement_has_its_own_call_and_fails_alone(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run(write_config(tmp_path, rag.url, judge_server.base_url, judge={"combined": False}), capsys)
    assert r.code == 1, r.err
    statuses = {c["id"]: c["status"] for c in r.report["cases"]}
    assert statuses == {"good": "pass", "faith": "fail", "ground": "fail", "broken": "error", "oos": "pass"}
    [broken_reason] = r.case("broken")["failed_conditions"]
    assert broken_reason.startswith(
        "judge.grounding unscored: judge reply invalid after 2 attempts: the reply is not a JSON object"
    )
    broken = r.case("broken")
    assert broken["judge"]["unscored"][0]["judgement"] == "rubric"
    assert broken["judge"]["faithfulness"] == 1.0  # its own call, its own verdict
    suite = r.report["suite"]
    assert suite["faithfulness"] == pytest.approx((1.0 + 0.5 + 1.0 + 1.0) / 4)
    assert suite["judge_calls"] == judge_server.call_count == 10  # 2 per answered case, +1 retry, 1 refusal
    assert suite["judge_tokens"] == 10 * 120
    assert r.case("good")["judge"]["tokens"] == 240
    assert "combined" not in kinds(judge_server) and r.report["judge_info"]["combined"] is False


def test_the_log_has_one_line_per_judge_call_with_what_was_sent_and_received(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run(write_config(tmp_path, rag.url, judge_server.base_url), capsys)
    judge_lines = [line for line in r.log if line["type"] == "judge"]
    assert len(judge_lines) == judge_server.call_count == 6
    required = {
        "case_id", "timestamp", "judge_kind", "model", "base_url_host", "messages", "raw_reply", "parsed",
        "validation_error", "tokens", "latency_ms", "cache_hit",
    }  # fmt: skip
    for line in judge_lines:
        assert required <= set(line), required - set(line)
        assert line["model"] == "gpt-4o-mini" and line["base_url_host"] == "127.0.0.1"
        assert line["tokens"] == {"prompt": 100, "completion": 20} and line["cache_hit"] is False
        assert line["messages"][0]["role"] == "system" and line["latency_ms"] > 0
    broken = [line for line in judge_lines if line["case_id"] == "broken"]
    assert [line["judge_kind"] for line in broken] == ["combined", "combined"]
    assert [line["raw_reply"] for line in broken] == [PROSE, PROSE]
    assert all(line["parsed"] is None and line["validation_error"] for line in broken)
    [good] = [line for line in judge_lines if line["case_id"] == "good"]
    assert good["judge_kind"] == "combined" and good["validation_error"] is None
    # What was parsed: the scores, the reasons and the claim verdicts, from one reply.
    assert good["parsed"][0]["grounding"] == 4 and good["parsed"][1]["tone"] == "tone: fine"
    assert good["parsed"][2] == [json.loads(CLAIMS_BY_ANSWER[A_GOOD])["claims"][0]]
    assert [line["judge_kind"] for line in judge_lines if line["case_id"] == "oos"] == ["rubric"]
    assert {line["case_id"] for line in r.log if line["type"] == "endpoint"} == {c["id"] for c in CASES}


def test_the_api_key_appears_nowhere(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run(write_config(tmp_path, rag.url, judge_server.base_url), capsys)
    assert r.report_text and r.comment and r.log_text and r.out
    assert KEY not in r.everything()
    cached = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "judge-cache").rglob("*.json"))
    assert cached and KEY not in cached
    # ... while it was really sent to the judge.
    assert judge_server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_a_rerun_makes_no_judge_calls_but_calls_the_endpoint_again(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, rag.url, judge_server.base_url)
    first = run(config, capsys, name="first")
    assert judge_server.call_count == 6 and len(rag.seen) == 5

    # Second run: everything validated is cached; the judgement that failed validation is asked again.
    second = run(config, capsys, name="second")
    assert judge_server.call_count == 8 and len(rag.seen) == 10
    assert second.report["suite"]["judge_calls"] == 2
    assert second.report["suite"]["judge_cache_hits"] == 4
    assert [c["status"] for c in second.report["cases"]] == [c["status"] for c in first.report["cases"]]
    assert second.case("faith")["failed_conditions"] == first.case("faith")["failed_conditions"]
    hits = [line for line in second.log if line["type"] == "judge" and line["cache_hit"]]
    assert len(hits) == 4

    # The judge behaves now: its verdict is stored, and the next run costs nothing.
    def fixed(body: dict[str, Any], i: int) -> Reply:
        if kind_of(body) != "faithfulness" and f"## Question\n{Q_BROKEN}\n" in user_text(body):
            return merged(lambda b, k: Reply(content=rubric_json()), claims_responder)(body, i)
        return judge_responder(body, i)

    judge_server.responder = fixed
    third = run(config, capsys, name="third")
    assert judge_server.call_count == 9 and third.case("broken")["status"] == "pass"
    fourth = run(config, capsys, name="fourth")
    assert judge_server.call_count == 9
    assert fourth.report["suite"]["judge_calls"] == 0 and fourth.report["suite"]["judge_cache_hits"] == 5
    assert fourth.report["suite"]["judge_cost_usd"] == 0 and len(rag.seen) == 20
    # Latency is measured afresh every run.
    assert all(c["trace"]["latency_ms"] > 0 for c in fourth.report["cases"])


def test_a_fatal_judge_error_stops_all_judge_calls_and_no_case_passes(
    tmp_path: Path, rag: RagServer, capsys: pytest.CaptureFixture[str]
) -> None:
    echo = {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error", "code": "invalid_api_key"}
    with FakeOpenAI(Reply(status=401, error=echo)) as fake:
        r = run(write_config(tmp_path, rag.url, fake.base_url, judge={"concurrency": 1}), capsys)
        assert fake.call_count == 1
    assert r.code == 3 and r.report["verdict"] == "error"
    assert {c["status"] for c in r.report["cases"]} == {"error"}
    for c in r.report["cases"]:
        assert any("HTTP 401" in cond for cond in c["failed_conditions"]), c
    assert r.report["suite"]["judge_error_rate"] == 1.0
    assert "HTTP 401" in r.comment
    assert KEY not in r.everything()


def test_without_judge_rules_an_unscored_judgement_does_not_error_the_case(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, rag.url, judge_server.base_url, case={"latency_ms": "<= 10000"})
    r = run(config, capsys)
    assert r.case("broken")["status"] == "pass"
    # ... but it is still counted and shown.
    assert r.report["suite"]["judge_error_rate"] == pytest.approx(0.2)
    assert r.case("broken")["judge"]["unscored"]


def test_escalation_is_reported_with_the_model(
    tmp_path: Path, rag: RagServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def responder(body: dict[str, Any], i: int) -> Reply:
        if body["model"] == "strong":
            strong = Reply(content=rubric_json({"grounding": 5}, {"grounding": "strong: p1 supports it"}))
            return merged(lambda b, k: strong, claims_responder)(body, i)
        if f"## Question\n{Q_GOOD}\n" in user_text(body):
            return merged(lambda b, k: Reply(content=rubric_json({"grounding": 3})), claims_responder)(body, i)
        return judge_responder(body, i)

    with FakeOpenAI(responder) as fake:
        config = write_config(
            tmp_path,
            rag.url,
            fake.base_url,
            judge={"escalate": {"model": "strong", "band": 0.1}},
            cases=[CASES[0]],
            case={"judge.grounding": ">= 3"},
        )
        r = run(config, capsys)
        assert [b["model"] for b in fake.bodies].count("strong") == 1
    good = r.case("good")
    # One combined call re-judged both; the stronger model's verdict stands for both.
    assert good["judge"]["escalated"] == ["rubric by strong", "faithfulness by strong"]
    assert good["judge"]["scores"]["grounding"] == 5 and good["status"] == "pass"
    assert any(line.get("model") == "strong" for line in r.log if line["type"] == "judge")
    # The bill shows the stronger model's share apart: its one call, its tokens, its cost unknown (no price).
    strong = [line for line in r.log if line["type"] == "judge" and line.get("model") == "strong"]
    escalation = good["judge"]["escalation"]
    assert (escalation["calls"], escalation["cost_usd"]) == (1, None)
    assert 0 < escalation["tokens"] < good["judge"]["tokens"]
    kinds = r.report["suite"]["judge_by_kind"]
    assert (kinds["escalation"]["calls"], kinds["first"]["calls"]) == (1, good["judge"]["calls"] - 1)
    assert kinds["escalation"]["tokens"] == escalation["tokens"] and len(strong) == 1
    assert kinds["first"]["tokens"] + kinds["escalation"]["tokens"] == r.report["suite"]["judge_tokens"]


def test_without_passage_text_the_report_lists_grounding_and_citations_as_unassessable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "How do I reset my password?"
    reply = {"answer": "Use the reset link on the login page.", "retrievedIds": ["acc-1"], "confidence": "high"}

    claims = Reply(content=claims_json(claim("Use the reset link.", False, None, "no passage text")))
    rubric = Reply(content=rubric_json(dims=("relevance", "calibration", "tone")))
    responder = by_kind(rubric=rubric, faithfulness=claims)

    with RagServer({question: reply}) as rag, FakeOpenAI(responder) as fake:
        config = write_config(
            tmp_path,
            rag.url,
            fake.base_url,
            cases=[{"id": "pw", "question": question}],
            case={"judge.grounding": ">= 3", "judge.relevance": ">= 3"},
        )
        r = run(config, capsys)
        [body] = fake.bodies
    assert kind_of(body) == "combined"
    assert "(none recorded: no claim can be supported)" in user_text(body)
    assert body["response_format"]["json_schema"]["schema"]["$defs"]["Scores"]["required"] == [
        "relevance",
        "calibration",
        "tone",
    ]
    judge = r.case("pw")["judge"]
    assert judge["unassessable"] == ["grounding", "citations"]
    assert "grounding" not in judge["scores"] and judge["unscored"] == []
    assert judge["faithfulness"] == 0.0
    # Not assessable is not an error: the rule does not apply, and nothing is guessed.
    assert r.case("pw")["status"] == "pass" and r.report["suite"]["judge_error_rate"] == 0.0


def test_a_reply_with_no_passages_and_no_retrieved_mapping_is_not_audited_for_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "How do I reset my password?"
    reply = {"answer": "Use the reset link on the login page."}  # an OpenAI-style chat service: no passages at all
    rubric = Reply(content=rubric_json(dims=("relevance", "calibration", "tone")))
    with RagServer({question: reply}) as rag, FakeOpenAI(by_kind(rubric=rubric)) as fake:
        config = write_config(
            tmp_path,
            rag.url,
            fake.base_url,
            cases=[{"id": "pw", "question": question}],
            case={"faithfulness": ">= 0.8", "judge.grounding": ">= 3", "judge.relevance": ">= 3"},
        )
        r = run(config, capsys)
        [body] = fake.bodies
    assert kind_of(body) == "rubric"  # the rubric alone: no claim is checked against passages nobody saw
    assert "No sources were recorded: the service does not expose the passages it retrieved." in user_text(body)
    pw = r.case("pw")
    reason = "the service exposes no passages (endpoint.response.retrieved is not mapped and the reply has none)"
    assert pw["status"] == "error"
    assert pw["failed_conditions"] == [f"faithfulness unknown: {reason}", f"judge.grounding unknown: {reason}"]
    assert (pw["judge"]["faithfulness"], pw["judge"]["unassessable"]) == (None, ["grounding", "citations"])
    assert pw["judge"]["scores"]["relevance"] == 4 and r.report["suite"]["judge_error_rate"] == 0.0


# ------------------------------------------------------------------------------------------- traces
def _write_traces(path: Path) -> None:
    rows = [
        {"id": "t-1", "question": Q_GOOD, "latencyMs": 420, **answer(A_GOOD, ["p1"], PASSAGES)},
        {"id": "t-2", "question": Q_FAITH, "latencyMs": 610, **answer(A_FAITH, ["p1", "p2"], PASSAGES)},
        {"id": "t-3", "question": Q_GROUND, "latencyMs": 2500, **answer(A_GROUND, ["p1"], PASSAGES)},
        {"id": "t-4", "question": Q_OOS, "category": "out_of_scope", "latencyMs": 90,
         **answer(A_OOS, [], {}, refused=True, confidence="none")},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")


def test_recorded_traces_are_judged_without_calling_the_endpoint(
    tmp_path: Path, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = tmp_path / "traces.jsonl"
    _write_traces(traces)
    with RagServer({}) as rag:
        config = write_config(
            tmp_path,
            rag.url,
            judge_server.base_url,
            case={"faithfulness": ">= 0.8", "judge.grounding": ">= 3", "latency_ms": "<= 1000"},
            suite={"pass_rate": ">= 0.5", "p95_latency_ms": "<= 3000"},
        )
        r = run(config, capsys, "--traces", str(traces))
        assert rag.seen == []
    assert [c["id"] for c in r.report["cases"]] == ["t-1", "t-2", "t-3", "t-4"]
    assert [c["trace"]["latency_ms"] for c in r.report["cases"]] == [420, 610, 2500, 90]
    assert r.case("t-3")["failed_conditions"] == [f"judge.grounding 2 < 3: {GROUND_REASON}", "latency_ms 2500 > 1000"]
    assert r.case("t-2")["failed_conditions"] == [
        'faithfulness 0.500 < 0.8 (1 of 2 claims unsupported: "运费由商家承担")'
    ]
    assert r.case("t-1")["status"] == "pass" and r.case("t-4")["status"] == "pass"
    assert judge_server.call_count == 4  # one combined call per answer, the negative rubric for the refusal
    [warning] = [w for w in r.report["warnings"] if w.startswith("judged recorded traces")]
    assert "latency figures are the recorded ones, not measured by ragjudge" in warning
    assert "latency figures are the recorded ones" in r.out and "latency figures are the recorded ones" in r.comment
    assert r.report["suite"]["p95_latency_ms"] == 2500
    assert not [line for line in r.log if line["type"] == "endpoint" and not line.get("final")]


def test_a_sample_of_recorded_traces_is_reproducible(
    tmp_path: Path, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = tmp_path / "traces.jsonl"
    _write_traces(traces)
    config = write_config(tmp_path, "http://127.0.0.1:9/unused", judge_server.base_url, case={}, suite={})
    a = run(config, capsys, "--traces", str(traces), "--sample", "2", "--seed", "5", name="a")
    b = run(config, capsys, "--traces", str(traces), "--sample", "2", "--seed", "5", name="b")
    ids_a = [c["id"] for c in a.report["cases"]]
    assert len(ids_a) == 2 and set(ids_a) <= {"t-1", "t-2", "t-3", "t-4"}
    assert ids_a == [c["id"] for c in b.report["cases"]]
    assert ids_a == sorted(ids_a)  # file order kept
    seeds = {tuple(c["id"] for c in run(config, capsys, "--traces", str(traces), "--sample", "2", "--seed", str(s),
                                       name=f"s{s}").report["cases"]) for s in range(6)}  # fmt: skip
    assert len(seeds) > 1  # the seed matters


def test_sample_without_traces_is_a_usage_error(
    tmp_path: Path, rag: RagServer, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    r = run(write_config(tmp_path, rag.url, judge_server.base_url), capsys, "--sample", "2")
    assert r.code == 2 and "--sample N needs --traces FILE" in r.err
    assert judge_server.call_count == 0 and rag.seen == []


# ------------------------------------------------------------------------------------------ api key
@pytest.mark.parametrize(
    ("api_key", "env"),
    [(None, None), ("${OPENAI_API_KEY_FOR_TEST:-}", None), ("${OPENAI_API_KEY_FOR_TEST}", "")],
    ids=["absent", "empty-fallback", "empty-variable"],
)
def test_a_missing_api_key_is_exit_2_naming_judge_api_key(
    tmp_path: Path,
    rag: RagServer,
    judge_server: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    api_key: str | None,
    env: str | None,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY_FOR_TEST", raising=False)
    if env is not None:
        monkeypatch.setenv("OPENAI_API_KEY_FOR_TEST", env)
    config = write_config(tmp_path, rag.url, judge_server.base_url, judge={"api_key": api_key})
    r = run(config, capsys)
    assert r.code == 2
    assert "judge.api_key" in r.err and "Traceback" not in r.err
    assert judge_server.call_count == 0 and rag.seen == []


def test_an_unset_key_variable_is_exit_2_naming_the_variable(
    tmp_path: Path,
    rag: RagServer,
    judge_server: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV_KEY)
    r = run(write_config(tmp_path, rag.url, judge_server.base_url), capsys)
    assert r.code == 2 and f"judge.api_key: environment variable {ENV_KEY} is not set" in r.err
