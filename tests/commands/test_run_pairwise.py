"""Pairwise against main, end to end: two loopback RAG services (main's answers and the PR's), a loopback
judge spoken to by the real `openai` SDK, and `run --baseline`. Each changed answer is asked in both orders."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragjudge.cli import main
from tests.commands.test_run_openai import ENV_KEY, write_config
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, PASSAGES, claim, claims_json, merged, rubric_json

DETAIL = "5 working days"
FALSE = "shipping is free forever"
QUESTIONS = {
    "same": "How do I reset my password?",
    "dropped": "How long do refunds take?",
    "false": "Who pays for return shipping?",
    "reworded": "Can I get an invoice?",
}
MAIN = {
    "same": "Tap Forgot password on the sign-in page.",
    "dropped": f"Refunds take {DETAIL} after we receive the item.",
    "false": "The customer pays for return shipping.",
    "reworded": "Yes, you can download an invoice from your orders page.",
}
PR = {
    **MAIN,
    "dropped": "Refunds take a while after we receive the item.",  # a dropped detail
    "false": f"The customer pays for return shipping, but {FALSE}.",  # an added false claim
    "reworded": "Yes: your orders page lets you download the invoice.",  # the same, in other words
}
CASES = [{"id": k, "question": q, "category": "support"} for k, q in QUESTIONS.items()]


def _answers_of(text: str) -> tuple[str, str]:
    a = re.search(r"<answer_a>\n(.*?)\n</answer_a>", text, re.S)
    b = re.search(r"<answer_b>\n(.*?)\n</answer_b>", text, re.S)
    assert a is not None and b is not None, text[-400:]
    return a.group(1), b.group(1)


def _worth(text: str) -> int:
    return (DETAIL in text) - (FALSE in text)


def fair(a: str, b: str) -> dict[str, str]:
    """Decides by content: the detail counts for, the false claim against; otherwise a tie."""
    if _worth(a) == _worth(b):
        return {"winner": "tie", "reason": "both say the same to the customer"}
    better = "A" if _worth(a) > _worth(b) else "B"
    return {"winner": better, "reason": f"answer {better} keeps the {DETAIL} and makes no false claim"}


def first_shown(a: str, b: str) -> dict[str, str]:
    """Always prefers whatever it is shown first."""
    return {"winner": "A", "reason": "answer A reads better"}


class Judge:
    """A judge answering the gate's combined calls plainly and its pairwise calls with `decide`."""

    def __init__(self, decide: Any) -> None:
        self.decide = decide
        self.pairs: list[tuple[str, str]] = []

    def __call__(self, body: dict[str, Any], call_index: int) -> Reply:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        if system.startswith("You compare two answers"):
            a, b = _answers_of(user)
            self.pairs.append((a, b))
            return Reply(content=json.dumps(self.decide(a, b)))
        claims = lambda _b, _i: Reply(content=claims_json(claim("It says so.", True, "p1")))  # noqa: E731
        return merged(lambda _b, _i: Reply(content=rubric_json()), claims)(body, call_index)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _service(answers: dict[str, str]) -> RagServer:
    return RagServer({QUESTIONS[k]: answer(a, ["p1"], PASSAGES) for k, a in answers.items()})


@pytest.fixture
def baseline(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "main").mkdir()
    with _service(MAIN) as rag, FakeOpenAI(Judge(fair)) as judge:
        config = write_config(tmp_path / "main", rag.url, judge.base_url, cases=CASES, case={}, suite={})
        assert main(["run", "--config", str(config), "--report", str(tmp_path / "main.json")]) == 0
    yield tmp_path / "main.json"


def _pr(
    tmp_path: Path,
    decide: Any,
    baseline: Path,
    regression: dict[str, str] | None = None,
    cases: list[dict[str, Any]] = CASES,
) -> tuple[int, Any, Judge]:
    judge_of = Judge(decide)
    (tmp_path / "pr").mkdir(exist_ok=True)
    with _service(PR) as rag, FakeOpenAI(judge_of) as judge:
        config = write_config(tmp_path / "pr", rag.url, judge.base_url, cases=cases, case={}, suite={})
        if regression is not None:
            text = config.read_text(encoding="utf-8").replace(
                "gate:\n", "gate:\n  regression: " + json.dumps(regression) + "\n"
            )
            config.write_text(text, encoding="utf-8")
        argv = ["run", "--config", str(config), "--baseline", str(baseline), "--report", str(tmp_path / "pr.json")]
        code = main([*argv, "--comment-file", str(tmp_path / "pr.md")])
    return code, json.loads((tmp_path / "pr.json").read_text(encoding="utf-8")), judge_of


