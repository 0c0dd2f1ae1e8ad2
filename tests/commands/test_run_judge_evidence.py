"""The judge's evidence in `ragjudge run` (issue 27): what the judge is shown of a huge answer, and which
reference points it is held to. A loopback RAG service, and a loopback OpenAI-compatible judge spoken to by the
real `openai` SDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, by_kind, rubric_json, user_text

ENV_KEY = "RAGJUDGE_TEST_OPENAI_KEY"
PASSAGE = {"p1": "Refunds take 7 days. You need the order number."}


def _run(folder: Path, rag_url: str, judge_url: str, cases: list[dict[str, Any]], rules: dict[str, str]) -> Any:
    (folder / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    config = {
        "endpoint": {"url": rag_url, "timeout_s": 10},
        "cases": ["cases.yaml"],
        "judge": {"provider": "openai", "base_url": judge_url, "api_key": f"${{{ENV_KEY}}}", "max_retries": 0},
        "gate": {"case": rules},
    }
    (folder / "ragjudge.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    code = main(["run", "--config", str(folder / "ragjudge.yml"), "--report", str(folder / "r.json")])
    report = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    return code, report["cases"][0]


def test_a_4_5_mb_answer_reaches_the_judge_cut_and_the_report_records_the_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reproduces the probe: a 4.5 MB answer made one judge request of 4,507,002 bytes.
    monkeypatch.setenv(ENV_KEY, KEY)
    huge = "Refunds take 7 days. " + "x" * 4_500_000
    question = "How long do refunds take?"
    with FakeOpenAI(by_kind()) as judge, RagServer({question: answer(huge, ["p1"], PASSAGE)}) as rag:
        code, case = _run(tmp_path, rag.url, judge.base_url, [{"id": "huge", "question": question}], {})
        (request,) = judge.requests
    assert code == 0 and case["status"] == "pass" and case["judge"]["unscored"] == []
    assert int(request["headers"]["content-length"]) < 16_000
    assert (
        "</answer>\n(ragjudge cut this answer at 8000 of its 4500021 characters (judge.max_answer_chars): only the "
        "part above is shown. Judge that part, and do not count the cut against the assistant.)\n"
    ) in user_text(request["body"])
    assert case["judge"]["answer_cut"] == {"shown_chars": 8000, "answer_chars": 4_500_021}
    assert case["judge"]["notes"][0] == (
        "the judge saw the first 8000 of the answer's 4500021 characters (judge.max_answer_chars)"
    )


def test_a_text_reference_with_two_points_cannot_pass_on_the_one_point_a_judge_picks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reproduces the probe: the judge's single verbatim point "Refunds", covered, gave answer_correctness 1.0.
    monkeypatch.setenv(ENV_KEY, KEY)
    reply = {
        **json.loads(rubric_json()),
        "claims": [{"claim": "Refunds are possible.", "supported": True, "evidence_id": "p1", "reason": "p1"}],
        "reference_points": [{"point": "Refunds", "verdict": "covered", "quote": "Refunds", "reason": "refunds"}],
    }
    question = "How long do refunds take?"
    cases = [{"id": "refund", "question": question, "expected": "Refunds take 7 days. You need the order number."}]
    rag_replies = {question: answer("Refunds are possible.", ["p1"], PASSAGE)}
    with FakeOpenAI(lambda body, i: Reply(content=json.dumps(reply))) as judge, RagServer(rag_replies) as rag:
        code, case = _run(tmp_path, rag.url, judge.base_url, cases, {"answer_correctness": ">= 0.8"})
        prompts = [user_text(body) for body in judge.bodies]
    assert len(prompts) == 2  # the reply, and the one corrective retry
    assert (
        "## Reference answer (its points, one per line)\n- Refunds take 7 days\n- You need the order number\n"
        in (prompts[0])
    )
    invalid = (
        "judge reply invalid after 2 attempts: reference_points.0.point: 'Refunds' is not one of the reference's "
        "points as given"
    )
    assert code == 3 and case["status"] == "error"  # its only case errored: never a pass
    assert case["failed_conditions"] == [f"reference and answer_correctness unscored: {invalid}"]
    assert case["metrics"].get("answer_correctness") is None  # 1.0 before
    assert "reference_points" not in case["judge"]
