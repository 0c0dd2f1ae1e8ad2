"""`ragjudge cases generate --dry-run`: nothing asked, nothing written; the calls, tokens and cost a generation
would have, held against the real generation that follows (the real `openai` SDK against a loopback model that
counts a prompt's tokens as its characters / 4 and a reply's the same way)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragjudge.cli import main
from tests.cases.corpora import EQUAL, write_jsonl
from tests.fakes.corpus_model import CorpusModel
from tests.fakes.openai_server import FakeOpenAI, Reply

DAY = "2026-12-03"
ASKED = ("--n", "30", "--out-of-scope", "4", "--conversations", "2")


class Counted:
    """The corpus model, reporting usage as the documented estimate would count it."""

    def __init__(self) -> None:
        self.model = CorpusModel()
        self.prompt_tokens = 0
        self.reply_tokens = 0

    def __call__(self, body: dict[str, Any], call_index: int) -> Reply:
        content = self.model(body, call_index).content or ""
        usage = (sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4, len(content) // 4)
        self.prompt_tokens += usage[0]
        self.reply_tokens += usage[1]
        return Reply(content=content, usage=usage)


def _config(tmp_path: Path, base_url: str, **judge: Any) -> Path:
    settings = {
        "provider": "openai",
        "model": "fake-gen",
        "base_url": base_url,
        "api_key": "sk-test-gen",
        "cache": None,
        "prices": {"fake-gen": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        **judge,
    }
    path = tmp_path / "ragjudge.yml"
    path.write_text(yaml.safe_dump({"judge": settings}), encoding="utf-8")
    return path


def _generate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["cases", "generate", "--date", DAY, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_dry_run_asks_nothing_and_predicts_the_generation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_jsonl(tmp_path / "kb.jsonl", EQUAL)
    out = tmp_path / "cases.yaml"
    counted = Counted()
    with FakeOpenAI(responder=counted) as fake:
        argv = ("--corpus", str(corpus), *ASKED, "--out", str(out), "--config", str(_config(tmp_path, fake.base_url)))
        code, dry, err = _generate(capsys, *argv, "--dry-run")
        assert (code, err, fake.call_count, out.exists()) == (0, "", 0, False)  # nothing asked, nothing written
        code, real, err = _generate(capsys, *argv)
        assert (code, err) == (0, "")
        calls = fake.call_count
    lines = dry.splitlines()
    assert lines[:6] == [
        "ragjudge cases generate --dry-run: nothing was asked; what the generation would do:",
        "  cases asked for: 30 questions, 4 out of scope, 2 conversations",
        "  model calls (fake-gen):",
        "    first calls (one a document and kind): 16",
        "    corrective retries (a case that misfits, or too few given; one a call at most): 0 to 16",
        "  model calls in all: 16 to 32",
    ]
    # The calls exactly (this model never needs a retry); the tokens within the stated margin (a factor of 2).
    assert calls == 16
    found = re.search(r"tokens of the first calls: about (\d+) prompt \+ (\d+) reply \(an estimate", dry)
    assert found is not None
    prompt, reply = int(found.group(1)), int(found.group(2))
    assert counted.prompt_tokens / 2 <= prompt <= counted.prompt_tokens * 2, (prompt, counted.prompt_tokens)
    assert counted.reply_tokens / 2 <= reply <= counted.reply_tokens * 2, (reply, counted.reply_tokens)
    cost = re.search(r"cost \(estimate, at judge\.prices\): \$([\d.]+) to \$([\d.]+)", dry)
    spent = re.search(r"model calls: 16, cost \$([\d.]+)", real)
    assert cost is not None and spent is not None
    low, high, actual = float(cost.group(1)), float(cost.group(2)), float(spent.group(1))
    assert low / 2 <= actual <= low * 2 and high > low, (low, high, actual)


def test_a_dry_run_of_an_unpriced_model_says_unknown_never_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = write_jsonl(tmp_path / "kb.jsonl", EQUAL)
    config = _config(tmp_path, "http://127.0.0.1:9/v1", model="unpriced-gen", max_calls=20, budget_usd=1.5)
    argv = ("--corpus", str(corpus), "--n", "10", "--out", str(tmp_path / "c.yaml"), "--config", str(config))
    code, out, err = _generate(capsys, *argv, "--dry-run")
    assert (code, err) == (0, "")
    assert out.splitlines()[-2:] == [
        "  cost: unknown (no price for unpriced-gen under judge.prices; set judge.prices.unpriced-gen: "
        "{input_per_mtok: ..., output_per_mtok: ...} to count it)",
        "  ceiling: judge.max_calls 20 and judge.budget_usd $1.50 (a call that would pass it is not made)",
    ]
    assert "$0.00" not in out


def test_a_dry_run_refuses_what_a_generation_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "kb.jsonl"
    corpus.write_text('{"id": "a", "title": "A", "text": "Refunds take five days."}\n[1, 2]\n', encoding="utf-8")
    with FakeOpenAI(responder=Counted()) as fake:
        config = str(_config(tmp_path, fake.base_url))
        argv = ("--corpus", str(corpus), "--n", "3", "--out", str(tmp_path / "c.yaml"), "--config", config)
        dry = _generate(capsys, *argv, "--dry-run")
        real = _generate(capsys, *argv)
        assert fake.call_count == 0
    assert dry[0] == real[0] == 2
    assert dry[2] == real[2] and f"{corpus}:2" in dry[2]
    offline = tmp_path / "offline.yml"
    offline.write_text(yaml.safe_dump({"judge": {"provider": "offline"}}), encoding="utf-8")
    code, _, err = _generate(capsys, "--corpus", "example", "--n", "3", "--out", "c.yaml", "--config", str(offline))
    assert code == 2 and "the offline judge cannot generate" in err
    code, _, err = _generate(
        capsys, "--corpus", "example", "--n", "3", "--out", "c.yaml", "--config", str(offline), "--dry-run"
    )
    assert code == 2 and "the offline judge cannot generate" in err
