"""The report as documented in `ragjudge.report.model`: the offline judge's `judge_info` has every key, a case the
judge never saw has a full `judge` block saying so, and passage text the run let go is left out, not `""`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.report.reading import load_report
from ragjudge.report.writing import write_report
from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.fakes.rag import RagServer, Raw, answer

CASES = [
    {"id": "ok", "question": "How long do refunds take?", "golden_context_ids": ["d1"]},
    {"id": "ids-only", "question": "Who pays shipping?"},
    {"id": "down", "question": "Is this broken?"},
]
REPLIES = {
    CASES[0]["question"]: answer("Refunds take 5 days.", ["d1"], {"d1": "Refunds take 5 days."}),
    CASES[1]["question"]: {"answer": "We pay.", "retrievedIds": ["d2"]},
    CASES[2]["question"]: Raw(503, b"busy"),
}


@pytest.fixture
def report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    with RagServer(REPLIES) as rag:
        write_config(tmp_path, rag.url, CASES, case_rules={}, suite_rules={"pass_rate": ">= 0.1"})
        assert run(capsys, "run", "--report", "r.json").code == 0
    return load(tmp_path / "r.json")


def test_the_offline_judge_info_has_every_documented_key(report: dict) -> None:  # type: ignore[type-arg]
    assert report["judge_info"] == {
        "judge": "offline-lexical",
        "provider": "offline",
        "lexical": True,
        "model": None,
        "base_url_host": None,
        "combined": False,
    }


def test_a_case_with_no_reply_has_a_full_judge_block_saying_it_was_not_judged(report: dict) -> None:  # type: ignore[type-arg]
    down = by_id(report)["down"]
    assert down["status"] == "error"
    assert down["judge"] == {
        "judge": "offline-lexical",
        "judged": False,
        "faithfulness": None,
        "claims": [],
        "scores": {},
        "reasoning": {},
        "unassessable": [],
        "unscored": [],
        "notes": ["not judged: no usable reply"],
        "tokens": 0,
        "cost_usd": 0.0,
        "calls": 0,
        "cache_hits": 0,
        "escalated": [],
        "spread": {},
    }
    assert report["suite"]["judge_error_rate"] == 0.0  # a case not judged is not a judge error


def test_passage_text_let_go_is_left_out_not_written_as_empty(
    report: dict,  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    cases = by_id(report)
    assert cases["ok"]["trace"]["passages"] == [{"id": "d1"}]
    assert cases["ids-only"]["trace"]["passages"] == [{"id": "d2"}]
    # Kept (a report built with the text, as `--bias-check` keeps it), title and text are there:
    # tests/report/test_model.py::test_passages_are_kept_trimmed.
    # Read back and written again (as `comment` and `merge` do), the blocks stay as they were.
    again = tmp_path / "again.json"
    write_report(load_report(tmp_path / "r.json"), again)
    assert [c["trace"]["passages"] for c in load(again)["cases"]] == [
        [{"id": "d1"}],
        [{"id": "d2"}],
        [],
    ]
