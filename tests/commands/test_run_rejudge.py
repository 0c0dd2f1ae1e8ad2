"""`judge.rejudge`: the same reply judged again, through the real `openai` SDK against a loopback judge that
flips its verdict; the endpoint is asked once per case, the case takes the majority, a split is counted."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragjudge.cli import main
from tests.commands.test_run_openai import (
    ENV_KEY,
    Q_GOOD,
    Q_GROUND,
    RAG_REPLIES,
    claims_responder,
    write_config,
)
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer
from tests.judge.openai_helpers import KEY, kind_of, merged, rubric_json, user_text

Q_MAJORITY = "Can I return a gift card?"
A_MAJORITY = "Refunds take 5 working days."  # judged like A_GOOD's claims
CASES = [
    {"id": "good", "question": Q_GOOD, "category": "refund"},
    {"id": "flip", "question": Q_GROUND, "category": "refund"},
    {"id": "majority", "question": Q_MAJORITY, "category": "refund"},
]
GROUNDING = {
    # The judge flips `flip` on every third call (fails, fails, passes) and `majority` on all but its first.
    Q_GROUND: lambda k: 4 if k % 3 == 2 else 2,
    Q_MAJORITY: lambda k: 2 if k == 0 else 4,
}


class FlippingJudge:
    """A rubric that gives each question's k-th call the grounding `GROUNDING[question](k)`."""

    def __init__(self, grounding: dict[str, Any] | None = None) -> None:
        self.grounding = GROUNDING if grounding is None else grounding
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def rubric(self, body: dict[str, Any], call_index: int) -> Reply:
        text = user_text(body)
        for question, score_of in self.grounding.items():
            if f"## Question\n{question}\n" in text:
                with self.lock:
                    k = self.calls[question]
                    self.calls[question] += 1
                return Reply(content=rubric_json({"grounding": score_of(k)}, {"grounding": f"call {k}"}))
        return Reply(content=rubric_json())

    def responder(self, body: dict[str, Any], call_index: int) -> Reply:
        if kind_of(body) == "combined":
            return merged(self.rubric, claims_responder)(body, call_index)
        return self.rubric(body, call_index) if kind_of(body) != "faithfulness" else claims_responder(body, call_index)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


@pytest.fixture
def rag() -> Iterator[RagServer]:
    replies = {**RAG_REPLIES, Q_MAJORITY: RAG_REPLIES[Q_GOOD]}
    with RagServer(replies) as server:
        yield server


def _run(tmp_path: Path, rag: RagServer, judge: FakeOpenAI, *extra: str, rejudge: int) -> dict[str, Any]:
    config = write_config(tmp_path, rag.url, judge.base_url, judge={"rejudge": rejudge, "cache": None}, cases=CASES)
    main(["run", "--config", str(config), "--report", str(tmp_path / "r.json"), *extra])
    report: dict[str, Any] = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    return report


def test_a_flipping_judge_is_outvoted_and_counted(tmp_path: Path, rag: RagServer) -> None:
    flipping = FlippingJudge()
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(tmp_path, rag, judge, rejudge=2)
        calls = judge.call_count
    cases = {c["id"]: c for c in report["cases"]}
    # The endpoint was asked once per case: a rejudge judges the reply it already has.
    assert Counter(s.question for s in rag.seen) == {Q_GOOD: 1, Q_GROUND: 1, Q_MAJORITY: 1}
    # `flip`: fail, fail, pass: the majority fails it, and the judgements split.
    assert cases["flip"]["status"] == "fail"
    assert cases["flip"]["judge_runs"] == {
        "runs": 3,
        "agreeing": 2,
        "flipped": ["judge.grounding < 3"],
        "passed_on_rejudge": False,
        "main_vote": False,
    }
    assert cases["flip"]["judge_split"] is True
    # `majority`: fail, pass, pass: the rejudge passed it, and says so.
    assert cases["majority"]["status"] == "pass"
    assert cases["majority"]["judge_runs"]["passed_on_rejudge"] is True
    assert cases["majority"]["failed_conditions"] == []
    assert cases["good"]["judge_runs"] is None  # it passed: never rejudged
    # Both rejudged cases split: the flip rate is 2 of 2, with its Wilson interval.
    assert report["suite"]["judge_flip_rate"] == 1.0
    assert report["suite"]["rejudged_cases"] == 2
    assert report["suite"]["judge_flip_rate_interval"] == [0.3424, 1.0]
    assert report["judge_trust"]["judge_flip_rate"] == 1.0
    # Every judge call is counted: one combined call per case, two more per rejudged case.
    assert calls == 3 + 2 * 2 and report["suite"]["judge_calls"] == calls
    assert flipping.calls == {Q_GROUND: 3, Q_MAJORITY: 3}


def test_without_rejudge_nothing_more_is_asked(tmp_path: Path, rag: RagServer) -> None:
    flipping = FlippingJudge()
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(tmp_path, rag, judge, rejudge=0)
        assert judge.call_count == 3
    assert all(c["judge_runs"] is None and c["judge_split"] is False for c in report["cases"])
    assert "judge_flip_rate" not in report["suite"]


