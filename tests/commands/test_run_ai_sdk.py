"""`ragjudge probe` and `ragjudge run` against a real Vercel AI SDK route (`ai` 7, `streamText` over our loopback
model, `createUIMessageStreamResponse` with a source part per retrieved document), wired as a new user would:
probe the fresh route, take its first suggestion, run.

The model healthy, failing (HTTP 500: the SDK reports it inside an HTTP 200), cut mid-stream, and reasoning: no
failure reads as an answer or a decline.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.ai_sdk_server import LlmMode, RunningAiSdk

CASES: list[dict[str, Any]] = [
    {
        "id": "refund-en",
        "question": "How long do refunds take?",
        "golden_context_ids": ["refund-policy"],
        "must_mention": ["14 days"],
    },
    {"id": "refund-card", "question": "Is the card credited for refunds?", "golden_context_ids": ["refund-policy"]},
    {"id": "refund-issued", "question": "When are refunds issued?", "golden_context_ids": ["refund-policy"]},
    {
        "id": "standard",
        "question": "How long does standard shipping take?",
        "golden_context_ids": ["shipping-times"],
        "must_mention": ["3 to 5 business days"],
    },
    {"id": "express", "question": "How fast is express shipping?", "golden_context_ids": ["shipping-times"]},
    {
        "id": "warranty",
        "question": "How long is the warranty?",
        "golden_context_ids": ["warranty"],
        "must_mention": ["two-year"],
    },
    {"id": "damage", "question": "Does the warranty cover accidental damage?", "golden_context_ids": ["warranty"]},
    {"id": "refund-zh", "question": "退款需要多久？", "golden_context_ids": ["退款政策"], "must_mention": ["14天"]},
    {"id": "refund-zh-card", "question": "退款退回哪里？", "golden_context_ids": ["退款政策"]},
    {"id": "penguins", "question": "Can penguins fly?", "category": "out-of-scope"},
    {"id": "mars-zh", "question": "火星的首都是哪里？", "category": "超纲"},
    # An answer key written against last year's policy: the service's 14 days contradicts it.
    {
        "id": "archived-refund",
        "question": "How long do refunds take?",
        "golden_context_ids": ["refund-policy"],
        "expected": ["Refunds are issued within 7 days of the return being received."],
    },
    {
        "id": "refund-chat",
        "turns": [
            {"question": "How long do refunds take?", "golden_context_ids": ["refund-policy"]},
            {"question": "Is the card credited?", "golden_context_ids": ["refund-policy"]},
        ],
    },
    {
        "id": "warranty-chat",
        "turns": [
            {"question": "How long is the warranty?", "golden_context_ids": ["warranty"]},
            {"question": "Does it cover accidental damage?", "golden_context_ids": ["warranty"]},
        ],
    },
]
IN_SCOPE = [c["id"] for c in CASES if c.get("category") is None]
OUT_OF_SCOPE = ["penguins", "mars-zh"]
CASE_RULES = {"context_recall": ">= 1.0", "reference_contradictions": "<= 0"}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ai_sdk: RunningAiSdk) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(CASES, allow_unicode=True), encoding="utf-8")
    _configure(tmp_path, {"url": ai_sdk.chat_url, "preset": "ai-sdk"})
    return tmp_path


def _configure(ws: Path, endpoint: dict[str, Any]) -> None:
    config = {
        "endpoint": {"retries": 0, "idle_timeout_s": 10, **endpoint},
        "cases": ["cases.yaml"],
        "gate": {"case": CASE_RULES},
    }
    (ws / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _run(capsys: pytest.CaptureFixture[str], ws: Path) -> tuple[int, dict[str, Any], str]:
    code, out, err = _main(capsys, "run", "--report", "report.json", "--comment-file", "comment.md")
    return code, json.loads((ws / "report.json").read_text(encoding="utf-8")), out + err


def _cases(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report["cases"]}


def test_probe_s_first_suggestion_on_the_fresh_route_is_the_ai_sdk_preset(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    _configure(ws, {"url": ai_sdk.chat_url})  # what a new user writes first: the URL alone
    code, out, _ = _main(capsys, "probe", "--question", "How long do refunds take?")
    hints = [line for line in out.splitlines() if line.startswith("  hint: ")]
    assert hints[0] == (
        "  hint: /api/chat looks like an AI SDK chat route: set `preset: ai-sdk` under endpoint: (it sends the body "
        "that API takes and reads its stream)"
    )
    assert code == 1


DATA_PART = {
    "extends": "ai-sdk",
    "passages": {
        "where": {"type": "data-sources"},
        "path": "data.documents",
        "id": "id",
        "text": "text",
        "title": "title",
    },
}
"""The route's `data-sources` part, named as the passages: ids and their text (source parts carry no text)."""


