"""Asking a model judge for a reply that validates: cache, one corrective retry, usage, and the log line.

Shared by every model judge (rubric, faithfulness, evidence), so that each is
cached, retried and logged the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ragjudge import masking
from ragjudge.config.judge_config import JudgeConfig
from ragjudge.judge import budget
from ragjudge.judge.cache import JudgeCache, cache_key
from ragjudge.judge.chat import CallFailed, ChatCaller, Completion, Target
from ragjudge.judge.interface import LogFn, host_of
from ragjudge.judge.prompting import Message, correction_message
from ragjudge.judge.replies import ReplyError, ignored_keys
from ragjudge.metrics.names import LATENCY_MS

MAX_QUOTED_CHARS = 2000
"""The corrective retry quotes at most this much of the invalid reply (and of the error about it)."""
_RERUN: ContextVar[int] = ContextVar("ragjudge_judge_rerun", default=0)
# A re-run's samples take seeds past every first-run sample (judge.samples is at most 15).
_RERUN_SEED_STRIDE = 100


@contextmanager
def fresh_samples(rerun: int) -> Iterator[None]:
    """Judge calls made inside are re-run `rerun` (>= 1) of a case: fresh samples, not the first one's.

    A repeated or rejudged case must get a new judgement, or it would only replay the first verdict: the sample's
    seed is offset, so a seeded judge does not return the first reply again, and the cache keeps it under its own
    name. So a judgement is one vote whichever cache answered it: the same PR run again replays each sample's very
    reply rather than drawing new ones (`gate.votes`).
    """
    token = _RERUN.set(rerun)
    try:
        yield
    finally:
        _RERUN.reset(token)


@dataclass
class Tally:
    """Usage of one judgement, summed over its calls."""

    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    cache_hits: int = 0
    notes: list[str] = field(default_factory=list)
    escalation_calls: int = 0
    escalation_tokens: int = 0
    escalation_cost: float = 0.0
    """Of the above, what the escalation model's calls used (the bill shows escalation apart)."""


class Asker:
    """Validated replies from a `ChatCaller`; thread-safe."""

    def __init__(
        self, config: JudgeConfig, caller: ChatCaller, cache: JudgeCache, spend: budget.Budget | None = None
    ) -> None:
        self.config = config
        self.caller = caller
        self.cache = cache
        self.spend = spend
        """This asker's own budget (a canary's, a generation's): `ragjudge serve` runs canaries side by side, so
        theirs cannot be the process-wide one `budget.running` sets for a gate run. None: that one, if any."""

    def ask(
        self,
        target: Target,
        kind: str,
        messages: list[Message],
        schema: dict[str, Any],
        parse: Callable[[str], Any],
        sample: int,
        log: LogFn,
        tally: Tally,
        label: str = "judge",
    ) -> Any:
        """A validated parse of the judge's reply; raises CallFailed with the reason otherwise.

        The messages are masked first: an endpoint that echoes a secret in its answer must not
        get it forwarded to a third-party judge.
        """
        messages = [{**m, "content": masking.mask(m["content"])} for m in messages]
        rerun = _RERUN.get()
        sample += rerun * _RERUN_SEED_STRIDE
        key_parts = {
            "base_url": target.base_url or "",
            "model": target.model,
            "kind": kind,
            "messages": messages,
            "schema": schema,
            "temperature": self.config.temperature,
            "seed": self.config.seed,
            "sample": sample,
        }
        key = cache_key(key_parts)
        hit = self.cache.get(key)
        if hit is not None and isinstance(hit.get("content"), str):
            try:
                parsed = parse(hit["content"])
            except ReplyError:
                parsed = None
            if parsed is not None:
                tally.cache_hits += 1
                self._log(log, target, kind, messages, hit["content"], parsed, None, None, sample, True)
                return parsed
        convo = list(messages)
        error = ""
        spend = self.spend if self.spend is not None else budget.current()
        for _ in range(2):
            if spend is not None:
                refused = spend.admit(target.model, sum(len(m["content"]) for m in convo))
                if refused is not None:  # a call that would pass the run's ceiling is not made, nor any after it
                    raise CallFailed(refused, fatal=True)
            try:
                completion = self.caller.complete(target, convo, schema, sample)
            except CallFailed:
                if spend is not None:
                    spend.charge(0.0)  # no usage came back: the call is no longer in flight
                raise
            cost = self._price(target.model, completion)
            tally.calls += 1
            tally.tokens += completion.prompt_tokens + completion.completion_tokens
            tally.cost += cost
            if target.escalation:
                tally.escalation_calls += 1
                tally.escalation_tokens += completion.prompt_tokens + completion.completion_tokens
                tally.escalation_cost += cost
            if spend is not None:
                spend.charge(cost)
            try:
                if completion.finish_reason == "length":
                    raise ReplyError("the reply was truncated (finish_reason=length)")
                parsed = parse(completion.content)
            except ReplyError as exc:
                error = str(exc)
                self._log(log, target, kind, convo, completion.content, None, error, completion, sample, False)
                # A 20 MB invalid reply quoted back whole made 120 MB logs: quote its start only.
                convo = [
                    *convo,
                    {"role": "assistant", "content": _clip(completion.content)},
                    correction_message(_clip(error)),
                ]
                continue
            self._log(log, target, kind, convo, completion.content, parsed, None, completion, sample, False, schema)
            self.cache.put(key, {"content": completion.content, "model": target.model, "kind": kind})
            return parsed
        raise CallFailed(f"{label} reply invalid after 2 attempts: {_clip(error)}")

    def _price(self, model: str, c: Completion) -> float:
        price = self.config.prices.get(model)
        if price is None:
            return 0.0
        return float(c.prompt_tokens * price.input_per_mtok + c.completion_tokens * price.output_per_mtok) / 1e6

    def _log(
        self,
        log: LogFn,
        target: Target,
        kind: str,
        messages: list[Message],
        raw: str,
        parsed: Any,
        error: str | None,
        completion: Completion | None,
        sample: int,
        cache_hit: bool,
        schema: dict[str, Any] | None = None,
    ) -> None:
        ignored = ignored_keys(raw, schema) if schema is not None and parsed is not None else []
        log(
            {
                "judge_kind": kind,
                "model": target.model,
                "base_url_host": host_of(target.base_url),
                "sample": sample,
                "messages": messages,
                "raw_reply": raw,
                "parsed": _jsonable(parsed),
                "validation_error": error,
                "tokens": (
                    {"prompt": completion.prompt_tokens, "completion": completion.completion_tokens}
                    if completion
                    else {"prompt": 0, "completion": 0}
                ),
                LATENCY_MS: completion.latency_ms if completion else 0.0,
                "finish_reason": completion.finish_reason if completion else None,
                "response_format": completion.mode if completion else None,
                "cache_hit": cache_hit,
                # Keys the judge added that nobody asked for: ignored, not held against the reply.
                **({"ignored_keys": ignored} if ignored else {}),
            }
        )


def _clip(text: str) -> str:
    if len(text) <= MAX_QUOTED_CHARS:
        return text
    return text[:MAX_QUOTED_CHARS] + f"… [{len(text) - MAX_QUOTED_CHARS} more characters not shown]"


def _jsonable(parsed: Any) -> Any:
    if parsed is None:
        return None
    if isinstance(parsed, tuple):
        return [_jsonable(p) for p in parsed]
    if isinstance(parsed, list):
        return [p.model_dump() if hasattr(p, "model_dump") else p for p in parsed]
    if hasattr(parsed, "as_dict"):  # a value of ours, e.g. a ReferencePoint
        return parsed.as_dict()
    return parsed