def test_a_fair_judge_names_the_worse_answers_with_its_reasons(tmp_path: Path, baseline: Path) -> None:
    code, report, judge = _pr(tmp_path, fair, baseline)
    cases = {c["id"]: c for c in report["cases"]}
    assert cases["same"]["pairwise"] is None  # unchanged: never sent
    assert len(judge.pairs) == 3 * 2  # three changed answers, each in both orders
    assert (cases["dropped"]["pairwise"]["verdict"], cases["false"]["pairwise"]["verdict"]) == ("worse", "worse")
    assert cases["reworded"]["pairwise"]["verdict"] == "tie"
    assert cases["dropped"]["pairwise"]["consistent"] is True
    assert cases["dropped"]["pairwise"]["reasons"] == [
        f"main first: A: answer A keeps the {DETAIL} and makes no false claim",
        f"this run first: B: answer B keeps the {DETAIL} and makes no false claim",
    ]
    assert report["comparison"]["pairwise"] == {
        "compared": 3,
        "better": 0,
        "worse": 2,
        "tie": 1,
        "unscored": 0,
        "loss_rate": pytest.approx(2 / 3),
        "loss_rate_interval": [0.2077, 0.9385],
        "position_consistency": 1.0,
    }
    assert code == 0  # the pairwise rules are not on by default
    # The headline says it even so: a pass whose answers got worse is not a clean pass to a reviewer.
    assert report["headline"]["sentence"].endswith(
        "; 2 of 3 changed answers judged worse than main@"
        + report["comparison"]["baseline"]["commit"][:7]
        + " (dropped, false)."
    )
    comment = (tmp_path / "pr.md").read_text(encoding="utf-8")
    assert "3 changed answer(s) compared in both orders: 2 worse, 0 better, 1 tie" in comment
    assert f"- <code>dropped</code>: main's answer was better: main's answer keeps the {DETAIL}" in comment


def test_pairwise_loss_rate_fails_the_gate_when_set(tmp_path: Path, baseline: Path) -> None:
    code, report, _ = _pr(tmp_path, fair, baseline, {"pairwise_loss_rate": "<= 0.25", "pairwise_worse": "<= 2"})
    rules = {r["metric"]: r for r in report["comparison"]["rules"]}
    assert rules["pairwise_loss_rate"]["passed"] is False
    assert rules["pairwise_loss_rate"]["reason"] == (
        "pairwise_loss_rate 0.667 > 0.25 (2 of 3 changed answers worse: dropped, false)"
    )
    assert rules["pairwise_worse"]["passed"] is True
    assert code == 1 and report["verdict"] == "fail"
    # The headline says the pairwise result once: the failed rule's reason, not again as a count.
    assert report["headline"]["sentence"] == (
        "Blocked by pairwise_loss_rate 0.667 > 0.25 (2 of 3 changed answers worse: dropped, false)."
    )


def test_a_judge_that_prefers_the_first_answer_gives_ties_not_verdicts(tmp_path: Path, baseline: Path) -> None:
    code, report, _ = _pr(tmp_path, first_shown, baseline, {"pairwise_worse": "<= 0"})
    assert {c["id"]: (c["pairwise"] or {}).get("verdict") for c in report["cases"]} == {
        "same": None,
        "dropped": "tie",
        "false": "tie",
        "reworded": "tie",
    }
    pairwise = report["comparison"]["pairwise"]
    assert (pairwise["worse"], pairwise["tie"], pairwise["position_consistency"]) == (0, 3, 0.0)
    assert report["judge_trust"]["position_consistency"] == 0.0
    footer = (tmp_path / "pr.md").read_text(encoding="utf-8").rstrip().splitlines()[-1]
    assert footer.startswith("<sub>Judge gpt-4o-mini · prompt ") and footer.endswith(
        " · position consistency 0.000</sub>"
    )
    assert all(c["pairwise"]["consistent"] is False for c in report["cases"] if c["pairwise"])
    assert code == 0


def test_shards_judge_their_own_pairs_and_the_merge_counts_them(tmp_path: Path, baseline: Path) -> None:
    judge_of = Judge(fair)
    (tmp_path / "pr").mkdir()
    with _service(PR) as rag, FakeOpenAI(judge_of) as judge:
        config = write_config(tmp_path / "pr", rag.url, judge.base_url, cases=CASES, case={}, suite={})
        for i in (1, 2):
            shard = ["--shard", f"{i}/2", "--report", str(tmp_path / f"s{i}.json")]
            assert main(["run", "--config", str(config), "--baseline", str(baseline), *shard]) == 0
    assert len(judge_of.pairs) == 3 * 2  # each changed answer judged once, by the shard that ran it
    merged_path = tmp_path / "merged.json"
    argv = ["merge", "--config", str(config), "--baseline", str(baseline), "--report", str(merged_path)]
    assert main([*argv, str(tmp_path / "s1.json"), str(tmp_path / "s2.json")]) == 0
    report = json.loads(merged_path.read_text(encoding="utf-8"))
    pairwise = report["comparison"]["pairwise"]
    assert (pairwise["compared"], pairwise["worse"], pairwise["tie"]) == (3, 2, 1)
    assert report["judge_trust"]["position_consistency"] == 1.0


def test_a_case_pending_review_is_not_compared(tmp_path: Path, baseline: Path) -> None:
    pending = [{**c, "review": "pending"} if c["id"] == "dropped" else c for c in CASES]
    _, report, judge = _pr(tmp_path, fair, baseline, cases=pending)
    cases = {c["id"]: c for c in report["cases"]}
    assert cases["dropped"]["pairwise"] is None
    assert len(judge.pairs) == 2 * 2
    assert (report["comparison"]["pairwise"]["compared"], report["comparison"]["pairwise"]["worse"]) == (2, 1)
