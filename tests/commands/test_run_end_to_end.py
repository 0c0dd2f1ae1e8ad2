"""`ragjudge run` end to end over real loopback HTTP, against a RAG server whose every reply we control.

Every output is checked: the exit code, the JSON report, the Markdown comment, the `--log`
JSONL, stdout and stderr, and that the header token never leaves the request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge import masking
from ragjudge.cli import main
from ragjudge.config.loader import parse_config
from tests.fakes.rag import RagServer, Raw, answer, closed_port_url

TOKEN = "tok-s3cr3t-4242"
DEFAULT_CASE_RULES = {"context_recall": ">= 1.0", "latency_ms": "<= 10000"}
HTML_BODY = b"<html><body><h1>502 Bad Gateway</h1></body></html>"


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with the token in the environment (the way CI provides it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", TOKEN)
    return tmp_path


def write_config(
    folder: Path,
    url: str,
    cases: Sequence[Mapping[str, Any]],
    *,
    case_rules: Mapping[str, str] | None = None,
    suite_rules: Mapping[str, str] | None = None,
    endpoint: Mapping[str, Any] | None = None,
) -> Path:
    (folder / "cases.yaml").write_text(yaml.safe_dump(list(cases), allow_unicode=True), encoding="utf-8")
    gate: dict[str, Any] = {}
    if case_rules is not None:
        gate["case"] = dict(case_rules)
    if suite_rules is not None:
        gate["suite"] = dict(suite_rules)
    config: dict[str, Any] = {
        "endpoint": {
            "url": url,
            "headers": {"Authorization": "Bearer ${RAG_TOKEN}"},
            "retries": 0,
            "timeout_s": 5,
            **(endpoint or {}),
        },
        "judge": {"provider": "offline"},
        "cases": ["cases.yaml"],
    }
    if gate:
        config["gate"] = gate
    path = folder / "ragjudge.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Outcome:
    code = main(list(args))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def by_id(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report["cases"]}


# --- the mixed suite: every deterministic reason, one error of each kind -----------------------

REFUND_EN = "Refunds take 5 working days after approval."
REFUND_ZH = "七天内可以退款，需要提供订单号和购买凭证。"

MIXED_CASES: list[dict[str, Any]] = [
    {
        "id": "refund-en",
        "question": "How long do refunds take?",
        "golden_context_ids": ["doc-refund-1"],
        "must_mention": ["5 Working Days"],
        "category": "refund",
    },
    {"id": "refund-zh", "question": "耳机能退吗？", "goldenContextIds": ["doc-refund-2"], "category": "退款"},
    {"id": "missing-detail", "question": "What do I need for a refund?", "mustMention": ["order number"]},
    {"id": "forbidden", "question": "Is shipping free?", "must_not_mention": ["always free"]},
    {"id": "declined", "question": "How do I get an invoice?", "category": "invoice"},
    {"id": "oos-high", "question": "What's the weather in Paris?", "category": "out_of_scope"},
    {"id": "oos-none", "question": "Who won the match?", "category": "out_of_scope"},
    {"id": "oos-refused", "question": "明天股票会涨吗？", "category": "超纲"},
    {"id": "recall", "question": "Can I change my address?", "golden_context_ids": ["doc-acc-1", "doc-acc-2"]},
    {"id": "echo", "question": "What did my request carry?"},
    {"id": "server-500", "question": "This one breaks the server"},
    {"id": "not-json", "question": "This one gets a proxy page"},
]

MIXED_REPLIES: dict[str, Any] = {
    "How long do refunds take?": answer(REFUND_EN, ["doc-refund-1"], {"doc-refund-1": REFUND_EN}, cost_usd=0.001),
    "耳机能退吗？": answer("七天内可以退款。需要提供订单号。", ["doc-refund-2"], {"doc-refund-2": REFUND_ZH}),
    "What do I need for a refund?": answer("You need a receipt.", ["d1"], {"d1": "Keep a receipt."}),
    "Is shipping free?": answer("Shipping is ALWAYS FREE for members.", ["d2"], {"d2": "Shipping costs 10 yuan."}),
    "How do I get an invoice?": answer("Sorry, I can't help with that.", [], refused=True, confidence="none"),
    "What's the weather in Paris?": answer("It will be sunny in Paris.", [], confidence="high"),
    "Who won the match?": answer("I am not sure, that is outside what I know.", [], confidence="none"),
    "明天股票会涨吗？": answer("抱歉，知识库中没有相关信息。", [], refused=True, confidence="high"),
    "Can I change my address?": answer("Yes, in account settings.", ["doc-acc-1", "x"], {"doc-acc-1": "Settings."}),
    "What did my request carry?": answer(f"Your request carried Bearer {TOKEN}.", []),
    "This one breaks the server": Raw(500, b'{"detail": "boom"}'),
    "This one gets a proxy page": Raw(200, HTML_BODY, "text/html; charset=utf-8"),
}

EXPECTED_STATUS = {
    "refund-en": ("pass", []),
    "refund-zh": ("pass", []),
    "missing-detail": ("fail", ['missing required detail: "order number"']),
    "forbidden": ("fail", ['contains forbidden claim: "always free"']),
    "declined": ("fail", ["declined a question the corpus covers"]),
    "oos-high": ("fail", ['answered an out-of-scope question with confidence "high"']),
    "oos-none": ("pass", []),
    "oos-refused": ("pass", []),
    "recall": ("fail", ["context_recall 0.500 < 1 (missing doc-acc-2; retrieved doc-acc-1, x)"]),
    "echo": ("pass", []),
    "server-500": ("error", ['endpoint error: HTTP 500 from POST {url} after 1 attempt: {{"detail":"boom"}}']),
    "not-json": ("error", [f"endpoint error: reply is not valid JSON (text/html, {len(HTML_BODY)} bytes)"]),
}


@dataclass
class MixedRun:
    outcome: Outcome
    report: dict[str, Any]
    report_text: str
    comment: str
    log_lines: list[dict[str, Any]]
    log_text: str
    server: RagServer
    folder: Path


@pytest.fixture
def mixed(ws: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[MixedRun]:
    with RagServer(MIXED_REPLIES) as rag:
        write_config(ws, rag.url, MIXED_CASES)
        outcome = run(
            capsys,
            "run",
            "--config",
            "ragjudge.yml",
            "--report",
            "out/report.json",
            "--comment-file",
            "out/comment.md",
            "--log",
            "out/log.jsonl",
        )
        log_text = (ws / "out" / "log.jsonl").read_text(encoding="utf-8")
        yield MixedRun(
            outcome=outcome,
            report=load(ws / "out" / "report.json"),
            report_text=(ws / "out" / "report.json").read_text(encoding="utf-8"),
            comment=(ws / "out" / "comment.md").read_text(encoding="utf-8"),
            log_lines=[json.loads(line) for line in log_text.splitlines()],
            log_text=log_text,
            server=rag,
            folder=ws,
        )


def test_mixed_run_fails_the_gate_with_exit_1(mixed: MixedRun) -> None:
    assert mixed.outcome.code == 1
    assert mixed.report["verdict"] == "fail"
    assert mixed.outcome.err == ""


def test_every_case_gets_its_status_and_exact_reasons(mixed: MixedRun) -> None:
    cases = by_id(mixed.report)
    assert list(cases) == [c["id"] for c in MIXED_CASES]  # report order is case order
    assert {cid: (c["status"], c["failed_conditions"]) for cid, c in cases.items()} == {
        cid: (status, [r.format(url=mixed.server.url) if "{url}" in r else r for r in reasons])
        for cid, (status, reasons) in EXPECTED_STATUS.items()
    }


def test_suite_block(mixed: MixedRun) -> None:
    suite = mixed.report["suite"]
    assert set(suite) == {
        "cases",
        "passed",
        "failed",
        "errored",
        "pass_rate",
        "faithfulness",
        "rejection_accuracy",
        "p50_latency_ms",
        "p95_latency_ms",
        "judge_error_rate",
        "endpoint_error_rate",
        "cost_usd",
        # added beside the contract's names, as docs/report.md documents
        "judge_calls",
        "judge_cache_hits",
        "judge_tokens",
        "judge_cost_usd",
        "service_cost_usd",
        "judge_by_kind",
        "flaky_cases",
        # the reference judgement's figures
        "answer_correctness",
        "reference_contradictions",
        # streamed replies' time to the first token (none here: every reply is one JSON body)
        "p50_ttft_ms",
        "p95_ttft_ms",
        # a suite metric the registry gained after the contract (docs/metrics.md)
        "p99_latency_ms",
        # the cases' tool conditions (none here: no case has `tools:`)
        "tool_condition_accuracy",
    }
    assert (suite["p50_ttft_ms"], suite["p95_ttft_ms"]) == (None, None)
    assert suite["tool_condition_accuracy"] is None
    assert suite["flaky_cases"] == 0
    assert (suite["cases"], suite["passed"], suite["failed"], suite["errored"]) == (12, 5, 5, 2)
    assert suite["pass_rate"] == pytest.approx(5 / 12)
    # 10 replies; wrong: "declined" (in scope, refused), "oos-high" and "oos-none" (out of scope, answered).
    assert suite["rejection_accuracy"] == pytest.approx(7 / 10)
    assert suite["endpoint_error_rate"] == pytest.approx(2 / 12)
    assert suite["judge_error_rate"] == 0.0
    assert suite["cost_usd"] == 0.001
    assert suite["service_cost_usd"] == 0.001  # the replies' own, apart from the judge's (the offline judge: 0)
    assert 0 < suite["p50_latency_ms"] <= suite["p95_latency_ms"] < 3000
    latencies = sorted(c["trace"]["latency_ms"] for c in mixed.report["cases"] if c["trace"]["latency_ms"] is not None)
    assert len(latencies) == 10
    assert suite["p50_latency_ms"] == latencies[4]  # nearest rank: ceil(0.5 * 10) = 5th
    assert suite["p95_latency_ms"] == latencies[9]  # ceil(0.95 * 10) = 10th


def test_rules_entries(mixed: MixedRun) -> None:
    rules = mixed.report["rules"]
    assert [(r["scope"], r["metric"], r["op"], r["threshold"]) for r in rules] == [
        ("case", "context_recall", ">=", 1.0),
        ("case", "latency_ms", "<=", 10000.0),
        ("suite", "pass_rate", ">=", 0.9),
        ("suite", "rejection_accuracy", ">=", 0.9),
        ("suite", "p95_latency_ms", "<=", 3000.0),
    ]
    for rule in rules:
        assert set(rule) == {"scope", "metric", "op", "threshold", "value", "passed", "reason"}
    recall, latency, pass_rate, rejection, p95 = rules
    assert (recall["value"], recall["passed"], recall["reason"]) == (
        1.0,
        False,
        "1 case(s) failed context_recall >= 1: recall",
    )
    assert (latency["passed"], latency["reason"]) == (True, "every evaluated case met latency_ms <= 10000")
    assert (pass_rate["passed"], pass_rate["reason"]) == (False, "pass_rate 0.417 < 0.9")
    assert (rejection["value"], rejection["passed"], rejection["reason"]) == (
        pytest.approx(0.7),
        False,
        "rejection_accuracy 0.700 < 0.9",
    )
    assert p95["passed"] is True


def test_case_entries_and_traces(mixed: MixedRun) -> None:
    cases = by_id(mixed.report)
    en = cases["refund-en"]
    assert set(en) >= {"id", "category", "status", "failed_conditions", "metrics", "judge", "trace"}
    assert en["category"] == "refund"
    assert en["metrics"]["context_recall"] == 1.0
    assert en["metrics"]["context_precision"] == 1.0
    assert en["metrics"]["faithfulness"] == 1.0
    assert en["metrics"]["cost_usd"] == 0.001
    assert en["judge"]["judge"] == "offline-lexical"
    trace = en["trace"]
    assert {k: trace[k] for k in ("answer", "refused", "confidence", "retrieved_ids", "cost_usd", "error")} == {
        "answer": REFUND_EN,
        "refused": False,
        "confidence": "high",
        "retrieved_ids": ["doc-refund-1"],
        "cost_usd": 0.001,
        "error": None,
    }
    assert 0 < trace["latency_ms"] < 3000
    zh = cases["refund-zh"]
    assert zh["category"] == "退款"
    assert zh["judge"]["faithfulness"] == 1.0  # both Chinese claims share bigrams with the passage
    assert [c["claim"] for c in zh["judge"]["claims"]] == ["七天内可以退款。", "需要提供订单号。"]
    refused = cases["oos-refused"]
    assert refused["trace"]["refused"] is True
    assert refused["judge"]["faithfulness"] is None
    err = cases["server-500"]["trace"]
    assert {k: err[k] for k in ("answer", "refused", "confidence", "retrieved_ids", "latency_ms", "cost_usd")} == {
        "answer": None,
        "refused": None,
        "confidence": None,
        "retrieved_ids": [],
        "latency_ms": None,
        "cost_usd": None,
    }
    assert err["error"] == f'endpoint error: HTTP 500 from POST {mixed.server.url} after 1 attempt: {{"detail":"boom"}}'


def test_report_names_the_offline_judge(mixed: MixedRun) -> None:
    info = mixed.report["judge_info"]
    assert (info["judge"], info["provider"], info["lexical"]) == ("offline-lexical", "offline", True)
    assert mixed.report["schema_version"] == 1


def test_stdout_summary(mixed: MixedRun) -> None:
    lines = mixed.outcome.out.splitlines()
    assert lines[:2] == [
        "ragjudge: FAIL: Blocked by pass_rate 0.417 < 0.9; rejection_accuracy 0.700 < 0.9. 6 more cases must pass.",
        "  5/12 cases passed, 5 failed, 2 errored (judge: offline-lexical)",
    ]
    assert "  [FAIL] pass_rate 0.417 < 0.9" in lines
    assert "  [FAIL] rejection_accuracy 0.700 < 0.9" in lines
    assert '  missing-detail fail: missing required detail: "order number"' in lines
    assert (
        f"  server-500 error: endpoint error: HTTP 500 from POST {mixed.server.url} after 1 attempt: "
        '{"detail":"boom"}' in lines
    )


def test_the_comment(mixed: MixedRun) -> None:
    comment = mixed.comment
    assert comment.splitlines()[0] == "## ❌ ragjudge: FAIL"
    assert comment.splitlines()[2] == (
        "**Blocked by pass\\_rate 0.417 &lt; 0.9; rejection\\_accuracy 0.700 &lt; 0.9. 6 more cases must pass.**"
    )
    assert "5 of 12 cases passed · 5 failed · 2 errored · judge: offline-lexical" in comment
    assert "<sub>Judge offline-lexical · compares words, not meaning: faithfulness counts shared words" in comment
    assert "| <code>rejection\\_accuracy</code> | 0.700 | &gt;= 0.9 | ❌ |" in comment
    assert "| <code>declined</code> | fail | declined a question the corpus covers |" in comment
    assert (
        f"| <code>server-500</code> | error | endpoint error: HTTP 500 from POST {mixed.server.url} after 1 attempt: "
        '{"detail":"boom"} |' in comment
    )
    assert comment.count("<details>") == comment.count("</details>") == 7


def test_the_token_was_sent(mixed: MixedRun) -> None:
    assert len(mixed.server.seen) == 12
    assert {s.headers.get("authorization") for s in mixed.server.seen} == {f"Bearer {TOKEN}"}
    assert {s.method for s in mixed.server.seen} == {"POST"}
    assert json.loads(mixed.server.seen[0].body) in [{"question": c["question"]} for c in MIXED_CASES]


def test_the_token_never_appears_in_any_output(mixed: MixedRun) -> None:
    for name, text in {
        "stdout": mixed.outcome.out,
        "stderr": mixed.outcome.err,
        "report": mixed.report_text,
        "comment": mixed.comment,
        "log": mixed.log_text,
    }.items():
        assert TOKEN not in text, name
    # The endpoint echoed it in an answer: the report shows it masked.
    assert by_id(mixed.report)["echo"]["trace"]["answer"] == "Your request carried ***."


def test_the_log_has_a_line_per_endpoint_call_and_per_judgement(mixed: MixedRun) -> None:
    lines = mixed.log_lines
    assert {line["type"] for line in lines} == {"endpoint", "judge"}
    for line in lines:
        assert isinstance(line["case_id"], str) and line["case_id"]
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", line["timestamp"])
    ids = [c["id"] for c in MIXED_CASES]
    finals = [line for line in lines if line["type"] == "endpoint" and line.get("final")]
    assert sorted(line["case_id"] for line in finals) == sorted(ids)
    attempts = [line for line in lines if line["type"] == "endpoint" and "attempt" in line]
    assert sorted(line["case_id"] for line in attempts) == sorted(ids)  # one attempt each (retries: 0)
    judged = sorted(line["case_id"] for line in lines if line["type"] == "judge")
    assert judged == sorted(set(ids) - {"server-500", "not-json"})  # no reply, nothing to judge
    final_500 = next(line for line in finals if line["case_id"] == "server-500")
    assert (final_500["ok"], final_500["error"]) == (
        False,
        f'endpoint error: HTTP 500 from POST {mixed.server.url} after 1 attempt: {{"detail":"boom"}}',
    )


def test_comment_command_renders_the_same_comment_from_the_saved_report(
    mixed: MixedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = run(capsys, "comment", "--report", "out/report.json")
    assert outcome.code == 0
    assert outcome.out == mixed.comment
    outcome = run(capsys, "comment", "--report", "out/report.json", "--comment-file", "again.md")
    assert outcome.code == 0
    assert (mixed.folder / "again.md").read_text(encoding="utf-8") == mixed.comment


# --- pass, overrides, templates -----------------------------------------------------------------

PASSING: dict[str, Any] = {
    "How long do refunds take?": answer(REFUND_EN, ["doc-refund-1"], {"doc-refund-1": REFUND_EN}),
    "Who won the match?": answer("Sorry, I don't know.", [], refused=True, confidence="none"),
}
PASSING_CASES: list[dict[str, Any]] = [
    {"id": "refund-en", "question": "How long do refunds take?", "golden_context_ids": ["doc-refund-1"]},
    {"id": "oos", "question": "Who won the match?", "category": "out_of_scope"},
]


def test_a_passing_run_exits_0(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RagServer(PASSING) as rag:
        write_config(ws, rag.url, PASSING_CASES)
        outcome = run(capsys, "run", "--report", "report.json", "--comment-file", "comment.md")
    assert outcome.code == 0
    assert outcome.out.splitlines()[:2] == [
        "ragjudge: PASS: 2 of 2 cases pass and every rule holds.",
        "  2/2 cases passed, 0 failed, 0 errored (judge: offline-lexical)",
    ]
    report = load(ws / "report.json")
    assert report["verdict"] == "pass"
    assert [r["passed"] for r in report["rules"]] == [True] * 5
    comment = (ws / "comment.md").read_text(encoding="utf-8")
    assert comment.splitlines()[0] == "## ✅ ragjudge: PASS"
    assert "\nEvery case passed.\n" in comment


def test_endpoint_and_cases_on_the_command_line_override_the_config(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = ws / "other.yaml"
    other.write_text(yaml.safe_dump(PASSING_CASES[:1]), encoding="utf-8")
    with RagServer(PASSING) as rag:
        write_config(ws, closed_port_url(), [{"id": "never", "question": "never asked"}])
        outcome = run(capsys, "run", "--endpoint", rag.url, "--cases", str(other), "--report", "r.json")
        assert [s.question for s in rag.seen] == ["How long do refunds take?"]
    assert outcome.code == 0
    assert [c["id"] for c in load(ws / "r.json")["cases"]] == ["refund-en"]


def test_a_tolerant_pass_rate_lets_a_failing_case_through(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies = dict(PASSING)
    replies["Is shipping free?"] = answer("No.", [], confidence="high")
    cases = [*PASSING_CASES, {"id": "f", "question": "Is shipping free?", "must_mention": ["10 yuan"]}]
    with RagServer(replies) as rag:
        write_config(ws, rag.url, cases, suite_rules={"pass_rate": ">= 0.6"})
        outcome = run(capsys, "run", "--report", "r.json")
    assert outcome.code == 0
    report = load(ws / "r.json")
    assert report["verdict"] == "pass"
    assert by_id(report)["f"]["failed_conditions"] == ['missing required detail: "10 yuan"']
    # The scope given replaces the defaults: only pass_rate is a suite rule now.
    assert [r["metric"] for r in report["rules"] if r["scope"] == "suite"] == ["pass_rate"]


def test_faithfulness_rule_reason_end_to_end(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passage = "Invoices are sent by email within one day."
    replies = {
        "Invoice?": answer("Invoices are sent by email. Shipping is always free.", ["inv-1"], {"inv-1": passage})
    }
    with RagServer(replies) as rag:
        write_config(
            ws,
            rag.url,
            [{"id": "inv", "question": "Invoice?"}],
            case_rules={"faithfulness": ">= 0.8"},
        )
        outcome = run(capsys, "run", "--report", "r.json")
    assert outcome.code == 1
    case = load(ws / "r.json")["cases"][0]
    assert case["failed_conditions"] == [
        'faithfulness 0.500 < 0.8 (1 of 2 claims unsupported: "Shipping is always free.")'
    ]
    assert case["metrics"]["faithfulness"] == 0.5


def test_latency_rule_end_to_end(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps(answer("Refunds take five days.", [])).encode()
    with RagServer({"slow?": Raw(200, body, delay_s=0.3)}) as rag:
        write_config(ws, rag.url, [{"id": "slow", "question": "slow?"}], case_rules={"latency_ms": "<= 100"})
        outcome = run(capsys, "run", "--report", "r.json")
    assert outcome.code == 1
    (reason,) = load(ws / "r.json")["cases"][0]["failed_conditions"]
    match = re.fullmatch(r"latency_ms (\d+) > 100", reason)
    assert match is not None, reason
    assert 300 <= int(match.group(1)) < 3000


def test_a_teams_own_template(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "team.md.j2").write_text(
        "Gate {{ report.verdict }}: {% for c in shown %}{{ c.id | inline }}={{ c.trace.answer | inline }};{% endfor %}",
        encoding="utf-8",
    )
    replies = {"q?": answer("{{ 7*7 }} @team", [], confidence="high")}
    with RagServer(replies) as rag:
        write_config(ws, rag.url, [{"id": "t1", "question": "q?", "must_mention": ["x"]}])
        outcome = run(capsys, "run", "--comment-file", "c.md", "--template", "team.md.j2")
    assert outcome.code == 1
    assert (ws / "c.md").read_text(encoding="utf-8") == "Gate fail: t1={{ 7\\*7 }} @\u200bteam;"


def test_a_hostile_endpoint_cannot_break_the_comment(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "@octocat <img src=x onerror=alert(1)> | `x` {{ 7*7 }} <!-- c --> </details> [link](http://x)"
    replies = {"q?": answer(hostile, ["doc|<b>@x</b>"], confidence="high")}
    cases = [{"id": "h|@x<img>", "question": "q?", "must_mention": ["nothing"]}]
    with RagServer(replies) as rag:
        write_config(ws, rag.url, cases)
        outcome = run(capsys, "run", "--comment-file", "c.md")
    assert outcome.code == 1
    comment = (ws / "c.md").read_text(encoding="utf-8")
    assert re.search(r"@\w", comment) is None
    assert "@\u200boctocat" in comment
    assert "<img" not in comment
    assert "<!--" not in comment
    assert "49" not in comment
    assert "{{ 7\\*7 }}" in comment
    assert comment.count("<details>") == comment.count("</details>") == 1
    row = next(line for line in comment.splitlines() if line.startswith("| <code>h"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 4


# --- could not evaluate: exit 3 -----------------------------------------------------------------


def test_an_unreachable_endpoint_exits_3_and_still_writes_the_outputs(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = closed_port_url()
    port = url.split(":")[2].split("/")[0]
    write_config(ws, url, PASSING_CASES)
    outcome = run(capsys, "run", "--report", "r.json", "--comment-file", "c.md", "--log", "l.jsonl")
    assert outcome.code == 3
    report = load(ws / "r.json")
    assert report["verdict"] == "error"
    assert report["suite"]["errored"] == 2
    assert report["suite"]["endpoint_error_rate"] == 1.0
    for case in report["cases"]:
        assert case["status"] == "error"
        (reason,) = case["failed_conditions"]
        assert reason.startswith("endpoint error: ")
        assert f"127.0.0.1:{port}" in reason
        assert reason.endswith(" after 1 attempt")
    dominated = f"the error that dominated (2 of 2): {reason}"
    assert outcome.out.splitlines()[0] == f"ragjudge: ERROR: All 2 cases errored: the verdict is error; {dominated}."
    assert outcome.out.splitlines()[1] == "  0/2 cases passed, 0 failed, 2 errored (judge: offline-lexical)"
    assert (ws / "c.md").read_text(encoding="utf-8").splitlines()[0] == "## ⚠️ ragjudge: ERROR"
    log = [json.loads(line) for line in (ws / "l.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {line["type"] for line in log} == {"endpoint"}
    assert TOKEN not in (ws / "l.jsonl").read_text(encoding="utf-8") + outcome.out + outcome.err


def test_every_case_erroring_in_different_ways_is_exit_3(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies: dict[str, Any] = {
        "a?": Raw(503, b"busy"),
        "b?": Raw(200, b"not json", "text/plain"),
        "c?": Raw(200, b'["a list"]'),
    }
    cases = [{"id": k[0], "question": k} for k in replies]
    with RagServer(replies) as rag:
        write_config(ws, rag.url, cases)
        outcome = run(capsys, "run", "--report", "r.json")
    assert outcome.code == 3
    report = load(ws / "r.json")
    assert {c["id"]: c["failed_conditions"] for c in report["cases"]} == {
        "a": [f"endpoint error: HTTP 503 from POST {rag.url} after 1 attempt: busy"],
        "b": ["endpoint error: reply is not valid JSON (text/plain, 8 bytes)"],
        "c": ["endpoint error: reply is a JSON list, not an object"],
    }


def test_one_reply_is_enough_to_not_be_exit_3(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies: dict[str, Any] = {"How long do refunds take?": PASSING["How long do refunds take?"], "x?": Raw(500, b"{}")}
    cases = [PASSING_CASES[0], {"id": "x", "question": "x?"}]
    with RagServer(replies) as rag:
        write_config(ws, rag.url, cases)
        outcome = run(capsys, "run", "--report", "r.json")
    assert outcome.code == 1  # the errored case fails pass_rate >= 1.0: an error is never a pass
    assert load(ws / "r.json")["verdict"] == "fail"


# --- bad input: exit 2, a message naming the thing to fix, nothing called -----------------------


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        ({"case": {"recall": ">= 1"}}, "gate.case.recall: unknown case metric 'recall'"),
        ({"suite": {"p999_latency_ms": "<= 1"}}, "gate.suite.p999_latency_ms: unknown suite metric"),
        ({"case": {"latency_ms": "below 10"}}, "gate.case.latency_ms: cannot parse rule 'below 10'"),
        ({"suite": {"pass_rate": "=> 0.9"}}, "gate.suite.pass_rate: cannot parse rule '=> 0.9'"),
    ],
)
def test_a_bad_rule_exits_2_naming_it(
    ws: Path, capsys: pytest.CaptureFixture[str], gate: dict[str, Any], message: str
) -> None:
    with RagServer(PASSING) as rag:
        write_config(ws, rag.url, PASSING_CASES, case_rules=gate.get("case"), suite_rules=gate.get("suite"))
        outcome = run(capsys, "run", "--report", "r.json")
        assert rag.seen == []
    assert outcome.code == 2
    assert outcome.err.splitlines()[0].startswith("ragjudge: error: ragjudge.yml: " + message)
    assert "Traceback" not in outcome.err
    assert not (ws / "r.json").exists()


def test_a_missing_case_file_exits_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(ws, closed_port_url(), PASSING_CASES)
    outcome = run(capsys, "run", "--cases", "nope.yaml")
    assert outcome.code == 2
    assert outcome.err.splitlines()[0] == "ragjudge: error: nope.yaml: file not found"


def test_a_bad_report_for_the_comment_command_exits_2(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run(capsys, "comment", "--report", "missing.json")
    assert outcome.code == 2
    assert outcome.err.splitlines()[0] == "ragjudge: error: missing.json: report file not found"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = run(capsys, "--version")
    assert outcome.code == 0
    assert outcome.out == "ragjudge 0.1.0\n"


def test_secrets_are_header_values_and_their_tokens_not_the_scheme_word(tmp_path: Path) -> None:
    config = parse_config(
        {"endpoint": {"headers": {"Authorization": f"Bearer {TOKEN}", "X-Short": "abc", "X-Key": "key-123456"}}},
        "ragjudge.yml",
        tmp_path,
    )
    assert config.endpoint.headers["X-Short"] == "abc"
    assert {f"Bearer {TOKEN}", TOKEN, "key-123456"} <= masking.secrets()
    assert "abc" not in masking.secrets()
    assert masking.mask(f"Bearer {TOKEN} key-123456 abc") == "*** *** abc"


def test_a_broken_template_is_exit_2_before_any_endpoint_call(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "broken.md.j2").write_text("{% for x in %}", encoding="utf-8")
    with RagServer({"q?": answer("fine", [])}) as rag:
        write_config(ws, rag.url, [{"id": "t1", "question": "q?"}])
        outcome = run(capsys, "run", "--comment-file", "c.md", "--template", "broken.md.j2")
        calls = len(rag.seen)
    assert outcome.code == 2
    assert outcome.err.startswith("ragjudge: error: broken.md.j2: invalid comment template: ")
    assert calls == 0
    assert not (ws / "c.md").exists()


def test_the_comment_template_is_compiled_while_the_endpoint_is_called(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragjudge.report import markdown
    from ragjudge.report.markdown import compiled

    (ws / "mine.md.j2").write_text("{{ report.verdict }}: {{ s.cases }} case(s)\n", encoding="utf-8")
    seen_at_render: list[int] = []
    render = markdown.render_comment

    def watched(*args: Any, **kwargs: Any) -> str:
        seen_at_render.append(compiled.cache_info().currsize)
        return render(*args, **kwargs)

    monkeypatch.setattr(markdown, "render_comment", watched)  # report.emit imports it when it renders
    compiled.cache_clear()
    with RagServer({"How long do refunds take?": answer(REFUND_EN, ["d1"], {"d1": REFUND_EN})}) as rag:
        write_config(ws, rag.url, [{"id": "c1", "question": "How long do refunds take?"}])
        outcome = run(capsys, "run", "--comment-file", "c.md", "--template", "mine.md.j2")
    assert outcome.code == 0, outcome.err
    assert (ws / "c.md").read_text(encoding="utf-8") == "pass: 1 case(s)\n"
    assert seen_at_render == [1]  # compiled before the comment was rendered
    assert compiled.cache_info().misses == 1


def test_a_case_file_is_read_with_yaml_1_2_texts(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # YAML 1.1 would read `expected: yes` as true and `category: on` as true, and the case would not load.
    with RagServer({"Is it free?": answer("yes", ["d1"], {"d1": "It is free."})}) as rag:
        write_config(ws, rag.url, [])
        (ws / "cases.yaml").write_text("- id: free\n  question: Is it free?\n  expected: yes\n  category: on\n")
        outcome = run(capsys, "run", "--report", "r.json")
    assert outcome.code in (0, 1), outcome.err
    (case,) = load(ws / "r.json")["cases"]
    assert (case["expected"], case["category"]) == ("yes", "on")
