"""One judgement, one vote, and all the evidence weighed (`gate.votes`), end to end: `ragjudge run --baseline`
through the real `openai` SDK against a loopback judge.

- The replayed PR of issue 37: c021 answers "36 days" where main said 6 and the passage says 6; the rubric passes
  it once and fails it after, the pairwise judge finds it worse in both orders of both rounds: a regression, named
  with the pairwise reason, not "judge undecided".
- The same PR run again with its cache kept, with no cache, and with main's cache shared: the same verdict, the
  same change for every case and the same `judge_runs`, though the judge answers a sample differently each time
  it is asked (only a cache or main's report can make a vote the same).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.commands.test_run_openai import ENV_KEY, write_config
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, PASSAGES, claim, claims_json, merged, rubric_json, user_text

Q021 = "How long does a card refund take to reach me?"
Q_OK = "Can I return a gift card?"
CASES = [{"id": "c021", "question": Q021, "category": "refund"}, {"id": "c007", "question": Q_OK}]
MAIN_ANSWERS = {Q021: "Card refunds reach you within 6 days.", Q_OK: "Gift cards cannot be returned."}
PR_ANSWERS = {**MAIN_ANSWERS, Q021: "Card refunds reach you within 36 days."}
WORSE_REASON = "answer A says 6 days, as the passage does; B says 36"


def _service(answers: dict[str, str]) -> RagServer:
    return RagServer({q: answer(a, ["p1"], PASSAGES) for q, a in answers.items()})


class Judge:
    """Rubric: `scores[question](k)` for the question's k-th rubric call (grounding), else 4. Pairwise: main's answer
    wins in both orders, every round."""

    def __init__(self, scores: dict[str, Any] | None = None) -> None:
        self.scores = scores or {}
        self.calls: Counter[str] = Counter()
        self.pairwise = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], call_index: int) -> Reply:
        system, user = body["messages"][0]["content"], user_text(body)
        if system.startswith("You compare two answers"):
            with self.lock:
                self.pairwise += 1
            main_first = "within 6 days" in user.split("<answer_a>")[-1].split("</answer_a>")[0]
            winner = "A" if main_first else "B"
            reason = WORSE_REASON if main_first else "answer B says 6 days, as the passage does; A says 36"
            return Reply(content=json.dumps({"winner": winner, "reason": reason}))
        grounding = 4
        for question, score_of in self.scores.items():
            if f"## Question\n{question}\n" in user:
                with self.lock:
                    k = self.calls[question]
                    self.calls[question] += 1
                grounding = score_of(k)
        rubric = Reply(content=rubric_json({"grounding": grounding}, {"grounding": f"grounding {grounding}"}))
        claims = Reply(content=claims_json(claim("It says so.", True, "p1")))
        return merged(lambda _b, _i: rubric, lambda _b, _i: claims)(body, call_index)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _gate(
    folder: Path, answers: dict[str, str], judge: Judge, *extra: str, cache: str | None = "cache"
) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    with _service(answers) as rag, FakeOpenAI(judge) as fake:
        settings = {"rejudge": 8, "cache": cache, "consistency_sample": 0}
        config = write_config(
            folder, rag.url, fake.base_url, judge=settings, cases=CASES, case={"judge.grounding": ">= 3"}
        )
        if cache is None:  # `judge.cache: null`, written as a user writes it
            data = yaml.safe_load(config.read_text(encoding="utf-8"))
            data["judge"]["cache"] = None
            config.write_text(yaml.safe_dump(data), encoding="utf-8")
        argv = [
            "run",
            "--config",
            str(config),
            "--report",
            str(folder / "r.json"),
            "--comment-file",
            str(folder / "c.md"),
        ]
        code = main([*argv, *extra])
    report: dict[str, Any] = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    report["_exit"] = code
    return report


def test_a_worse_answer_the_rubric_splits_on_and_pairwise_finds_worse_is_a_regression(tmp_path: Path) -> None:
    _gate(tmp_path / "main", MAIN_ANSWERS, Judge())
    judge = Judge({Q021: lambda k: 4 if k == 0 else 2})  # the first judgement passes "36 days"; the rest fail it
    report = _gate(tmp_path / "pr", PR_ANSWERS, judge, "--baseline", str(tmp_path / "main" / "r.json"))
    c021 = next(c for c in report["cases"] if c["id"] == "c021")
    assert (report["_exit"], report["verdict"]) == (1, "fail")
    assert (c021["status"], c021["change"], c021["judge_split"]) == ("fail", "regression", False)
    # One net pass, four worse orders (two rounds agreeing in both orders), then two rejudges that fail it: -5.
    assert c021["judge_runs"]["decided_by"] == "rubric 1 pass, 2 fail; pairwise worse in 4 of 4 orders"
    assert c021["pairwise"]["verdict"] == "worse" and c021["pairwise"]["orders"] == ["worse"] * 4
    assert (judge.calls[Q021], judge.pairwise) == (3, 4)
    # The bill by kind: the two first judgements, c021's two rejudges, its two pairwise rounds.
    kinds = report["suite"]["judge_by_kind"]
    assert {k: v["calls"] for k, v in kinds.items()} == {"first": 2, "rejudge": 2, "pairwise": 4, "escalation": 0}
    assert sum(v["calls"] for v in kinds.values()) == report["suite"]["judge_calls"]
    assert report["headline"]["new_failures"] == ["c021"]
    comment = (tmp_path / "pr" / "c.md").read_text(encoding="utf-8")
    row = "| <code>c021</code> | fail | regression (rubric 1 pass, 2 fail; pairwise worse in 4 of 4 orders) |"
    assert row in comment
    details = comment[comment.index("<summary><code>c021</code>") :]
    assert (
        "Decided by the judge's votes: rubric 1 pass, 2 fail; pairwise worse in 4 of 4 orders. Pairwise, main "
        "first: A: " + WORSE_REASON
    ) in details


def test_the_first_judgement_passing_a_worse_answer_is_asked_again(tmp_path: Path) -> None:
    # The rubric passes "36 days" every time: the pairwise judge's orders make the case undecided, so it is asked
    # again until the rubric's passes outweigh them (+5 - 4 = +1); it passes, no regression, and says why.
    _gate(tmp_path / "main", MAIN_ANSWERS, Judge())
    judge = Judge({Q021: lambda k: 4})
    report = _gate(tmp_path / "pr", PR_ANSWERS, judge, "--baseline", str(tmp_path / "main" / "r.json"))
    c021 = next(c for c in report["cases"] if c["id"] == "c021")
    assert (c021["status"], c021["change"]) == ("pass", "still_passing")
    assert c021["judge_runs"]["decided_by"] == "rubric 5 pass, 0 fail; pairwise worse in 4 of 4 orders"
    assert judge.calls[Q021] == 5
    assert report["comparison"]["pairwise"]["worse"] == 1  # the pairwise count still says it


def test_the_same_pr_gives_the_same_result_whichever_cache_answered(tmp_path: Path) -> None:
    # Main's run judges c021 (unchanged) fail, pass, pass with its own cache. The PR's judge would answer every
    # sample anew (fail on its first call), so only one-judgement-one-vote makes the PR's verdict stand still.
    main_judge = Judge({Q021: lambda k: 2 if k == 0 else 4})
    main_report = _gate(tmp_path / "main", MAIN_ANSWERS, main_judge)
    assert next(c for c in main_report["cases"] if c["id"] == "c021")["status"] == "pass"
    baseline = str(tmp_path / "main" / "r.json")
    views = []
    shutil.copytree(tmp_path / "main" / "cache", tmp_path / "shared-cache")
    for name, cache in (
        ("fresh", "cache"),
        ("kept", "cache"),
        ("none", None),
        ("shared", str(tmp_path / "shared-cache")),
    ):
        folder = tmp_path / ("fresh" if name == "kept" else name)
        judge = Judge({Q021: lambda k: 2 if k == 0 else 4})
        report = _gate(folder, MAIN_ANSWERS, judge, "--baseline", baseline, cache=cache)
        views.append(
            (
                report["verdict"],
                [(c["id"], c["status"], c["change"], c["judge_runs"]) for c in report["cases"]],
            )
        )
    assert views[0] == views[1] == views[2] == views[3]
    # `judge.cache: null` is no cache: nothing was written where the default cache would be.
    assert not (tmp_path / "none" / ".ragjudge").exists() and (tmp_path / "fresh" / "cache").is_dir()
    verdict, cases = views[0]
    c021 = next(c for c in cases if c[0] == "c021")
    assert (verdict, c021[1], c021[2]) == ("pass", "pass", "still_passing")
    assert [(v["sample"], v["good"], v["by"]) for v in c021[3]["votes"]] == [
        (0, False, "main"),
        (1001, True, "main"),
        (1002, True, "main"),
    ]
