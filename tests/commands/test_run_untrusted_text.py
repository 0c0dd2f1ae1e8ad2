"""`ragjudge run` end to end when an endpoint reply (or a recorded trace) carries a lone surrogate or a control
character: the case is evaluated with U+FFFD in its place, the healthy cases are in the report, every output
is written, and the exit code follows the verdict."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.fakes.rag import RagServer, Raw, answer

R = "\ufffd"
CASES = [
    {"id": "odd", "question": "How long do refunds take?", "must_mention": ["5 days"]},
    {"id": "fine-1", "question": "Who pays shipping?", "must_mention": ["we pay"]},
    {"id": "fine-2", "question": "Can I change my address?", "must_mention": ["yes"]},
]
ODD = (
    b'{"answer": "Refunds take 5 days \\ud800\\u0000\\u001b[2J", "retrieved": [{"id": "d\\udfff", "text": "x\\ud800"}]}'
)
OUTPUTS = ("--report", "r.json", "--comment-file", "c.md", "--html", "r.html", "--junit", "j.xml", "--log", "l.jsonl")
_RAW_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def _replies(odd: Raw | None = None, fail_shipping: bool = False) -> dict[str, object]:
    return {
        CASES[0]["question"]: odd or Raw(200, ODD),
        CASES[1]["question"]: answer("Ask support." if fail_shipping else "Yes, we pay.", ["d1"], {"d1": "We pay."}),
        CASES[2]["question"]: answer("Yes.", ["d2"], {"d2": "Yes."}),
    }


def _check_outputs(ws: Path) -> dict[str, object]:
    for name in ("r.json", "c.md", "r.html", "j.xml", "l.jsonl"):
        text = (ws / name).read_bytes().decode("utf-8")
        assert not _RAW_UNSAFE.search(text), name
    ET.fromstring((ws / "j.xml").read_text(encoding="utf-8"))
    for line in (ws / "l.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(line)
    return load(ws / "r.json")


@pytest.mark.parametrize(("fail_shipping", "code", "verdict"), [(False, 0, "pass"), (True, 1, "fail")])
def test_a_reply_with_a_lone_surrogate_costs_nothing_but_a_replacement_character(
    ws: Path, capsys: pytest.CaptureFixture[str], fail_shipping: bool, code: int, verdict: str
) -> None:
    with RagServer(_replies(fail_shipping=fail_shipping)) as rag:
        write_config(ws, rag.url, CASES, case_rules={}, suite_rules={"pass_rate": ">= 1.0"})
        outcome = run(capsys, "run", *OUTPUTS)
    assert (outcome.code, outcome.err) == (code, "")
    report = _check_outputs(ws)
    assert report["verdict"] == verdict
    cases = by_id(report)
    assert list(cases) == ["odd", "fine-1", "fine-2"]
    odd = cases["odd"]
    assert odd["status"] == "pass"
    assert odd["trace"]["answer"] == f"Refunds take 5 days {R}{R}{R}[2J"
    assert odd["trace"]["retrieved_ids"] == [f"d{R}"]
    assert cases["fine-2"]["status"] == "pass"
    assert cases["fine-1"]["status"] == ("fail" if fail_shipping else "pass")


def test_a_streamed_reply_with_a_lone_surrogate_is_evaluated(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = b'data: {"answer": "Refunds take 5 days"}\n\ndata: {"answer": "Refunds take 5 days \\ud800"}\n\n'
    odd = Raw(200, stream, content_type="text/event-stream")
    with RagServer(_replies(odd)) as rag:
        write_config(ws, rag.url, CASES, case_rules={}, suite_rules={"pass_rate": ">= 1.0"})
        outcome = run(capsys, "run", *OUTPUTS)
    assert (outcome.code, outcome.err) == (0, "")
    report = _check_outputs(ws)
    assert by_id(report)["odd"]["trace"]["answer"] == f"Refunds take 5 days {R}"


def test_recorded_traces_with_lone_surrogates_are_judged_and_written(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = ws / "traces.jsonl"
    lines = [
        '{"id": "t\\ud800", "question": "q\\u0007?", "answer": "a \\udfff", "must_mention": ["a"], "latency_ms": 5}',
        '{"id": "t2", "question": "q2", "answer": "fine", "must_mention": ["fine"], "latency_ms": 5}',
    ]
    traces.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_config(ws, "http://127.0.0.1:9/ask", CASES, case_rules={}, suite_rules={"pass_rate": ">= 1.0"})
    outcome = run(capsys, "run", "--traces", str(traces), *OUTPUTS)
    assert (outcome.code, outcome.err) == (0, "")
    report = _check_outputs(ws)
    assert [(c["id"], c["question"], c["trace"]["answer"]) for c in report["cases"]] == [  # type: ignore[index]
        (f"t{R}", f"q{R}?", f"a {R}"),
        ("t2", "q2", "fine"),
    ]


def test_a_judge_reply_with_lone_surrogates_is_judged_and_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.commands.test_run_openai import ENV_KEY
    from tests.commands.test_run_openai import write_config as write_openai_config
    from tests.fakes.openai_server import FakeOpenAI, Reply
    from tests.judge.openai_helpers import KEY, PASSAGES, by_kind, claim, claims_json, rubric_json

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_KEY, KEY)
    rubric = Reply(content=rubric_json(reasons={"grounding": "fee \ud800 in no passage\x00"}))
    claims = Reply(content=claims_json(claim("Refunds take 5 working days.", True, "p1", "p1 says \udfff so")))
    question = "How long do refunds take?"
    with (
        FakeOpenAI(by_kind(rubric=rubric, faithfulness=claims)) as judge,
        RagServer({question: answer("Refunds take 5 working days.", ["p1"], PASSAGES)}) as rag,
    ):
        config = write_openai_config(
            tmp_path, rag.url, judge.base_url, cases=[{"id": "c1", "question": question}], case={}, suite={}
        )
        code = main_run(config, *OUTPUTS)
    assert (code, capsys.readouterr().err) == (0, "")
    report = _check_outputs(tmp_path)
    (case,) = report["cases"]  # type: ignore[index]
    assert case["judge"]["reasoning"]["grounding"] == f"fee {R} in no passage{R}"
    assert case["judge"]["claims"][0]["reason"] == f"p1 says {R} so"


def main_run(config: Path, *args: str) -> int:
    from ragjudge.cli import main

    return main(["run", "--config", str(config), *args])


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
def test_del_c1_and_uffff_in_a_reply_never_reach_the_judge_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], streamed: bool
) -> None:
    import yaml

    from tests.commands.test_run_openai import ENV_KEY
    from tests.commands.test_run_openai import write_config as write_openai_config
    from tests.fakes.openai_server import FakeOpenAI
    from tests.judge.openai_helpers import KEY, PASSAGES, by_kind, user_text

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_KEY, KEY)
    said = "Refunds take 5 working days \x7f\x85\x9b[2J\uffff end."
    question = "How long do refunds take?"
    if streamed:
        chunks = [{"choices": [{"index": 0, "delta": {"content": part}}]} for part in (said[:29], said[29:])]
        body = b"".join(b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n" for c in chunks)
        reply: object = Raw(200, body + b"data: [DONE]\n\n", content_type="text/event-stream")
    else:
        reply = answer(said, ["p1"], PASSAGES)
    with FakeOpenAI(by_kind()) as judge, RagServer({question: reply}) as rag:
        config = write_openai_config(
            tmp_path, rag.url, judge.base_url, cases=[{"id": "c1", "question": question}], case={}, suite={}
        )
        if streamed:
            data = yaml.safe_load(config.read_text(encoding="utf-8"))
            data["endpoint"]["response"] = {"answer_delta": "choices.0.delta.content"}
            config.write_text(yaml.safe_dump(data), encoding="utf-8")
        code = main_run(config, "--report", "r.json")
        prompts = [user_text(body) for body in judge.bodies]
    assert (code, capsys.readouterr().err) == (0, "")
    assert prompts and all(f"Refunds take 5 working days {R}{R}{R}[2J{R} end." in p for p in prompts)
    assert not any(_RAW_UNSAFE.search(p) or "\uffff" in p for p in prompts)
