"""The event log's rejudge line (pinned, issue 40): each judgement past the first of a rejudged case is logged
before it is asked, numbered among all of them; a case that passed first is never rejudged, so never logged."""

from __future__ import annotations

import json
from pathlib import Path

from tests.commands.test_run_rejudge import FlippingJudge, _key, _run, rag  # noqa: F401  (fixtures)
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.rag import RagServer


def test_each_rejudge_is_a_line_of_the_log(tmp_path: Path, rag: RagServer) -> None:  # noqa: F811
    with FakeOpenAI(FlippingJudge().responder) as judge:
        _run(tmp_path, rag, judge, "--log", str(tmp_path / "log.jsonl"), rejudge=2)
    events = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = sorted(
        ({k: v for k, v in e.items() if k != "timestamp"} for e in events if e["type"] == "rejudge"),
        key=lambda e: (e["case_id"], e["judgement"]),
    )
    assert lines == [
        {"type": "rejudge", "case_id": "flip", "judgement": 2, "of": 3, "sample": 1001},
        {"type": "rejudge", "case_id": "flip", "judgement": 3, "of": 3, "sample": 1002},
        {"type": "rejudge", "case_id": "majority", "judgement": 2, "of": 3, "sample": 1001},
        {"type": "rejudge", "case_id": "majority", "judgement": 3, "of": 3, "sample": 1002},
    ]