def test_probe_with_the_preset_says_the_source_parts_carry_no_text(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _main(capsys, "probe", "--case", "refund-en")
    # start, 2 source parts, the data part, start-step, text-start, 12 text-deltas, text-end, finish-step, finish
    assert re.search(r"\nstream: 21 events, read by protocol ai-sdk\n  time to the first token: \d+ ms\n", out)
    assert "  finish reason: stop" in out
    assert '  answer: "Refunds are issued within 14 days of the return being received. [refund-policy]"' in out
    assert '    [1] id refund-policy · title Refund policy · text ""' in out
    assert (
        "  warning: passages carried no text under text, excerpt, content, page_content in any of the 1 replies with "
        "passages: passages have no text, so faithfulness has no evidence to check claims against; the ai-sdk "
        "stream's passage events carry none: send the passages' text in an event of your own and name it under "
        "endpoint.protocol.passages (docs/streams.md: Stream protocols)"
    ) in out.splitlines()
    assert code == 1


def test_probe_with_the_data_part_named_maps_cleanly(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    _configure(ws, {"url": ai_sdk.chat_url, "preset": "ai-sdk", "protocol": DATA_PART})
    code, out, _ = _main(capsys, "probe", "--case", "refund-en")
    assert (
        '    [1] id refund-policy · title Refund policy · text "Refunds are issued within 14 days of the return' in out
    )
    assert out.splitlines()[-1] == "result: the reply maps cleanly"
    assert code == 0


def test_a_healthy_route_passes_13_of_14_and_the_archived_answer_key_fails_on_its_point(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    code, report, out = _run(capsys, ws)
    cases = _cases(report)
    failing = {cid: c["failed_conditions"] for cid, c in cases.items() if c["status"] != "pass"}
    assert list(failing) == ["archived-refund"], out
    assert failing["archived-refund"] == [
        'contradicts the reference: "Refunds are issued within 7 days of the return being received." (answer: '
        '"Refunds are issued within 14 days of the return being received")',
        "reference_contradictions 1 > 0",
    ]
    assert code == 0  # 13 of 14 is over the default pass_rate 0.9
    assert cases["refund-en"]["metrics"]["context_recall"] == 1.0  # from the stream's source parts
    assert cases["refund-en"]["trace"]["retrieved_ids"][0] == "refund-policy"
    for case in cases.values():
        for trace in [t["trace"] for t in case.get("turns") or [case]]:
            assert trace["protocol"] == "ai-sdk" and trace["finish_reason"] == "stop", case["id"]
            if case["id"] not in OUT_OF_SCOPE:
                assert isinstance(trace["ttft_ms"], float), case["id"]
    assert cases["penguins"]["trace"]["refused"] is True
    # Turn 2 of a conversation reached the model with turn 1's answer before it.
    warranty_turn_2 = [r["body"] for r in ai_sdk.openai.requests if "accidental damage?" in json.dumps(r["body"])]
    roles = [m["role"] for m in warranty_turn_2[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert report["warnings"] == [w for w in report["warnings"] if "protocol is not declared" not in w]


def test_with_its_model_failing_every_case_is_an_error_and_none_passes(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    ai_sdk.use(LlmMode.FAILING)
    code, report, _ = _run(capsys, ws)
    cases = _cases(report)
    assert {c["status"] for c in cases.values()} == {"error"}
    reason = "endpoint error: the stream sent an error part: An error occurred."
    assert cases["penguins"]["failed_conditions"] == [reason]  # out of scope: never a decline
    assert cases["refund-en"]["failed_conditions"] == [reason]
    assert cases["refund-chat"]["turns"][0]["failed_conditions"] == [reason]
    assert report["suite"]["rejection_accuracy"] is None or report["suite"]["rejection_accuracy"] != 1.0
    assert (code, report["verdict"]) == (3, "error")


def test_probe_does_not_call_a_failing_route_clean(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    ai_sdk.use(LlmMode.FAILING)
    code, out, _ = _main(capsys, "probe", "--case", "penguins")
    assert out.splitlines()[-1] == "result: endpoint error: the stream sent an error part: An error occurred."
    assert "maps cleanly" not in out and code == 1


def test_a_stream_cut_mid_answer_is_an_error_not_its_partial_text(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    ai_sdk.use(LlmMode.CUT)
    code, report, _ = _run(capsys, ws)
    cases = _cases(report)
    # The SDK reports the broken model stream as an error part, then finishReason "error".
    assert cases["refund-en"]["failed_conditions"] == [
        "endpoint error: the stream sent an error part: An error occurred."
    ]
    assert cases["refund-en"]["trace"]["answer"] is None
    assert not [cid for cid in IN_SCOPE if cases[cid]["status"] == "pass"]
    assert code == 3


def test_a_reasoning_model_s_answer_is_its_text_only_and_the_cases_pass(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    ai_sdk.use(LlmMode.REASONING)
    code, report, out = _run(capsys, ws)
    cases = _cases(report)
    assert [cid for cid, c in cases.items() if c["status"] != "pass"] == ["archived-refund"], out
    trace = cases["refund-en"]["trace"]
    assert trace["answer"] == "Refunds are issued within 14 days of the return being received. [refund-policy]"
    assert trace["reasoning"] == "The question is about the first document listed. Its first sentence answers it."
    assert code == 0


def test_the_route_read_without_its_protocol_is_warned_about_and_its_failure_still_errs(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk
) -> None:
    body = '{"messages": {{ ui_messages | tojson }}}'
    _configure(ws, {"url": ai_sdk.chat_url, "body": body, "response": {"answer_delta": "delta"}})
    _code, report, _ = _run(capsys, ws)
    (warning,) = [w for w in report["warnings"] if "protocol is not declared" in w]
    assert warning.startswith(
        "endpoint.protocol is not declared and 16 of 16 streamed replies look like the AI SDK's UI message stream"
    )
    assert warning.endswith("set endpoint.preset: ai-sdk (or endpoint.protocol: ai-sdk to keep your body)")
    ai_sdk.use(LlmMode.FAILING)
    code, report, _ = _run(capsys, ws)
    assert _cases(report)["penguins"]["failed_conditions"] == [
        "endpoint error: the stream sent an error part: An error occurred."
    ]
    assert code == 3


class _FlippingJudge:
    """A model judge that fails each question's first rubric judgement (a flip) and passes it after."""

    def __init__(self) -> None:
        import threading

        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()
        self.calls = 0

    def __call__(self, body: dict[str, Any], call_index: int) -> Any:
        from tests.fakes.openai_server import Reply
        from tests.judge.openai_helpers import claims_json, merged, rubric_json, user_text

        text = user_text(body)
        with self.lock:
            self.calls += 1
            k = self.seen.get(text, 0)
            self.seen[text] = k + 1
        rubric = Reply(content=rubric_json({"grounding": 2 if k == 0 else 4}, default=4))
        return merged(lambda _b, _i: rubric, lambda _b, _i: Reply(content=claims_json()))(body, call_index)


def test_a_noisy_model_judge_with_rejudge_blocks_nothing_and_an_outage_is_still_an_error(
    ws: Path, capsys: pytest.CaptureFixture[str], ai_sdk: RunningAiSdk, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real route, judged by a model judge that flips every first judgement: main's run, then a PR with the
    # same route (its answers unchanged), then a PR whose model fails. `judge.rejudge: 8`, as docs/judges.md says.
    from tests.fakes.openai_server import FakeOpenAI

    monkeypatch.setenv("JUDGE_KEY", "sk-judge-loopback-0000")
    flipping = _FlippingJudge()
    with FakeOpenAI(flipping) as judge:
        config = yaml.safe_load((ws / "ragjudge.yml").read_text(encoding="utf-8"))
        config["judge"] = {
            "provider": "openai",
            "model": "gpt-4o-mini",
            "base_url": judge.base_url,
            "api_key": "${JUDGE_KEY}",
            "rejudge": 8,
            "cache": "judge-cache",
            "reference": False,  # this judge gives no reference points: the archived answer key is not asked
        }
        config["gate"] = {
            "case": {"context_recall": ">= 1.0", "judge.grounding": ">= 3"},
            "suite": {"pass_rate": ">= 0.9"},
        }
        (ws / "ragjudge.yml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        code, main_report, out = _run(capsys, ws)
        assert code == 0, out
        # Every flip was asked again and outvoted: nothing fails on the judge's noise.
        assert {c["status"] for c in main_report["cases"]} == {"pass"}
        (ws / "main.json").write_text(json.dumps(main_report), encoding="utf-8")
        before = flipping.calls
        code, pr, out = _main(capsys, "run", "--baseline", "main.json", "--report", "pr.json")
        pr = json.loads((ws / "pr.json").read_text(encoding="utf-8"))
        assert (code, pr["comparison"]["counts"]["regression"]) == (0, 0), out
        assert {c.get("change") for c in pr["cases"]} == {"still_passing"}
        # The unchanged replies took main's votes: no rejudge, and cache hits for the first judgements.
        assert flipping.calls == before
        ai_sdk.use(LlmMode.FAILING)
        code, down, out = _main(capsys, "run", "--baseline", "main.json", "--report", "down.json")
        down = json.loads((ws / "down.json").read_text(encoding="utf-8"))
    assert (code, down["verdict"]) == (3, "error"), out
    assert {c["status"] for c in down["cases"]} == {"error"}
    assert down["comparison"]["counts"]["regression"] == 0
    assert {c.get("change") for c in down["cases"]} == {"not_comparable"}
