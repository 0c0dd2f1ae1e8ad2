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


def _run(
    tmp_path: Path, rag: RagServer, judge: FakeOpenAI, *extra: str, rejudge: int, sample: int = 0
) -> dict[str, Any]:
    settings = {"rejudge": rejudge, "cache": None, "consistency_sample": sample}
    config = write_config(tmp_path, rag.url, judge.base_url, judge=settings, cases=CASES)
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
    # `flip`: fail, fail, pass: at the cap the votes stand at one net failure, short of both margins: undecided.
    assert cases["flip"]["status"] == "fail"
    failing = {"source": "rubric", "good": False, "by": "this run"}
    assert cases["flip"]["judge_runs"] == {
        "runs": 3,
        "agreeing": 2,
        "flipped": ["judge.grounding < 3"],
        "passed_on_rejudge": False,
        "main_vote": False,
        "votes": [
            {**failing, "sample": 0, "conditions": ["judge.grounding 2 < 3: call 0"]},
            {**failing, "sample": 1001, "conditions": ["judge.grounding 2 < 3: call 1"]},
            {"source": "rubric", "sample": 1002, "good": True, "by": "this run"},
        ],
        "undecided": True,
        "decided_by": "rubric 1 pass, 2 fail",
        "consistency": False,
        # What the two rejudges cost, apart from the first judgement (the case's judge figures hold all three).
        "calls": 2,
        "tokens": 240,
        "cost_usd": 0.00028,
    }
    assert cases["flip"]["judge_split"] is True
    # `majority`: fail, pass, pass: one net pass decides it, and the rejudge passed it.
    assert cases["majority"]["status"] == "pass"
    assert cases["majority"]["judge_runs"]["passed_on_rejudge"] is True
    assert cases["majority"]["judge_runs"]["undecided"] is False
    assert cases["majority"]["judge_split"] is False
    assert cases["majority"]["failed_conditions"] == []
    assert cases["good"]["judge_runs"] is None  # it passed: never rejudged
    # No random consistency sample: no flip rate; the two cases asked again for disagreeing are counted apart.
    assert "judge_flip_rate" not in report["suite"]
    assert (report["suite"]["rejudged_cases"], report["suite"]["rejudged_split_rate"]) == (2, 1.0)
    assert report["judge_trust"].get("judge_flip_rate") is None
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


def test_an_unchanged_reply_takes_mains_votes_and_never_regresses(tmp_path: Path, rag: RagServer) -> None:
    # Main judged these very replies and passed them; this run's first judgement of `flip` (the same sample, asked
    # of a judge that answers it otherwise) is that same judgement, so main's vote stands for it: no more calls.
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
        calls = judge.call_count
    cases = {c["id"]: c for c in report["cases"]}
    assert (cases["flip"]["status"], cases["flip"]["change"]) == ("pass", "still_passing")
    assert cases["flip"]["judge_runs"]["votes"] == [{"source": "rubric", "sample": 0, "good": True, "by": "main"}]
    assert cases["flip"]["judge_runs"]["decided_by"] == "rubric 1 pass, 0 fail (1 main's)"
    assert report["comparison"]["counts"]["regression"] == 0
    assert report["verdict"] == "pass"
    assert calls == 3 and flipping.calls[Q_GROUND] == 1


def test_a_split_on_a_changed_answer_that_passed_on_main_is_not_a_regression(tmp_path: Path, rag: RagServer) -> None:
    (tmp_path / "main").mkdir()
    before = {**RAG_REPLIES, Q_MAJORITY: RAG_REPLIES[Q_GOOD], Q_GROUND: RAG_REPLIES[Q_GOOD]}
    with RagServer(before) as old, _passing_judge() as ok:
        _run(tmp_path / "main", old, ok, rejudge=0)
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
        row.startswith("| <code>flip</code> | fail | judge undecided (2 of 3 judgements fail it) |") for row in rows
    ), rows
    assert flipping.calls[Q_GROUND] == 3


def test_rejudge_is_bounded(tmp_path: Path, rag: RagServer, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, rag.url, "http://127.0.0.1:9/v1", cases=CASES)
    assert main(["run", "--config", str(config), "--rejudge", "11"]) == 2
    assert "--rejudge 11: N must be 0 to 10" in capsys.readouterr().err


