"""Issue 30's scenario end to end: main's report, then a PR that makes two answers worse, judged by a noisy judge.

The judge's flip on an unchanged answer does not block (main's judgement of the very same reply stands for
it); the two worse answers are named
pairwise with the judge's reasons; a position-biased judge gives ties and a position consistency of 0 instead of
verdicts; and the comment's footer shows the judge's model, prompt fingerprint and calibration status, naming the
config that ran."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragjudge.cli import main
from ragjudge.judge.prompting import prompt_sources
from tests.commands.test_run_openai import ENV_KEY, write_config
from tests.commands.test_run_pairwise import CASES, MAIN, PR, Judge, _service, fair, first_shown
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.judge.openai_helpers import KEY, claim, claims_json, merged, rubric_json

NOISY_QUESTION = "How do I reset my password?"  # its answer does not change: any failure is the judge's noise


class Noisy(Judge):
    """`Judge`, but the unchanged `same` case's grounding fails on its first judgement (a flip), passes after."""

    def __init__(self, decide: Callable[[str, str], dict[str, str]]) -> None:
        super().__init__(decide)
        self.seen = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], call_index: int) -> Reply:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You judge one answer") and f"## Question\n{NOISY_QUESTION}\n" in user:
            with self.lock:
                first, self.seen = self.seen == 0, self.seen + 1
            rubric = rubric_json({"grounding": 2 if first else 4}, {"grounding": "a flip" if first else "fine"})
            claims = Reply(content=claims_json(claim("It says so.", True, "p1")))
            return merged(lambda _b, _i: Reply(content=rubric), lambda _b, _i: claims)(body, call_index)
        return super().__call__(body, call_index)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _run(folder: Path, answers: dict[str, str], judge_of: Judge, *extra: str) -> tuple[int, dict[str, Any], str]:
    folder.mkdir(parents=True, exist_ok=True)
    with _service(answers) as rag, FakeOpenAI(judge_of) as judge:
        config = write_config(
            folder,
            rag.url,
            judge.base_url,
            judge={"rejudge": 2, "cache": None, "calibration": "calibration.json"},
            cases=CASES,
            case={"judge.grounding": ">= 3"},
            suite={"pass_rate": ">= 1.0"},
        )
        return _gate(folder, config, *extra)


