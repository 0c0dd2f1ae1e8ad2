"""`cases generate` keeps one budget a generation (`judge.max_calls`, `judge.budget_usd`, or `--max-calls`,
`--budget-usd`): a call that would pass it is not made, the cases generated before are written, the rest are
named as not generated, exit 3. Through the real `openai` SDK against a loopback model that reports its usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cases.caseset import load_cases
from ragjudge.cli import main
from tests.cases.corpora import EQUAL, write_jsonl
from tests.fakes.corpus_model import CorpusModel
from tests.fakes.openai_server import FakeOpenAI, Reply

DAY = "2026-12-03"
USAGE = (100_000, 20_000)
"""Each call's reported tokens: $0.14 at $1 and $2 a million."""
TIP = (
    "Tip: the cases generated are written; raise --max-calls or --budget-usd (judge.max_calls, judge.budget_usd) "
    "and rerun for the rest (`--dry-run` says what it would take)"
)


def _priced(model: CorpusModel) -> Any:
    def responder(body: dict[str, Any], call_index: int) -> Reply:
        return Reply(content=model(body, call_index).content, usage=USAGE)

    return responder


def _generate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str, **judge: Any
) -> tuple[int, str, str, int, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    corpus = write_jsonl(tmp_path / "kb.jsonl", EQUAL)
    out = tmp_path / "cases.yaml"
    with FakeOpenAI(responder=_priced(CorpusModel())) as fake:
        settings = {
            "provider": "openai",
            "model": "fake-gen",
            "base_url": fake.base_url,
            "api_key": "sk-test-gen",
            "cache": None,
            "concurrency": 1,  # one call at a time: which documents came first is the plan's order
            "prices": {"fake-gen": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
            **judge,
        }
        config = tmp_path / "ragjudge.yml"
        config.write_text(yaml.safe_dump({"judge": settings}), encoding="utf-8")
        argv = ("--corpus", str(corpus), "--n", "10", "--out", str(out), "--config", str(config), *argv)
        code = main(["cases", "generate", "--date", DAY, *argv])
        calls = fake.call_count
    stdout, err = capsys.readouterr()
    return code, stdout, err, calls, out


def _ids(docs: list[dict[str, str]]) -> str:
    return ", ".join(f"{d['id']} 1" for d in docs)


def test_max_calls_stops_the_generation_loudly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err, calls, out = _generate(tmp_path, capsys, max_calls=5)
    assert (code, calls) == (3, 5)  # the sixth call was never made
    assert err.splitlines() == [
        "ragjudge: error: budget exhausted: 5 of 5 judge calls made (judge.max_calls) after 5 model call(s); "
        f"5 case(s) not generated ({_ids(EQUAL[5:])})",
        TIP,
    ]
    # What came is written; the rest is named, never silently dropped.
    assert [c.golden_context_ids[0] for c in load_cases([out]).cases] == [d["id"] for d in EQUAL[:5]]
    lines = stdout.splitlines()
    assert lines[1] == "dropped 5: not generated (budget exhausted) 5"
    assert [line for line in lines if "not generated (budget exhausted): " in line] == [
        f"  {d['id']}: not generated (budget exhausted): budget exhausted: 5 of 5 judge calls made (judge.max_calls)"
        for d in EQUAL[5:]
    ]
    assert "model calls: 5, cost $0.7000" in lines


def test_budget_usd_stops_it_part_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # $0.14 a call: the fourth would pass $0.50 (the mean of those made is the next one's estimate).
    code, _, err, calls, out = _generate(tmp_path, capsys, budget_usd=0.5)
    assert (code, calls) == (3, 3)
    assert err.splitlines()[0] == (
        "ragjudge: error: budget exhausted: $0.42 of $0.50 spent (judge.budget_usd) after 3 model call(s); "
        f"7 case(s) not generated ({_ids(EQUAL[3:])})"
    )
    assert len(load_cases([out]).cases) == 3


def test_the_flags_override_the_config_and_a_refusal_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err, calls, _ = _generate(tmp_path, capsys, "--max-calls", "2", max_calls=100, budget_usd=100.0)
    assert (code, calls) == (3, 2)
    assert err.startswith("ragjudge: error: budget exhausted: 2 of 2 judge calls made (--max-calls)")
    code, _, err, calls, _ = _generate(tmp_path / "usd", capsys, "--budget-usd", "0.2", budget_usd=100.0)
    assert (code, calls) == (3, 1)
    assert err.startswith("ragjudge: error: budget exhausted: $0.14 of $0.20 spent (--budget-usd)")


def test_a_budget_kept_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err, calls, out = _generate(tmp_path, capsys, "--max-calls", "10", "--budget-usd", "2")
    assert (code, err, calls) == (0, "", 10)
    assert len(load_cases([out]).cases) == 10
    assert "model calls: 10, cost $1.4000" in stdout.splitlines()


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--max-calls", "0", "argument --max-calls: 0 is not above 0"),
        ("--max-calls", "2.5", "argument --max-calls: '2.5' is not a whole number"),
        ("--budget-usd", "-1", "argument --budget-usd: -1 is not above 0"),
        ("--budget-usd", "lots", "argument --budget-usd: 'lots' is not a number"),
    ],
)
def test_a_bad_ceiling_is_exit_2_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    code, _, err, calls, out = _generate(tmp_path, capsys, flag, value)
    assert (code, calls, out.exists()) == (2, 0, False)
    assert err.splitlines()[-1] == f"ragjudge: error: {message}"
