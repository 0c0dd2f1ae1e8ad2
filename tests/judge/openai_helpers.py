"""Helpers for the model-judge tests: reply builders, a responder that answers per judge kind, a judge factory.

Every judge built here talks to a `FakeOpenAI` on loopback through the real `openai` SDK.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge.interface import RUBRIC_DIMENSIONS
from ragjudge.judge.openai_judge import ChatCaller, OpenAIJudge
from ragjudge.rules import Rule
from tests.fakes.openai_server import FakeOpenAI, Reply, Responder

KEY = "sk-test-9f3Kq7ZpLeakCanary0042"
"""The API key every test judge uses; it must never show up in any output."""

P1_TEXT = "Refunds are paid back to the original card within 5 working days."
P2_TEXT = "Shipping is free for orders over 99 yuan; returns are shipped at the buyer's cost."
PASSAGES = {"p1": P1_TEXT, "p2": P2_TEXT}


def rubric_json(
    scores: dict[str, Any] | None = None,
    reasons: dict[str, Any] | None = None,
    dims: Sequence[str] = RUBRIC_DIMENSIONS,
    default: int = 4,
) -> str:
    """A rubric reply: every dimension in `dims` at `default`, overridden by `scores`/`reasons`."""
    all_scores: dict[str, Any] = {d: default for d in dims}
    all_scores.update(scores or {})
    all_reasons: dict[str, Any] = {d: f"{d}: fine" for d in dims}
    all_reasons.update(reasons or {})
    return json.dumps({"scores": all_scores, "reasoning": all_reasons}, ensure_ascii=False)


def claim(
    text: str, supported: Any = True, evidence_id: str | None = "p1", reason: str = "stated in p1"
) -> dict[str, Any]:
    return {"claim": text, "supported": supported, "evidence_id": evidence_id, "reason": reason}


def claims_json(*claims: dict[str, Any]) -> str:
    return json.dumps({"claims": list(claims)}, ensure_ascii=False)


def kind_of(body: dict[str, Any]) -> str:
    """Which judge a chat request is for: `rubric`, `negative`, `faithfulness` or `combined` (by its system prompt)."""
    system = body["messages"][0]["content"]
    if system.startswith("You are a strict auditor"):
        return "faithfulness"
    if system.startswith("You judge one answer"):
        return "combined"
    if "do NOT cover" in system:
        return "negative"
    assert system.startswith("You grade one answer"), system[:80]
    return "rubric"


def user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][1]["content"])


def _responder(r: Reply | Responder) -> Responder:
    if isinstance(r, Reply):
        reply = r
        return lambda body, i: copy.deepcopy(reply)
    return r


GOOD_RUBRIC = Reply(content=rubric_json())
GOOD_CLAIMS = Reply(content=claims_json(claim("Refunds take 5 working days.")))


def is_negative(body: dict[str, Any]) -> bool:
    """A request for the negative rubric (out-of-scope case), separate or combined."""
    return "do NOT cover" in str(body["messages"][0]["content"])


def merged(rubric: Responder, faithfulness: Responder, negative: Responder | None = None) -> Responder:
    """Answers a combined request with the rubric reply and the claims reply merged into one object.

    A reply that is not a 200 with a JSON object (an error, prose, a truncation) is returned as it
    is, so that what breaks a separate reply breaks the combined one too.
    """

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        first = (negative if negative is not None and is_negative(body) else rubric)(body, call_index)
        second = faithfulness(body, call_index)
        parts = []
        for reply in (first, second):
            try:
                part = json.loads(reply.content or "")
            except ValueError:
                return reply
            if reply.status != 200 or reply.finish_reason != "stop" or not isinstance(part, dict):
                return reply
            parts.append(part)
        return Reply(content=json.dumps({**parts[0], **parts[1]}, ensure_ascii=False))

    return responder


def by_kind(
    rubric: Reply | Responder = GOOD_RUBRIC,
    faithfulness: Reply | Responder = GOOD_CLAIMS,
    negative: Reply | Responder | None = None,
    combined: Reply | Responder | None = None,
) -> Responder:
    """Answer each judge kind with its own Reply or Responder (a queue keeps its own count per kind).

    A combined request gets `combined`, or else the rubric (or negative) and claims replies merged.
    """
    table = {
        "rubric": _responder(rubric),
        "faithfulness": _responder(faithfulness),
        "negative": _responder(negative or Reply(content=rubric_json(dims=("grounding", "calibration"), default=5))),
    }
    table["combined"] = (
        _responder(combined)
        if combined is not None
        else merged(table["rubric"], table["faithfulness"], table["negative"])
    )

    def responder(body: dict[str, Any], call_index: int) -> Reply:
        return table[kind_of(body)](body, call_index)

    return responder


def kinds(fake: FakeOpenAI) -> list[str]:
    return [kind_of(b) for b in fake.bodies]


class Sleeps:
    """Stands in for time.sleep in ChatCaller: records each delay, waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def judge_config(base_url: str, cache: Path | None, **overrides: Any) -> JudgeConfig:
    """A model judge on `base_url`. Separate calls unless `combined=True` is passed: most judge tests
    check one judgement at a time; tests/judge/test_combined.py covers the default, combined call."""
    values: dict[str, Any] = {
        "combined": False,
        "provider": "openai",
        "base_url": base_url,
        "api_key": KEY,
        "cache": cache,
        "max_retries": 2,
        "timeout_s": 10,
    }
    values.update(overrides)
    return JudgeConfig(**values)


def make_judge(
    fake: FakeOpenAI,
    cache: Path | None,
    rules: Iterable[Rule] = (),
    sleep: Callable[[float], None] | None = None,
    caller: type[ChatCaller] = ChatCaller,
    **overrides: Any,
) -> OpenAIJudge:
    config = judge_config(fake.base_url, cache, **overrides)
    return OpenAIJudge(config, list(rules), caller=caller(config, sleep=sleep or Sleeps()))


class LogSink:
    """Collects what the judge logs (the `log` argument of `judge()`)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __call__(self, fields: dict[str, Any]) -> None:
        self.lines.append(json.loads(json.dumps(fields, default=str)))