def test_a_split_that_passed_on_main_is_not_a_regression(tmp_path: Path, rag: RagServer) -> None:
    (tmp_path / "main").mkdir()
    with FakeOpenAI(lambda body, i: merged(lambda b, k: Reply(content=rubric_json()), claims_responder)(body, i)) as ok:
        _run(tmp_path / "main", rag, ok, rejudge=0)
    flipping = FlippingJudge()
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(
            tmp_path,
            rag,
            judge,
            "--baseline",
            str(tmp_path / "main" / "r.json"),
            "--comment-file",
            str(tmp_path / "c.md"),
            rejudge=2,
        )
    cases = {c["id"]: c for c in report["cases"]}
    assert cases["flip"]["change"] == "judge_split"
    assert report["comparison"]["counts"]["regression"] == 0
    assert report["verdict"] == "fail"  # pass_rate still fails: the split is not a pass
    assert report["headline"]["new_failures"] == []
    assert "1 case judge undecided (flip): not regressions" in report["headline"]["sentence"]
    rows = (tmp_path / "c.md").read_text(encoding="utf-8").splitlines()
    assert any(
        row.startswith("| <code>flip</code> | fail | judge undecided (2 of 4 judgements fail it, one is main's) |")
        for row in rows
    )
    # Main judged this very reply and passed it: its vote is the fourth, and cost no call.
    assert cases["flip"]["judge_runs"]["main_vote"] is True
    assert flipping.calls[Q_GROUND] == 3


def test_rejudge_is_bounded(tmp_path: Path, rag: RagServer, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, rag.url, "http://127.0.0.1:9/v1", cases=CASES)
    assert main(["run", "--config", str(config), "--rejudge", "11"]) == 2
    assert "--rejudge 11: N must be 0 to 10" in capsys.readouterr().err


def test_a_pass_where_main_failed_on_the_judge_is_judged_again(tmp_path: Path, rag: RagServer) -> None:
    # Main failed `flip` on grounding; now its first judgement passes it, and the next two fail it again.
    (tmp_path / "main").mkdir()
    with FakeOpenAI(FlippingJudge({Q_GROUND: lambda k: 2}).responder) as judge:
        _run(tmp_path / "main", rag, judge, rejudge=0)
    flipping = FlippingJudge({Q_GROUND: lambda k: 4 if k == 0 else 2})
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(tmp_path, rag, judge, "--baseline", str(tmp_path / "main" / "r.json"), rejudge=2)
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    # Not "fixed" on the strength of one lucky judgement: the majority still fails it, and the split is said.
    assert (flip["status"], flip["change"], flip["judge_split"]) == ("fail", "still_failing", True)
    # Main's judgement of the same reply is the fourth vote: three of four fail it.
    assert flip["judge_runs"] == {
        "runs": 4,
        "agreeing": 3,
        "flipped": ["judge.grounding < 3"],
        "passed_on_rejudge": False,
        "main_vote": True,
    }
    assert flipping.calls[Q_GROUND] == 3


def _passing_judge() -> FakeOpenAI:
    return FakeOpenAI(lambda body, i: merged(lambda b, k: Reply(content=rubric_json()), claims_responder)(body, i))


@pytest.mark.parametrize(
    ("why", "main_config"),
    [
        ("another judge model", {"judge": {"rejudge": 0, "cache": None, "model": "gpt-4o"}}),
        ("other case rules", {"case": {"faithfulness": ">= 0.8", "judge.grounding": ">= 2"}}),
        ("the case changed", {"cases": [*CASES[:1], {**CASES[1], "must_not_mention": ["voucher"]}, *CASES[2:]]}),
    ],
)
def test_main_votes_only_on_the_same_reply_judged_alike(
    tmp_path: Path, rag: RagServer, why: str, main_config: dict[str, Any]
) -> None:
    (tmp_path / "main").mkdir()
    with _passing_judge() as ok:
        settings: dict[str, Any] = {"judge": {"rejudge": 0, "cache": None}, "cases": CASES, **main_config}
        config = write_config(tmp_path / "main", rag.url, ok.base_url, **settings)
        assert main(["run", "--config", str(config), "--report", str(tmp_path / "main" / "r.json")]) == 0
    with FakeOpenAI(FlippingJudge().responder) as judge:
        report = _run(tmp_path, rag, judge, "--baseline", str(tmp_path / "main" / "r.json"), rejudge=2)
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    assert (flip["judge_runs"]["runs"], flip["judge_runs"]["main_vote"]) == (3, False), why


def test_main_does_not_vote_on_a_changed_answer(tmp_path: Path, rag: RagServer) -> None:
    (tmp_path / "main").mkdir()
    reworded = {**RAG_REPLIES, Q_MAJORITY: RAG_REPLIES[Q_GOOD]}
    reworded[Q_GROUND] = RAG_REPLIES[Q_GOOD]  # main answered `flip` otherwise
    with RagServer(reworded) as before, _passing_judge() as ok:
        _run(tmp_path / "main", before, ok, rejudge=0)
    flipping = FlippingJudge()
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(tmp_path, rag, judge, "--baseline", str(tmp_path / "main" / "r.json"), rejudge=2)
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    assert (flip["judge_runs"]["runs"], flip["judge_runs"]["main_vote"]) == (3, False)
    # The majority of this run's own three judgements fails it; they split, so it is undecided, not a regression.
    assert (flip["status"], flip["change"]) == ("fail", "judge_split")