def _gate(folder: Path, config: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    """`ragjudge run` with `config`: its exit code, its report and its comment, both written under `folder`."""
    argv = ["run", "--config", str(config), "--report", str(folder / "r.json"), "--comment-file", str(folder / "c.md")]
    code = main([*argv, *extra])
    report = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    return code, report, (folder / "c.md").read_text(encoding="utf-8")


def test_a_noisy_judge_and_two_worse_answers(tmp_path: Path) -> None:
    code, _, _ = _run(tmp_path / "main", MAIN, Judge(fair))
    assert code == 0
    baseline = str(tmp_path / "main" / "r.json")
    code, report, comment = _run(tmp_path / "pr", PR, Noisy(fair), "--baseline", baseline)
    cases = {c["id"]: c for c in report["cases"]}

    # The flip on the unchanged answer did not block: this run's first judgement of it is the sample main judged
    # already (one judgement, one vote), so main's two votes on this very reply stand, at no call.
    same = cases["same"]["judge_runs"]
    assert cases["same"]["status"] == "pass" and same["passed_on_rejudge"] is False
    assert (same["runs"], same["main_vote"], same["decided_by"]) == (2, True, "rubric 2 pass, 0 fail (2 main's)")
    # The flip rate comes from the random consistency sample (all four cases here), not from cases picked for failing.
    assert (report["suite"]["judge_flip_rate"], report["suite"]["judge_flip_sample"]) == (0.0, 4)
    # Asked past the sample, and counted apart: the two answers the pairwise judge found worse, which the rubric
    # still passes (the worse verdicts are the pairwise counts', below; nothing fails for them alone).
    assert (report["suite"]["rejudged_cases"], report["suite"]["rejudged_split_rate"]) == (2, 0.0)
    assert [cases[c]["judge_runs"]["runs"] for c in ("dropped", "false")] == [3, 3]
    assert not cases["dropped"]["judge_split"] and cases["dropped"]["change"] == "still_passing"
    assert code == 0 and report["comparison"]["counts"]["regression"] == 0
    # The two worse answers, named pairwise with the judge's reasons.
    assert [c for c in cases if (cases[c]["pairwise"] or {}).get("verdict") == "worse"] == ["dropped", "false"]
    assert "- <code>dropped</code>: main's answer was better: main's answer keeps the 5 working days" in comment
    assert report["headline"]["sentence"].endswith(
        "changed answers judged worse than main@"
        + report["comparison"]["baseline"]["commit"][:7]
        + " (dropped, false)."
    )
    # The footer: model, prompt fingerprint, calibration status naming the config that ran, the measured flips.
    prompt = hashlib.sha256(prompt_sources().encode("utf-8")).hexdigest()[:6]
    footer = comment.rstrip().splitlines()[-1]
    assert footer.startswith(f"<sub>Judge gpt-4o-mini · prompt {prompt} · judge calibration missing: ")
    config = str(tmp_path / "pr" / "ragjudge.yml")  # as code: no Markdown escape shows in it
    assert f"<code>ragjudge calibrate --config {config} --labels LABELS.jsonl</code>" in footer
    assert footer.endswith(
        " · flips 0% [0–43%] of its verdicts, judging 4 random cases twice · position consistency 1.000</sub>"
    )


def test_a_position_biased_judge_gives_ties_not_verdicts(tmp_path: Path) -> None:
    _run(tmp_path / "main", MAIN, Judge(fair))
    code, report, _ = _run(tmp_path / "pr", PR, Noisy(first_shown), "--baseline", str(tmp_path / "main" / "r.json"))
    pairwise = report["comparison"]["pairwise"]
    assert (pairwise["compared"], pairwise["worse"], pairwise["tie"], pairwise["position_consistency"]) == (
        3,
        0,
        3,
        0.0,
    )
    assert code == 0


def test_an_uncalibrated_judge_reports_without_blocking_when_told(tmp_path: Path) -> None:
    from tests.commands.test_run_openai import CASES as OPENAI_CASES
    from tests.commands.test_run_openai import GROUND_REASON, RAG_REPLIES, judge_responder
    from tests.fakes.rag import RagServer

    cases = [c for c in OPENAI_CASES if c["id"] in ("good", "ground", "faith")]

    def run(uncalibrated: str) -> tuple[int, dict[str, Any], str]:
        folder = tmp_path / uncalibrated
        folder.mkdir()
        with RagServer(RAG_REPLIES) as rag, FakeOpenAI(judge_responder) as judge:
            judge_keys = {"uncalibrated": uncalibrated, "calibration": "none.json", "pairwise": False}
            config = write_config(folder, rag.url, judge.base_url, judge=judge_keys, cases=cases)
            return _gate(folder, config)

    code, report, _ = run("gate")  # the default: the judge's findings block, calibrated or not
    assert code == 1 and {c["id"]: c["status"] for c in report["cases"]} == {
        "good": "pass",
        "ground": "fail",
        "faith": "fail",
    }

    code, report, comment = run("report")
    by_id = {c["id"]: c for c in report["cases"]}
    assert code == 0 and report["verdict"] == "pass"
    assert by_id["ground"]["status"] == "pass" and by_id["ground"]["failed_conditions"] == []
    assert by_id["ground"]["advisory_conditions"] == [f"judge.grounding 2 < 3: {GROUND_REASON}"]
    assert by_id["faith"]["advisory_conditions"][0].startswith("faithfulness 0.500 < 0.8")
    assert (
        "the judge is not calibrated (missing): 2 condition(s) only it decided, on 2 case(s), are reported as "
        "advisory, not blocking (judge.uncalibrated: report); calibrate it to gate on them"
    ) in report["warnings"]
    assert "**Not blocking: what only the uncalibrated judge found** (`judge.uncalibrated: report`):" in comment
