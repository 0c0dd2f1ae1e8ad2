"""`ragjudge run` when the judge fails inside ragjudge (an unexpected exception, a bug): never exit 0.

The case is `error` with the reason, the verdict is `error` (exit 3) whatever the rules and the error budget
say, and every output is still written; `merge` reads the same from the shards' reports, and a repeat that
passes later does not hide it. Before, the judgement was left unscored, no default rule read it, and the run
passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace
from ragjudge.judge.interface import Judgement, LogFn
from ragjudge.judge.offline import OfflineJudge
from tests.commands.test_run_end_to_end import by_id, load, run, write_config
from tests.fakes.rag import RagServer, answer

CASES = [
    {"id": f"c{i}", "question": f"Question {i}?", "golden_context_ids": ["d1"], "must_mention": ["7 days"]}
    for i in (1, 2, 3)
]
REPLIES = {c["question"]: answer("Refunds take 7 days.", ["d1"], {"d1": "Refunds take 7 days."}) for c in CASES}
# A tolerant gate: one case in three may fail or error and the run still passes.
TOLERANT = {"pass_rate": ">= 0.5", "rejection_accuracy": ">= 0.5"}
BUG = "judge failed inside ragjudge: KeyError: 'scores'"
REASON = (
    f"the judge failed inside ragjudge on 1 of 3 cases: the verdict is error; the first, case 'c1': {BUG} (a bug "
    "in ragjudge, not in the service: rerun with RAGJUDGE_DEBUG=1 for a traceback, and report it)"
)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_TOKEN", "tok-123456")
    return tmp_path


def _break_judge(monkeypatch: pytest.MonkeyPatch, times: int | None = None) -> None:
    """The offline judge, raising an unexpected KeyError on case c1 (only the first `times` times it is asked)."""
    judge = OfflineJudge.judge
    asked: list[str] = []

    def judge_or_raise(self: OfflineJudge, case: Case, trace: Trace, log: LogFn) -> Judgement:
        asked.append(case.id)
        if case.id == "c1" and (times is None or asked.count("c1") <= times):
            raise KeyError("scores")
        return judge(self, case, trace, log)

    monkeypatch.setattr(OfflineJudge, "judge", judge_or_raise)


def _write(ws: Path, url: str) -> None:
    write_config(ws, url, CASES, case_rules={"context_recall": ">= 1.0"}, suite_rules=TOLERANT)


def test_a_judge_that_raises_inside_ragjudge_is_exit_3_with_the_case_an_error(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _break_judge(monkeypatch)
    with RagServer(REPLIES) as rag:
        _write(ws, rag.url)
        outcome = run(capsys, "run", "--report", "report.json", "--junit", "junit.xml")
    assert outcome.code == 3, outcome.out + outcome.err
    report = load(ws / "report.json")
    assert (report["verdict"], report["error_reason"]) == ("error", REASON)
    assert report["warnings"][0] == REASON
    cases = by_id(report)
    assert {cid: (c["status"], c["failed_conditions"]) for cid, c in cases.items()} == {
        "c1": ("error", [BUG]),
        "c2": ("pass", []),
        "c3": ("pass", []),
    }
    assert cases["c1"]["judge"]["unscored"] == [
        {"judgement": "faithfulness", "reason": BUG},
        {"judgement": "rubric", "reason": BUG},
    ]
    assert f"c1 error: {BUG}" in outcome.out
    assert "judge failed inside ragjudge" in (ws / "junit.xml").read_text(encoding="utf-8")


def test_merge_reads_the_judge_bug_from_the_shards_and_is_exit_3(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _break_judge(monkeypatch)
    with RagServer(REPLIES) as rag:
        _write(ws, rag.url)
        shards = [run(capsys, "run", "--shard", f"{i}/2", "--report", f"s{i}.json") for i in (1, 2)]
    assert [s.code for s in shards] == [0, 0]  # a shard does not gate: merge does
    merged = run(capsys, "merge", "s1.json", "s2.json", "--report", "merged.json")
    assert merged.code == 3, merged.out + merged.err
    report: dict[str, Any] = load(ws / "merged.json")
    assert (report["verdict"], report["error_reason"]) == ("error", REASON)


def test_a_judge_bug_on_the_first_run_is_not_hidden_by_a_repeat_that_passes(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _break_judge(monkeypatch, times=1)
    with RagServer(REPLIES) as rag:
        _write(ws, rag.url)
        outcome = run(capsys, "run", "--repeat", "2/1", "--report", "report.json")
    report = load(ws / "report.json")
    c1 = by_id(report)["c1"]
    assert (c1["status"], c1["flaky"], [r["status"] for r in c1["runs"]]) == ("pass", True, ["error", "pass"])
    assert outcome.code == 3, outcome.out + outcome.err
    assert (report["verdict"], report["error_reason"]) == ("error", REASON)