def test_an_unchanged_answer_main_passed_never_regresses_on_a_flip(tmp_path: Path, rag: RagServer) -> None:
    # The judge fails `flip` on its first call only: without main's vote, one rejudge would split it too; with it,
    # the flip is outvoted two to one and the case passes on the rejudge, with no regression and one extra call.
    (tmp_path / "main").mkdir()
    with _passing_judge() as ok:
        _run(tmp_path / "main", rag, ok, rejudge=0)
    flipping = FlippingJudge({Q_GROUND: lambda k: 2 if k == 0 else 4})
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(tmp_path, rag, judge, "--baseline", str(tmp_path / "main" / "r.json"), rejudge=1)
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    assert flip["judge_runs"] == {
        "runs": 3,
        "agreeing": 2,
        "flipped": ["judge.grounding < 3"],
        "passed_on_rejudge": True,
        "main_vote": True,
    }
    assert (flip["status"], flip["change"]) == ("pass", "still_passing")
    assert report["comparison"]["counts"]["regression"] == 0
    assert flipping.calls[Q_GROUND] == 2


def test_a_merge_counts_the_shards_flips(tmp_path: Path, rag: RagServer) -> None:
    with FakeOpenAI(FlippingJudge().responder) as judge:
        config = write_config(tmp_path, rag.url, judge.base_url, judge={"rejudge": 2, "cache": None}, cases=CASES)
        for i in (1, 2):
            main(["run", "--config", str(config), "--shard", f"{i}/2", "--report", str(tmp_path / f"s{i}.json")])
    merged_path = tmp_path / "merged.json"
    main(
        [
            "merge",
            "--config",
            str(config),
            "--report",
            str(merged_path),
            str(tmp_path / "s1.json"),
            str(tmp_path / "s2.json"),
        ]
    )
    report = json.loads(merged_path.read_text(encoding="utf-8"))
    # As the unsharded run says it: both rejudged cases split.
    assert (report["suite"]["judge_flip_rate"], report["suite"]["rejudged_cases"]) == (1.0, 2)
    assert report["suite"]["judge_flip_rate_interval"] == [0.3424, 1.0]
    assert report["judge_trust"]["judge_flip_rate"] == 1.0


def test_a_cached_first_judgement_is_not_main_voting_twice(tmp_path: Path, rag: RagServer) -> None:
    # Main's run and this one share the judge cache: this run's first judgement of the unchanged reply is main's
    # own sample read back, so main's vote would count one judgement twice.
    cache = str(tmp_path / "shared-cache")
    (tmp_path / "main").mkdir()
    flipping = FlippingJudge({Q_GROUND: lambda k: 2 if k == 0 else 4})
    with FakeOpenAI(flipping.responder) as judge:
        config = write_config(tmp_path / "main", rag.url, judge.base_url, judge={"cache": cache}, cases=CASES)
        main(["run", "--config", str(config), "--report", str(tmp_path / "main" / "r.json")])
        config = write_config(tmp_path, rag.url, judge.base_url, judge={"rejudge": 1, "cache": cache}, cases=CASES)
        main(
            [
                "run",
                "--config",
                str(config),
                "--baseline",
                str(tmp_path / "main" / "r.json"),
                "--report",
                str(tmp_path / "r.json"),
            ]
        )
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    assert flip["judge"]["cache_hits"] >= 1
    assert (flip["judge_runs"]["runs"], flip["judge_runs"]["main_vote"]) == (2, False)


def test_a_rejudge_that_fails_leaves_the_case_as_judged_first_even_with_mains_vote(
    tmp_path: Path, rag: RagServer
) -> None:
    # Main failed `flip` on grounding; this run's first judgement passes the same reply, and the rejudge's call
    # fails: one pass against main's one failure decides nothing, and must not break the run.
    (tmp_path / "main").mkdir()
    with FakeOpenAI(FlippingJudge({Q_GROUND: lambda k: 2}).responder) as judge:
        _run(tmp_path / "main", rag, judge, rejudge=0)
    flipping = FlippingJudge({Q_GROUND: lambda k: 4})

    def failing_after_first(body: dict[str, Any], call_index: int) -> Reply:
        if f"## Question\n{Q_GROUND}\n" in user_text(body) and flipping.calls[Q_GROUND] >= 1:
            return Reply(status=500)
        return flipping.responder(body, call_index)

    with FakeOpenAI(failing_after_first) as judge:
        report = _run(tmp_path, rag, judge, "--baseline", str(tmp_path / "main" / "r.json"), rejudge=2)
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    assert (flip["status"], flip["judge_runs"], flip["change"]) == ("pass", None, "fixed")
