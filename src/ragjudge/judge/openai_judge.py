"""The model judge: rubric and claim-level faithfulness through any OpenAI-compatible server.

A reply is validated before it is believed. One that fails is asked once more
with the validation error appended; if it still fails, the judgement is
unscored with the reason. Never 0, NaN or a pass.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai

from ragjudge.cases import Case
from ragjudge.config import JudgeConfig
from ragjudge.endpoint.client import MAX_RETRY_AFTER_S, parse_retry_after
from ragjudge.endpoint.trace import Trace
from ragjudge.errors import ConfigError
from ragjudge.judge.cache import JudgeCache, cache_key
from ragjudge.judge.interface import Claim, Judgement, LogFn, Unscored, host_of
from ragjudge.judge.prompting import (
    Message,
    correction_message,
    faithfulness_messages,
    rubric_messages,
    rubric_plan,
)
from ragjudge.judge.replies import ReplyError, parse_claims, parse_rubric, response_format
from ragjudge.rules import Rule

MODES = ("json_schema", "json_object", "prompt")


class CallFailed(Exception):
    """A judge call that could not be completed; `fatal` stops every later call too."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal


@dataclass
class Throttle:
    """One pause shared by the whole pool: a 429 slows every call, not just the one that got it."""

    _until: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self) -> None:
        while True:
            with self._lock:
                delay = self._until - time.monotonic()
            if delay <= 0:
                return
            time.sleep(min(delay, 1.0))

    def pause(self, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, time.monotonic() + seconds)


@dataclass(frozen=True)
class Completion:
    content: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    cached: bool
    mode: str


@dataclass(frozen=True)
class Target:
    """Where a judge kind is sent: a model at a base URL."""

    model: str
    base_url: str | None


class ChatCaller:
    """Chat completions with transport retries, response-format fallback and the shared throttle."""

    def __init__(self, config: JudgeConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        api_key = config.api_key.get_secret_value() if config.api_key else None
        if not api_key:
            raise ConfigError(
                "judge.api_key is not set for judge.provider: openai",
                tip="set judge.api_key: ${OPENAI_API_KEY} and export the key (or use provider: offline)",
            )
        self._api_key = api_key
        self._clients: dict[str | None, openai.OpenAI] = {}
        self._lock = threading.Lock()
        self._modes: dict[tuple[str | None, str], int] = {}
        self._no_seed: set[tuple[str | None, str]] = set()
        self._fatal: str | None = None
        self.throttle = Throttle()
        self._sleep = sleep

    def client(self, base_url: str | None) -> openai.OpenAI:
        with self._lock:
            if base_url not in self._clients:
                self._clients[base_url] = openai.OpenAI(
                    api_key=self._api_key, base_url=base_url or None, timeout=self.config.timeout_s, max_retries=0
                )
            return self._clients[base_url]

    def mode(self, target: Target) -> str:
        with self._lock:
            return MODES[self._modes.get((target.base_url, target.model), 0)]

    def _downgrade(self, target: Target, tried: str) -> bool:
        """Fall back past `tried`; False when there is nothing left to fall back to."""
        with self._lock:
            key = (target.base_url, target.model)
            current = self._modes.get(key, 0)
            if MODES[current] != tried:
                return True  # another thread has already moved on
            if current + 1 >= len(MODES):
                return False
            self._modes[key] = current + 1
            return True

    def complete(self, target: Target, messages: list[Message], schema: dict[str, Any], sample: int = 0) -> Completion:
        """One completion; `sample` offsets the seed, so that n samples are not n copies of one reply."""
        if self._fatal:
            raise CallFailed(self._fatal, fatal=True)
        attempts = self.config.max_retries + 1
        attempt = 0
        while True:
            attempt += 1
            mode = self.mode(target)
            kwargs: dict[str, Any] = {
                "model": target.model,
                "messages": messages,
                "temperature": self.config.temperature,
            }
            if self.config.seed is not None and (target.base_url, target.model) not in self._no_seed:
                kwargs["seed"] = self.config.seed + sample
            if mode == "json_schema":
                kwargs["response_format"] = schema
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            self.throttle.wait()
            started = time.monotonic()
            try:
                reply = self.client(target.base_url).chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                text = str(exc).lower()
                rejects_format = "response_format" in text or "json" in text
                if "response_format" in kwargs and rejects_format and self._downgrade(target, mode):
                    attempt -= 1  # a format fallback is not a transport retry
                    continue
                if "seed" in kwargs and "seed" in text:
                    with self._lock:
                        self._no_seed.add((target.base_url, target.model))
                    attempt -= 1
                    continue
                raise CallFailed(f"judge call rejected: HTTP 400: {self._said(exc)}") from None
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                self._fatal = (
                    f"judge call failed: HTTP {exc.status_code} ({self._said(exc)}); check judge.api_key and "
                    "judge.base_url"
                )
                raise CallFailed(self._fatal, fatal=True) from None
            except openai.RateLimitError as exc:
                if _code(exc) == "insufficient_quota":
                    self._fatal = "judge call failed: insufficient_quota (the account has no credit left)"
                    raise CallFailed(self._fatal, fatal=True) from None
                wait = parse_retry_after(exc.response.headers.get("retry-after"))
                delay = min(MAX_RETRY_AFTER_S, wait if wait is not None else self._backoff(attempt))
                self.throttle.pause(delay)
                if attempt >= attempts:
                    raise CallFailed(f"judge call failed: HTTP 429 after {attempt} attempts") from None
                continue
            except openai.APIStatusError as exc:
                if exc.status_code < 500 or attempt >= attempts:
                    raise CallFailed(
                        f"judge call failed: HTTP {exc.status_code} after {attempt} attempt{'s' if attempt > 1 else ''}"
                    ) from None
                wait = parse_retry_after(exc.response.headers.get("retry-after"))
                self._sleep(min(MAX_RETRY_AFTER_S, wait if wait is not None else self._backoff(attempt)))
                continue
            except openai.APITimeoutError:
                if attempt >= attempts:
                    raise CallFailed(
                        f"judge call failed: timeout after {self.config.timeout_s:g} s ({attempt} attempts)"
                    ) from None
                self._sleep(self._backoff(attempt))
                continue
            except openai.APIConnectionError:
                if attempt >= attempts:
                    raise CallFailed(f"judge call failed: cannot connect to {host_of(target.base_url)}") from None
                self._sleep(self._backoff(attempt))
                continue
            latency = (time.monotonic() - started) * 1000
            if not reply.choices:
                raise CallFailed("judge reply had no choices")
            choice = reply.choices[0]
            usage = reply.usage
            return Completion(
                content=choice.message.content or "",
                finish_reason=choice.finish_reason,
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                latency_ms=round(latency, 1),
                cached=False,
                mode=mode,
            )

    def _said(self, exc: openai.APIStatusError) -> str:
        """What the server said, trimmed, without the key: some proxies echo the key they were sent."""
        return _message(exc).replace(self._api_key, "***")[:200]

    @staticmethod
    def _backoff(attempt: int) -> float:
        return min(8.0, 0.5 * 2.0 ** (attempt - 1))


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return exc.message


def _code(exc: openai.APIStatusError) -> str | None:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("code") or inner.get("type") or "") or None
    return None


