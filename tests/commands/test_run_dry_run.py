"""`ragjudge run --dry-run`: nothing asked, the calls and the cost a run would have, held against the real run that
follows (the real `openai` SDK against a loopback judge that counts a prompt's tokens as its characters / 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragjudge.cli import main
from tests.commands.test_run_openai import ENV_KEY, write_config
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rag import RagServer, answer
from tests.judge.openai_helpers import KEY, PASSAGES, claim, claims_json, merged, rubric_json

ANSWER = "Refunds take 5 working days once the warehouse has the item back; card refunds can take longer."
CASES = [{"id": f"c{i:02d}", "question": f"How long do refunds take for order {i}?"} for i in range(8)]


def _judge(body: dict[str, Any], call_index: int) -> Reply:
    chars = sum(len(str(m.get("content", ""))) for m in body["messages"])
    claims = Reply(content=claims_json(claim("Refunds take 5 working days.", True, "p1")))
    reply = merged(lambda _b, _i: Reply(content=rubric_json()), lambda _b, _i: claims)(body, call_index)
    return Reply(content=reply.content, usage=(chars // 4, 120))


def _citing_judge(body: dict[str, Any], call_index: int) -> Reply:
    """`_judge`, its claim citing the first passage the prompt shows (none shown: an unsupported claim)."""
    user = str(body["messages"][-1]["content"])
    shown = re.search(r"^\[([^\]]+)\]", user, re.MULTILINE)
    cited = claim("The answer's claim.", shown is not None, shown.group(1) if shown else None)
    reply = merged(lambda _b, _i: Reply(content=rubric_json()), lambda _b, _i: Reply(content=claims_json(cited)))
    chars = sum(len(str(m.get("content", ""))) for m in body["messages"])
    return Reply(content=reply(body, call_index).content, usage=(chars // 4, 120))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, KEY)


def _config(folder: Path, rag: RagServer, fake: FakeOpenAI, **judge: Any) -> Path:
    settings = {"cache": None, **judge}
    return write_config(folder, rag.url, fake.base_url, judge=settings, cases=CASES, suite={"pass_rate": ">= 0"})


def test_a_dry_run_asks_nothing_and_predicts_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies = {c["question"]: answer(ANSWER, ["p1", "p2"], PASSAGES) for c in CASES}
    with RagServer(replies) as rag, FakeOpenAI(_judge) as fake:
        config = _config(tmp_path, rag, fake)
        assert main(["run", "--config", str(config), "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert (rag.seen, fake.call_count) == ([], 0)  # nothing was asked
        assert main(["run", "--config", str(config), "--report", str(tmp_path / "r.json")]) == 0
        capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    lines = out.splitlines()
    assert lines[:5] == [
        "ragjudge run --dry-run: nothing was asked; what the run would do:",
        "  cases: 8",
        "  endpoint calls: 8",
        "  judge calls (gpt-4o-mini):",
        "    first judgements (rubric, claims, reference and criteria): 8",
    ]
    # The calls exactly (every reply valid: none asked again); the tokens within the stated margin (a factor of 2).
    assert "    asked again for an invalid judge reply (once a call at most): 0 to 8" in lines
    assert "  judge calls in all: 8 to 16" in lines and report["suite"]["judge_calls"] == 8
    found = re.search(r"tokens a first judgement: about (\d+) prompt", out)
    assert found is not None
    estimated = int(found.group(1))
    actual = (report["suite"]["judge_tokens"] - 8 * 120) / 8
    assert actual / 2 <= estimated <= actual * 2, (estimated, actual)
    cost = re.search(r"judge cost \(estimate, at judge\.prices\): \$([\d.]+) to \$([\d.]+)", out)
    assert cost is not None and float(cost.group(2)) == pytest.approx(2 * float(cost.group(1)))
    assert float(cost.group(1)) / 2 <= report["suite"]["judge_cost_usd"] <= float(cost.group(1)) * 2


def test_a_dry_run_gives_the_worst_case_of_what_depends_on_replies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = {c["question"]: answer(ANSWER, ["p1"], PASSAGES) for c in CASES}
    with RagServer(replies) as rag, FakeOpenAI(_judge) as fake:
        config = _config(tmp_path, rag, fake, rejudge=8, consistency_sample=3, model="unpriced-model")
        code = main(["run", "--config", str(config), "--dry-run", "--repeat", "3/2", "--baseline", "main.json"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[2] == "  endpoint calls: 8 (up to 24 with repeats)"
    assert out[4:10] == [
        "    first judgements (rubric, claims, reference and criteria): 8",
        "    repeats (up to 3 runs a failing case): 0 to 16",
        "    rejudges (judge.rejudge 8; the consistency sample at least): 3 to 64",
        "    pairwise against the baseline (4 round(s) of 2 orders at most): 0 to 64",
        "    asked again for an invalid judge reply (once a call at most): 0 to 152",
        "  judge calls in all: 11 to 304",
    ]
    assert out[-1] == "  judge cost: unknown (no price for unpriced-model under judge.prices)"


def test_a_dry_run_with_the_offline_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies = {c["question"]: answer(ANSWER, ["p1"], PASSAGES) for c in CASES}
    with RagServer(replies) as rag, FakeOpenAI(_judge) as fake:
        config = _config(tmp_path, rag, fake, provider="offline")
        assert main(["run", "--config", str(config), "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "  judge calls: none (the offline judge asks no model)"


def test_a_dry_run_refuses_what_a_run_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A regression rule naming a criterion nothing defines is exit 2 before any call, in a dry run as in a run.
    import yaml

    replies = {c["question"]: answer(ANSWER, ["p1"], PASSAGES) for c in CASES}
    with RagServer(replies) as rag, FakeOpenAI(_judge) as fake:
        config = _config(tmp_path, rag, fake)
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["gate"]["regression"] = {"criteria.nope_delta": ">= -0.5"}
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        assert main(["run", "--config", str(config), "--dry-run"]) == 2
        assert main(["run", "--config", str(config)]) == 2
        assert (rag.seen, fake.call_count) == ([], 0)
    assert "criteria.nope" in capsys.readouterr().err


def test_on_the_example_service_a_dry_run_predicts_the_calls_exactly_and_the_tokens_within_the_margin(
    tmp_path: Path, example_rag_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42's done-when, on the example service and its 43 cases, with a priced loopback model judge."""
    import yaml

    examples = Path(__file__).resolve().parents[2] / "examples"
    config = yaml.safe_load((examples / "ragjudge.yml").read_text(encoding="utf-8"))
    config["endpoint"]["url"] = example_rag_url
    config["cases"] = [str(examples / "cases" / "anchors.yaml")]
    config["judge"] = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "api_key": "${" + ENV_KEY + "}",
        "cache": None,
        "prices": {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}},
        # The loopback judge answers the rubric and the claims; a reference verdict it cannot give would be an
        # invalid reply asked again (the plan's range covers that: see the line it prints).
        "reference": False,
    }
    with FakeOpenAI(_citing_judge) as fake:
        config["judge"]["base_url"] = fake.base_url
        path = tmp_path / "ragjudge.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        assert main(["run", "--config", str(path), "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert fake.call_count == 0
        main(["run", "--config", str(path), "--report", str(tmp_path / "r.json")])
        capsys.readouterr()
        calls = fake.call_count
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    planned = re.search(r"first judgements \(rubric, claims, reference and criteria\): (\d+)\n", out)
    assert planned is not None and int(planned.group(1)) == calls == report["suite"]["judge_calls"] == 43
    assert "  judge calls in all: 43 to 86\n" in out
    found = re.search(r"tokens a first judgement: about (\d+) prompt", out)
    assert found is not None
    estimated = int(found.group(1))
    actual = (report["suite"]["judge_tokens"] - calls * 120) / calls
    assert actual / 2 <= estimated <= actual * 2, (estimated, actual)
    cost = re.search(r"judge cost \(estimate, at judge\.prices\): \$([\d.]+) to \$([\d.]+)", out)
    assert cost is not None
    assert float(cost.group(1)) / 2 <= report["suite"]["judge_cost_usd"] <= float(cost.group(2)) * 2
