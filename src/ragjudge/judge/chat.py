"""Chat completions for the model judges: transport retries, response-format fallback, a shared 429 throttle.

Nothing here validates what the model said; `asking.py` does that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragjudge.config.judge_config import JudgeConfig
from ragjudge.errors import ConfigError
from ragjudge.judge.interface import host_of
from ragjudge.judge.limiter import AdaptiveLimit
from ragjudge.judge.prompting import Message
from ragjudge.safetext import clean_text
from ragjudge.transport import deadline, urls
from ragjudge.transport.retry_after import parse_retry_after

if TYPE_CHECKING:
    import openai

MODES = ("json_schema", "json_object", "prompt")
INTERRUPTED = f"judge call {deadline.INTERRUPTED}"


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
            if delay <= 0 or deadline.stopped():
                return
            deadline.sleep(min(delay, 1.0))

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
    escalation: bool = False
    """`judge.escalate.model`, asked again about borderline scores: its usage is counted apart (`Tally`)."""


class ChatCaller:
    """Chat completions with transport retries, response-format fallback and the shared throttle."""

    def __init__(self, config: JudgeConfig, sleep: Callable[[float], None] = deadline.sleep) -> None:
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
        self._waited = 0.0
        """Retry waits asked for so far, run-wide (judge.max_retry_time_s bounds it)."""
        self.throttle = Throttle()
        self.limit = AdaptiveLimit(config.concurrency)
        self._sleep = sleep

    def client(self, base_url: str | None) -> openai.OpenAI:
        # The SDK is imported on the first call, not when the judge is made: the endpoint calls start without
        # waiting for its import, and commands that never call a judge never pay for it.
        import openai

        from ragjudge.transport.judge_http import judge_http_client

        with self._lock:
            if base_url not in self._clients:
                self._clients[base_url] = openai.OpenAI(
                    api_key=self._api_key,
                    base_url=base_url or None,
                    timeout=self.config.timeout_s,
                    max_retries=0,
                    http_client=judge_http_client(self.config.timeout_s),
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
        import openai

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
            if deadline.stopped():
                raise CallFailed(INTERRUPTED, fatal=True)
            client = self.client(target.base_url)
            try:
                with self.limit.slot():
                    if self._fatal:  # set by another call while this one waited for its place
                        raise CallFailed(self._fatal, fatal=True)
                    if deadline.stopped():  # the run was stopped while this call waited for its place
                        raise CallFailed(INTERRUPTED, fatal=True)
                    started = time.monotonic()  # the call's latency, not its wait for a place
                    # The deadline covers the whole call, body included: a judge that drips its reply is cut off.
                    with deadline.limit(self.config.timeout_s) as limit:
                        # The SDK's documented low-level POST: its retries and errors, without the per-call
                        # transform of the typed parameters (a third of the SDK's CPU per call, and these
                        # parameters are plain JSON already). `cast_to=object` hands back the reply's JSON
                        # as it came: the few fields read here are checked here, and building the SDK's
                        # reply objects for them was another tenth of the CPU of a judgement.
                        reply = client.post("/chat/completions", body=kwargs, cast_to=object)
            except openai.APIConnectionError as exc:  # APITimeoutError included
                if limit.fired == deadline.STOPPED:
                    raise CallFailed(INTERRUPTED, fatal=True) from None
                timed_out = limit.fired is not None or isinstance(exc, openai.APITimeoutError)
                if attempt >= attempts:
                    if timed_out:
                        raise CallFailed(
                            f"judge call failed: timeout after {self.config.timeout_s:g} s ({attempt} attempts)"
                        ) from None
                    raise CallFailed(f"judge call failed: cannot connect to {host_of(target.base_url)}") from None
                self._wait(self._backoff(attempt))
                continue
            except openai.BadRequestError as exc:
                text = str(exc).lower()
                rejects_format = any(w in text for w in ("response_format", "json_schema", "json_object", "structured"))
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
                self.limit.throttled()
                wait = parse_retry_after(exc.response.headers.get("retry-after"))
                if wait is not None and wait > self.config.max_wait_s:
                    raise CallFailed(f"judge rate-limited: {self._asked(wait)}") from None
                if attempt >= attempts:
                    raise CallFailed(f"judge call failed: HTTP 429 after {attempt} attempts") from None
                if wait is not None:  # the server said when: every call waits that long
                    self._spend(wait)
                    self.throttle.pause(wait)
                else:  # no hint: this call backs off, and the smaller limit slows the others
                    self._wait(self._backoff(attempt))
                continue
            except openai.APIStatusError as exc:
                if 300 <= exc.status_code < 400:
                    raise CallFailed(_redirect_reason(exc)) from None
                if exc.status_code < 500 or attempt >= attempts:
                    raise CallFailed(
                        f"judge call failed: HTTP {exc.status_code} after {attempt} attempt{'s' if attempt > 1 else ''}"
                    ) from None
                wait = parse_retry_after(exc.response.headers.get("retry-after"))
                if wait is not None and wait > self.config.max_wait_s:
                    raise CallFailed(f"judge call failed: HTTP {exc.status_code}: {self._asked(wait)}") from None
                self._wait(wait if wait is not None else self._backoff(attempt))
                continue
            except (ValueError, RecursionError):  # the SDK's json() of a body that says it is JSON and is not
                raise CallFailed("judge reply is not valid JSON") from None
            self.limit.succeeded()
            return _completion(reply, round((time.monotonic() - started) * 1000, 1), mode)

    def _asked(self, wait: float) -> str:
        return f"the server asked to wait {wait:.0f} s, over judge.max_wait_s {self.config.max_wait_s:g}"

    def _spend(self, delay: float) -> None:
        """Count a retry wait against the run-wide budget; past it, every later call fails at once."""
        budget = self.config.max_retry_time_s
        with self._lock:
            if self._waited + delay > budget:
                self._fatal = (
                    f"judge retries stopped: waiting {delay:.0f} s more would pass judge.max_retry_time_s "
                    f"{budget:g} s for the run"
                )
                raise CallFailed(self._fatal, fatal=True)
            self._waited += delay

    def _wait(self, delay: float) -> None:
        self._spend(delay)
        self._sleep(delay)
        if deadline.stopped():
            raise CallFailed(INTERRUPTED, fatal=True)

    def _said(self, exc: openai.APIStatusError) -> str:
        """What the server said, trimmed, without the key: some proxies echo the key they were sent."""
        return _message(exc).replace(self._api_key, "***")[:200]

    @staticmethod
    def _backoff(attempt: int) -> float:
        return min(8.0, 0.5 * 2.0 ** (attempt - 1))


def _completion(reply: Any, latency_ms: float, mode: str) -> Completion:
    """The reply as a `Completion`; a body that is not a chat completion is a failed call, not a crash.

    The reply is the body's JSON as it came (or its text, when the body is not JSON), so a 200 with an
    empty, non-JSON or oddly shaped body has fields of any type (fuzzing found such bodies; they are kept in
    tests/judge/test_odd_replies.py).
    """
    try:
        choices = reply["choices"]
        if not choices:
            raise CallFailed("judge reply had no choices")
        choice = choices[0]
        content = choice["message"]["content"]
        usage = reply.get("usage")
        prompt = usage.get("prompt_tokens") if usage else 0
        completion = usage.get("completion_tokens") if usage else 0
        finish = choice.get("finish_reason")
    except (AttributeError, TypeError, IndexError, KeyError):
        shape = (
            "choices[0].message or usage unreadable"
            if isinstance(reply, dict)
            else f"a {type(reply).__name__}, not an object"
        )
        raise CallFailed(f"judge reply is not a chat completion ({shape})") from None
    if content is not None and not isinstance(content, str):
        raise CallFailed(f"judge reply content is not text ({type(content).__name__})")
    counts = [n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0 for n in (prompt, completion)]
    return Completion(
        content=clean_text(content or ""),  # a lone surrogate or NUL in a judge reply must not reach the report
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=counts[0],
        completion_tokens=counts[1],
        latency_ms=latency_ms,
        cached=False,
        mode=mode,
    )


def _redirect_reason(exc: openai.APIStatusError) -> str:
    location = exc.response.headers.get("location", "")
    where = urls.host(location) or urls.path(location) or "an unnamed place"
    return (
        f"judge call failed: HTTP {exc.status_code} redirect to {where} not followed "
        "(the judge never follows redirects: set judge.base_url to where the API really is)"
    )


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