@dataclass
class _Tally:
    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    cache_hits: int = 0


class OpenAIJudge:
    """Rubric + faithfulness judges over the `openai` SDK; thread-safe."""

    lexical = False

    def __init__(self, config: JudgeConfig, rules: Sequence[Rule] = (), caller: ChatCaller | None = None) -> None:
        self.config = config
        self.name = config.model
        self.rules = list(rules)
        self.caller = caller or ChatCaller(config)
        self.cache = JudgeCache(config.cache)
        self.primary = Target(config.model, config.base_url)
        esc = config.escalate
        self.escalate = Target(esc.model, esc.base_url or config.base_url) if esc else None

    # ---------------------------------------------------------------- one call
    def _ask(
        self,
        target: Target,
        kind: str,
        messages: list[Message],
        schema: dict[str, Any],
        parse: Callable[[str], Any],
        sample: int,
        log: LogFn,
        tally: _Tally,
    ) -> Any:
        """A validated parse of the judge's reply; raises CallFailed with the reason otherwise."""
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
        for _ in range(2):
            completion = self.caller.complete(target, convo, schema, sample)
            tally.calls += 1
            tally.tokens += completion.prompt_tokens + completion.completion_tokens
            tally.cost += self._price(target.model, completion)
            try:
                if completion.finish_reason == "length":
                    raise ReplyError("the reply was truncated (finish_reason=length)")
                parsed = parse(completion.content)
            except ReplyError as exc:
                error = str(exc)
                self._log(log, target, kind, convo, completion.content, None, error, completion, sample, False)
                convo = [*convo, {"role": "assistant", "content": completion.content}, correction_message(error)]
                continue
            self._log(log, target, kind, convo, completion.content, parsed, None, completion, sample, False)
            self.cache.put(key, {"content": completion.content, "model": target.model, "kind": kind})
            return parsed
        raise CallFailed(f"judge reply invalid after 2 attempts: {error}")

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
    ) -> None:
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
                "latency_ms": completion.latency_ms if completion else 0.0,
                "finish_reason": completion.finish_reason if completion else None,
                "response_format": completion.mode if completion else None,
                "cache_hit": cache_hit,
            }
        )

    # ------------------------------------------------------------- judgements
    def _rubric(
        self, case: Case, trace: Trace, target: Target, log: LogFn, tally: _Tally
    ) -> tuple[dict[str, float], dict[str, str], dict[str, float]]:
        plan = rubric_plan(case, trace)
        messages = rubric_messages(case, trace, plan, self.config.excerpt_chars)
        schema = response_format("rubric", plan.dimensions)
        samples: list[tuple[dict[str, int], dict[str, str]]] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                samples.append(
                    self._ask(
                        target,
                        "rubric",
                        messages,
                        schema,
                        lambda text: parse_rubric(text, plan.dimensions),
                        i,
                        log,
                        tally,
                    )
                )
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
        if not samples:
            assert failure is not None
            raise failure
        scores = {d: _tidy(statistics.median(s[0][d] for s in samples)) for d in plan.dimensions}
        spread = {d: float(max(s[0][d] for s in samples) - min(s[0][d] for s in samples)) for d in plan.dimensions}
        return scores, dict(samples[0][1]), spread if len(samples) > 1 else {}

    def _faithfulness(
        self, trace: Trace, target: Target, log: LogFn, tally: _Tally
    ) -> tuple[float | None, list[Claim]]:
        messages = faithfulness_messages(trace, self.config.excerpt_chars)
        schema = response_format("claims")
        ids = [p.id for p in trace.evidence]
        results: list[tuple[float | None, list[Claim]]] = []
        failure: CallFailed | None = None
        for i in range(self.config.samples):
            try:
                verdicts = self._ask(
                    target, "faithfulness", messages, schema, lambda text: parse_claims(text, ids), i, log, tally
                )
            except CallFailed as exc:
                failure = exc
                if exc.fatal:
                    break
                continue
            claims = [Claim(v.claim, v.supported, v.evidence_id, v.reason) for v in verdicts]
            value = sum(c.supported for c in claims) / len(claims) if claims else None
            results.append((value, claims))
        if not results:
            assert failure is not None
            raise failure
        scored = [r for r in results if r[0] is not None]
        if not scored:
            return None, results[0][1]
        median = statistics.median(r[0] for r in scored if r[0] is not None)
        closest = min(scored, key=lambda r: abs((r[0] or 0.0) - median))
        return float(median), closest[1]

    def _borderline(self, metric: str, value: float) -> bool:
        if self.escalate is None or self.config.escalate is None:
            return False
        band = self.config.escalate.band
        scale = 1.0 if metric == "faithfulness" else 4.0  # rubric scores span 1..5
        # The tolerance keeps a value exactly on the band's edge inside it (0.8 - 0.7 is 0.10000000000000009).
        return any(r.metric == metric and abs(value - r.threshold) <= band * scale + 1e-9 for r in self.rules)

    def judge(self, case: Case, trace: Trace, log: LogFn) -> Judgement:
        tally = _Tally()
        plan = rubric_plan(case, trace)
        unscored: list[Unscored] = []
        escalated: list[str] = []
        scores: dict[str, float] = {}
        reasoning: dict[str, str] = {}
        spread: dict[str, float] = {}
        try:
            scores, reasoning, spread = self._rubric(case, trace, self.primary, log, tally)
        except CallFailed as exc:
            unscored.append(Unscored("rubric", exc.reason))
        if self.escalate and scores:
            borderline = [d for d, v in scores.items() if self._borderline(f"judge.{d}", v)]
            if borderline:
                try:
                    scores, reasoning, spread = self._rubric(case, trace, self.escalate, log, tally)
                    escalated.append(f"rubric by {self.escalate.model}")
                except CallFailed as exc:
                    # A borderline score is exactly what escalation is there to check: without the
                    # stronger verdict it is unscored, never left standing on the cheap model's word.
                    why = f"escalation to {self.escalate.model} failed: {exc.reason}"
                    for d in borderline:
                        scores.pop(d, None)
                        reasoning.pop(d, None)
                        spread.pop(d, None)
                        unscored.append(Unscored(f"judge.{d}", why))
        faithfulness: float | None = None
        claims: list[Claim] = []
        if not trace.refused and trace.answer.strip():
            try:
                faithfulness, claims = self._faithfulness(trace, self.primary, log, tally)
            except CallFailed as exc:
                unscored.append(Unscored("faithfulness", exc.reason))
            if self.escalate and faithfulness is not None and self._borderline("faithfulness", faithfulness):
                try:
                    faithfulness, claims = self._faithfulness(trace, self.escalate, log, tally)
                    escalated.append(f"faithfulness by {self.escalate.model}")
                except CallFailed as exc:
                    faithfulness, claims = None, []
                    unscored.append(
                        Unscored("faithfulness", f"escalation to {self.escalate.model} failed: {exc.reason}")
                    )
        return Judgement(
            judge=self.name,
            faithfulness=faithfulness,
            claims=tuple(claims),
            scores=scores,
            reasoning=reasoning,
            unassessable=plan.unassessable,
            unscored=tuple(unscored),
            tokens=tally.tokens,
            cost_usd=round(tally.cost, 6),
            calls=tally.calls,
            cache_hits=tally.cache_hits,
            escalated=tuple(escalated),
            spread=spread,
        )


def _tidy(value: float) -> float:
    """A whole median stays an integer score (4, not 4.0); an even-sample median may be 3.5."""
    return int(value) if float(value).is_integer() else float(value)


def _jsonable(parsed: Any) -> Any:
    if parsed is None:
        return None
    if isinstance(parsed, tuple):
        return [_jsonable(p) for p in parsed]
    if isinstance(parsed, list):
        return [p.model_dump() if hasattr(p, "model_dump") else p for p in parsed]
    return parsed
