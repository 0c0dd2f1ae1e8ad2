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
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, by_kind, user_text

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