def test_a_pass_where_main_failed_the_same_reply_is_judged_again(tmp_path: Path, rag: RagServer) -> None:
    # Main failed `flip` on grounding; this run's first judgement of the same sample passes it, but that sample is
    # main's vote: the case stands at one net failure, and the next two rejudges fail it again.
    (tmp_path / "main").mkdir()
    with FakeOpenAI(FlippingJudge({Q_GROUND: lambda k: 2}).responder) as judge:
        _run(tmp_path / "main", rag, judge, rejudge=0)
    flipping = FlippingJudge({Q_GROUND: lambda k: 4 if k == 0 else 2})
    with FakeOpenAI(flipping.responder) as judge:
        report = _run(tmp_path, rag, judge, "--baseline", str(tmp_path / "main" / "r.json"), rejudge=2)
    flip = next(c for c in report["cases"] if c["id"] == "flip")
    # Not "fixed" on the strength of one lucky judgement: three net failures, short of five at the cap: undecided.
    assert (flip["status"], flip["change"], flip["judge_split"]) == ("fail", "still_failing", True)
    runs = flip["judge_runs"]
    assert (runs["runs"], runs["agreeing"], runs["main_vote"], runs["passed_on_rejudge"]) == (3, 3, True, False)
    assert [(v["sample"], v["good"], v["by"]) for v in runs["votes"]] == [
        (0, False, "main"),
        (1001, False, "this run"),
        (1002, False, "this run"),
    ]
    assert flip["failed_conditions"] == ["judge.grounding 2 < 3: call 1"]  # the first own failing judgement's
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
    # This run's own three judgements stand at one net failure at the cap: undecided, not a regression.
    assert (flip["status"], flip["change"]) == ("fail", "judge_split")


def test_the_flip_rate_comes_from_the_random_sample_and_a_merge_counts_the_shards(
    tmp_path: Path, rag: RagServer
) -> None:
    # Every case is in the consistency sample (10 >= 3): `good` agrees with itself, `flip` fails twice (agrees),
    # `majority` fails then passes (disagrees): one disagreement in three pairs, d = 1/3, so p = (1 - sqrt(1/3)) / 2.
    (tmp_path / "whole").mkdir()
    with FakeOpenAI(FlippingJudge().responder) as judge:
        whole = _run(tmp_path / "whole", rag, judge, rejudge=2, sample=10)
    assert whole["suite"]["judge_flip_rate"] == 0.2113 and whole["suite"]["judge_flip_sample"] == 3
    assert whole["judge_trust"]["judge_flip_rate"] == 0.2113
    assert whole["judge_trust"]["judge_flip_rate_interval"] == whole["suite"]["judge_flip_rate_interval"]
    # Cases picked for disagreeing, apart: `flip` and `majority` were asked past the sample's judgement.
    assert (whole["suite"]["rejudged_cases"], whole["suite"]["rejudged_split_rate"]) == (2, 1.0)
    assert {c["id"]: c["judge_runs"]["consistency"] for c in whole["cases"]} == {
        "good": True,
        "flip": True,
        "majority": True,
    }
    settings = {"rejudge": 2, "cache": None, "consistency_sample": 10}
    with FakeOpenAI(FlippingJudge().responder) as judge:
        config = write_config(tmp_path, rag.url, judge.base_url, judge=settings, cases=CASES)
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
    keys = ("judge_flip_rate", "judge_flip_rate_interval", "judge_flip_sample", "rejudged_cases")
    assert {k: report["suite"][k] for k in keys} == {k: whole["suite"][k] for k in keys}
    assert report["judge_trust"]["judge_flip_rate"] == 0.2113


def test_a_rejudge_whose_call_fails_is_no_vote_and_breaks_nothing(tmp_path: Path, rag: RagServer) -> None:
    # Main failed `flip` on grounding (its vote for sample 0); the rejudge's call fails: no judgement, no vote.
    # The case stays at main's one failure, undecided, and the run goes on.
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
    assert (flip["status"], flip["judge_split"], flip["change"]) == ("fail", True, "still_failing")
    assert [(v["sample"], v["by"]) for v in flip["judge_runs"]["votes"]] == [(0, "main")]
    assert flip["failed_conditions"] == ["judge.grounding 2 < 3: call 0"]  # main's, as main's report words it
    assert report["error_reason"] is None
