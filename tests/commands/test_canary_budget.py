"""`judge.budget_usd` and `judge.max_calls` hold for a canary as for a gate run: each canary its own budget; a
call that would pass it is not made, the answers left are errors naming the budget, every output is written, the
canary is never promoted and exits 3. Unknown is never zero: the judge's cost in the canary report is null for an
unpriced model, with one warning. Through the real `openai` SDK against a loopback judge that reports its usage
((100, 20) tokens a call, at $1 and $2 a million: $0.00014 a call)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from ragjudge.canary.release import CanaryOutcome, CanaryRequest, run_canary
from ragjudge.cli import main
from ragjudge.config.loader import load_config
from ragjudge.judge import budget
from tests.canary.files import write_config, write_sample
from tests.fakes.arms import ArmServer
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import answer
from tests.judge.openai_helpers import KEY, PASSAGES, by_kind, claim, claims_json

ENV_KEY = "RAGJUDGE_TEST_CANARY_JUDGE_KEY"
N = 10
"""Sample questions: 20 answers, one judge call each (`judge.combined`, one sample)."""
CALL_USD = (100 * 1.0 + 20 * 2.0) / 1e6
REPLY = answer("Refunds take 5 working days.", ["p1"], PASSAGES)
BUDGET_TIP = "the canary cannot be promoted (raise judge.budget_usd or judge.max_calls, or shrink canary.sample)"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _config(folder: Path, fake: FakeOpenAI, **judge: Any) -> Path:
    settings = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "base_url": fake.base_url,
        "api_key": "${" + ENV_KEY + "}",
        "max_retries": 1,
        "timeout_s": 10,
        "concurrency": 1,
        "cache": None,  # both arms give the same answer: with a cache, the control's would be hits
        "prices": {"gpt-4o-mini": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        **judge,
    }
    canary = {
        "sample": str(write_sample(folder / "sample.yaml", N)),
        "rules": {"faithfulness": ">= 0.9"},
        "decision": "point",
        "min_requests": 1,
    }
    return write_config(folder / "ragjudge.yml", canary, judge=settings)


def _canary(folder: Path, responder: Any = None, **judge: Any) -> tuple[int, dict[str, Any], str, FakeOpenAI]:
    folder.mkdir(parents=True, exist_ok=True)
    with (
        ArmServer("treatment", reply=REPLY) as t,
        ArmServer("control", reply=REPLY) as c,
        FakeOpenAI(responder or by_kind()) as fake,
    ):
        config = _config(folder, fake, **judge)
        argv = ["canary", "--config", str(config), "--treatment", t.ask_url, "--control", c.ask_url]
        code = main([*argv, "--report", str(folder / "r.json"), "--comment-file", str(folder / "c.md")])
    report = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    return code, report, (folder / "c.md").read_text(encoding="utf-8"), fake


def _cases(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [*report["arms"]["treatment"]["cases"], *report["arms"]["control"]["cases"]]


def test_a_canary_within_its_budget_is_promoted_and_says_what_it_cost(tmp_path: Path) -> None:
    code, report, comment, fake = _canary(tmp_path, max_calls=100, budget_usd=1.0)
    assert (code, report["verdict"], fake.call_count) == (0, "promote", 2 * N)
    assert report["judge_calls"] == 2 * N
    assert report["judge_cost_usd"] == pytest.approx(2 * N * CALL_USD)
    assert report["judge_budget"] == {
        "budget_usd": 1.0,
        "max_calls": 100,
        "spent_usd": pytest.approx(2 * N * CALL_USD),
        "calls": 2 * N,
        "exhausted": False,
    }
    assert all(c["judge_error"] is None for c in _cases(report))
    assert " · judge $0.0028" in comment  # under a cent, to four places, as the gate's footer writes it


def test_max_calls_stops_the_canary_loudly_and_it_is_never_promoted(tmp_path: Path) -> None:
    code, report, comment, fake = _canary(tmp_path, max_calls=5)
    assert fake.call_count == 5  # the sixth call was never made
    assert (code, report["verdict"]) == (3, "inconclusive")
    reason = (
        "budget exhausted: 5 of 5 judge calls made (judge.max_calls) after 5 of 20 answers; 15 not judged are "
        f"errors: {BUDGET_TIP}"
    )
    assert report["reasons"][0] == reason
    assert reason not in report["warnings"]  # said once
    unjudged = [c for c in _cases(report) if c["judge_error"] is not None]
    assert len(unjudged) == 15
    assert {c["judge_error"] for c in unjudged} == {"budget exhausted: 5 of 5 judge calls made (judge.max_calls)"}
    assert all(c["faithfulness"] is None and c["error"] is None and c["latency_ms"] for c in unjudged)
    # Every endpoint call was still made: latency is measured on the whole sample.
    assert (report["arms"]["treatment"]["ok"], report["arms"]["control"]["ok"]) == (N, N)
    assert report["judge_budget"] == {
        "budget_usd": None,
        "max_calls": 5,
        "spent_usd": pytest.approx(5 * CALL_USD),
        "calls": 5,
        "exhausted": True,
    }
    assert report["judge_calls"] == 5
    assert "budget exhausted: 5 of 5 judge calls made" in comment


def test_half_the_cost_in_usd_stops_the_canary_part_way(tmp_path: Path) -> None:
    code, report, _, fake = _canary(tmp_path, budget_usd=N * CALL_USD * 0.95)
    assert (code, report["verdict"]) == (3, "inconclusive")
    assert 0 < fake.call_count < 2 * N
    spent = report["judge_budget"]["spent_usd"]
    assert spent <= N * CALL_USD * 0.95 and report["judge_budget"]["exhausted"] is True
    judged = 2 * N - sum(c["judge_error"] is not None for c in _cases(report))
    assert judged == fake.call_count
    assert report["reasons"][0].startswith(
        f"budget exhausted: ${spent:.2f} of ${N * CALL_USD * 0.95:.2f} spent (judge.budget_usd) after {judged} of "
        f"20 answers; {2 * N - judged} not judged are errors"
    )


def test_a_rule_that_failed_on_what_was_judged_still_rolls_back(tmp_path: Path) -> None:
    unsupported = Reply(content=claims_json(claim("Refunds take 5 working days.", False, None, "not in p1")))
    code, report, _, fake = _canary(tmp_path, by_kind(faithfulness=unsupported), max_calls=5)
    assert fake.call_count == 5
    assert (code, report["verdict"]) == (1, "rollback")
    assert report["metrics"]["faithfulness"]["decision"] == "fail"
    # Not a reason for the rollback, but said first.
    assert report["warnings"][0].startswith("budget exhausted: 5 of 5 judge calls made (judge.max_calls) after 5 of")


def test_an_unpriced_judge_costs_unknown_never_zero(tmp_path: Path) -> None:
    code, report, comment, _ = _canary(tmp_path, model="unpriced-model")
    assert (code, report["verdict"]) == (0, "promote")
    assert report["judge_calls"] == 2 * N
    assert report["judge_cost_usd"] is None
    assert report["judge_budget"] is None
    warning = (
        "judge cost unknown: no price for unpriced-model under judge.prices; set judge.prices.unpriced-model: "
        "{input_per_mtok: ..., output_per_mtok: ...} to count it"
    )
    assert report["warnings"].count(warning) == 1
    assert "$0.00" not in comment and " · judge cost unknown" in comment


def test_the_offline_judge_spends_nothing_and_says_no_cost(tmp_path: Path) -> None:
    code, report, _, fake = _canary(tmp_path, provider="offline", max_calls=1)
    assert (code, report["verdict"], fake.call_count) == (0, "promote", 0)
    assert (report["judge_calls"], report["judge_cost_usd"], report["judge_budget"]) == (0, None, None)


def test_each_canary_is_its_own_budget_whatever_runs_beside_it(tmp_path: Path) -> None:
    # `ragjudge serve` runs analyses side by side: two canaries at once, inside a gate run's exhausted budget,
    # each make their own five calls.
    outcomes: list[CanaryOutcome] = []
    with (
        ArmServer("treatment", reply=REPLY) as t,
        ArmServer("control", reply=REPLY) as c,
        FakeOpenAI(by_kind()) as fake,
    ):
        config = load_config(_config(tmp_path, fake, max_calls=5))
        request = CanaryRequest(config=config, treatment=t.ask_url, control=c.ask_url)
        gate_run = budget.Budget(budget.Ceiling(None, 1, {}))
        gate_run.exhausted = "budget exhausted: 1 of 1 judge calls made (judge.max_calls)"
        with budget.running(gate_run):
            threads = [threading.Thread(target=lambda: outcomes.append(run_canary(request))) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
        assert fake.call_count == 10
    assert [(o.exit_code, o.report.judge_calls) for o in outcomes] == [(3, 5), (3, 5)]
    assert all(o.report.reasons[0].startswith("budget exhausted: 5 of 5 judge calls made") for o in outcomes)
