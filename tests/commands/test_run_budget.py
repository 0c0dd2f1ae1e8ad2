"""`judge.budget_usd` and `judge.max_calls`: a run that would pass its ceiling stops asking, the cases left are
errors naming the budget, every output is written, and the run exits 3. Through the real `openai` SDK against a
loopback judge that reports its usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragjudge.cli import main
from tests.commands.test_run_openai import ENV_KEY, write_config
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, PASSAGES, claim, claims_json, merged, rubric_json

CASES = [{"id": f"c{i:02d}", "question": f"How long do refunds take for order {i}?"} for i in range(12)]


def _judge(body: dict[str, Any], call_index: int) -> Reply:
    claims = Reply(content=claims_json(claim("Refunds take 5 working days.", True, "p1")))
    return merged(lambda _b, _i: Reply(content=rubric_json()), lambda _b, _i: claims)(body, call_index)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _run(folder: Path, **judge: Any) -> tuple[int, dict[str, Any], FakeOpenAI]:
    folder.mkdir(parents=True, exist_ok=True)
    replies = {c["question"]: answer("Refunds take 5 working days.", ["p1"], PASSAGES) for c in CASES}
    with RagServer(replies) as rag, FakeOpenAI(_judge) as fake:
        settings = {"cache": None, "concurrency": 1, **judge}
        config = write_config(folder, rag.url, fake.base_url, judge=settings, cases=CASES, suite={"pass_rate": ">= 0"})
        argv = [
            "run",
            "--config",
            str(config),
            "--report",
            str(folder / "r.json"),
            "--comment-file",
            str(folder / "c.md"),
            "--html",
            str(folder / "r.html"),
        ]
        code = main(argv)
    return code, json.loads((folder / "r.json").read_text(encoding="utf-8")), fake


def test_max_calls_stops_the_run_loudly(tmp_path: Path) -> None:
    code, report, fake = _run(tmp_path, max_calls=5)
    assert fake.call_count == 5  # the sixth call was never made
    assert (code, report["verdict"]) == (3, "error")
    errors = [c for c in report["cases"] if c["status"] == "error"]
    assert len(errors) == 7 and not any(c["status"] == "pass" for c in errors)
    assert all(
        any("budget exhausted: 5 of 5 judge calls made (judge.max_calls)" in f for f in c["failed_conditions"])
        for c in errors
    )
    assert report["error_reason"].startswith(
        "budget exhausted: 5 of 5 judge calls made (judge.max_calls) after 5 of 12 cases; 7 not judged are errors"
    )
    assert report["suite"]["judge_budget"] == {
        "budget_usd": None,
        "max_calls": 5,
        "spent_usd": report["suite"]["judge_cost_usd"],
        "calls": 5,
        "exhausted": True,
    }
    assert "budget exhausted" in (tmp_path / "c.md").read_text(encoding="utf-8")


def test_half_the_cost_in_usd_stops_part_way(tmp_path: Path) -> None:
    code, whole, _ = _run(tmp_path / "whole")
    assert code == 0 and whole["suite"]["judge_calls"] == 12
    cost = whole["suite"]["judge_cost_usd"]
    assert cost > 0
    code, half, fake = _run(tmp_path / "half", budget_usd=cost / 2)
    assert (code, half["verdict"]) == (3, "error")
    spent = half["suite"]["judge_budget"]["spent_usd"]
    assert spent <= cost / 2 and 0 < fake.call_count < 12
    judged = sum(c["status"] == "pass" for c in half["cases"])
    assert judged == fake.call_count
    assert half["error_reason"].startswith(
        f"budget exhausted: ${spent:.2f} of ${cost / 2:.2f} spent (judge.budget_usd) after {judged} of 12 cases"
    )


def test_a_budget_kept_is_said_and_changes_nothing(tmp_path: Path) -> None:
    code, report, fake = _run(tmp_path, max_calls=100, budget_usd=100.0)
    assert (code, report["verdict"], fake.call_count) == (0, "pass", 12)
    assert report["suite"]["judge_budget"]["exhausted"] is False
    assert report["suite"]["judge_budget"]["calls"] == 12


def test_an_unpriced_model_warns_that_the_usd_ceiling_cannot_be_kept(tmp_path: Path) -> None:
    _, report, _ = _run(tmp_path, budget_usd=1.0, model="unpriced-model")
    assert any(
        w.startswith("judge.budget_usd cannot be kept for unpriced-model: no price under judge.prices")
        for w in report["warnings"]
    )


def test_an_unpriced_judge_costs_unknown_never_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = _run(tmp_path, model="unpriced-model")
    assert code == 0
    suite = report["suite"]
    assert (suite["judge_cost_usd"], suite["cost_usd"]) == (None, None)
    assert suite["judge_cost_unknown"] == "no price for unpriced-model under judge.prices"
    assert all(c["judge"]["cost_usd"] is None for c in report["cases"])
    assert (
        report["warnings"].count(
            "judge cost unknown: no price for unpriced-model under judge.prices; set judge.prices.unpriced-model: "
            "{input_per_mtok: ..., output_per_mtok: ...} to count it"
        )
        == 1
    )
    footer = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert " · judge cost unknown</sub>" in footer and "$0.00" not in footer
    # Every output says unknown, never $0.00: the console's summary and the HTML report too.
    assert "  cost: judge cost unknown\n" in capsys.readouterr().out
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<span id="bill">judge cost unknown</span>' in page and "$0.00" not in page


def test_the_footer_gives_the_judges_cost_and_the_services(tmp_path: Path) -> None:
    code, report, _ = _run(tmp_path)
    judge_cost = report["suite"]["judge_cost_usd"]
    assert code == 0 and judge_cost > 0 and report["suite"]["service_cost_usd"] is None
    comment = (tmp_path / "c.md").read_text(encoding="utf-8")
    # Under a cent, to four places: a small bill that was spent never reads as $0.00.
    assert 0 < judge_cost < 0.01 and f" · judge ${judge_cost:.4f}</sub>" in comment
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f'judge: gpt-4o-mini · <span id="bill">judge ${judge_cost:.4f}</span>' in page


def test_a_budget_is_per_shard_and_the_merge_states_both(tmp_path: Path) -> None:
    replies = {c["question"]: answer("Refunds take 5 working days.", ["p1"], PASSAGES) for c in CASES}
    with RagServer(replies) as rag, FakeOpenAI(_judge) as fake:
        settings = {"cache": None, "concurrency": 1, "max_calls": 4}
        config = write_config(
            tmp_path, rag.url, fake.base_url, judge=settings, cases=CASES, suite={"pass_rate": ">= 0"}
        )
        for i in (1, 2):
            code = main(["run", "--config", str(config), "--shard", f"{i}/2", "--report", str(tmp_path / f"s{i}.json")])
            assert code == 0  # a shard never gates: `merge` does
            assert json.loads((tmp_path / f"s{i}.json").read_text(encoding="utf-8"))["verdict"] == "error"
        assert fake.call_count == 8  # four a shard: the budget is each shard's own
    merged_path = tmp_path / "merged.json"
    argv = ["merge", "--config", str(config), "--report", str(merged_path), str(tmp_path / "s1.json")]
    code = main([*argv, str(tmp_path / "s2.json")])
    report = json.loads(merged_path.read_text(encoding="utf-8"))
    assert (code, report["verdict"]) == (3, "error")
    assert [(b["shard"], b["max_calls"], b["calls"], b["exhausted"]) for b in report["suite"]["judge_budgets"]] == [
        ("shard 1/2", 4, 4, True),
        ("shard 2/2", 4, 4, True),
    ]
    first = len(json.loads((tmp_path / "s1.json").read_text(encoding="utf-8"))["cases"])
    assert report["error_reason"].startswith(
        f"shard 1/2: budget exhausted: 4 of 4 judge calls made (judge.max_calls) after 4 of {first} cases"
    )
    assert "; shard 2/2: budget exhausted: 4 of 4 judge calls made" in report["error_reason"]


def test_the_reason_names_the_ceiling_that_stopped_the_run(tmp_path: Path) -> None:
    # With both set, max_calls stopped it: the reason names that one, not the USD ceiling it never reached.
    code, report, fake = _run(tmp_path, max_calls=5, budget_usd=100.0)
    assert (code, fake.call_count) == (3, 5)
    assert report["error_reason"].startswith(
        "budget exhausted: 5 of 5 judge calls made (judge.max_calls) after 5 of 12 cases; 7 not judged are errors"
    )
