"""One HTTP call per case, with retries, a total deadline and a size cap.

Every failure ends as an `EndpointResult` with an error a person can act on;
nothing here raises for a misbehaving endpoint. The client renders each case's
request (`endpoint/rendering.py`), makes its attempts on the wire
(`endpoint/sending.py`), and reads the reply into a `Trace` (`endpoint/reader.py`);
here are the attempts themselves: their backoff, `Retry-After`, and the reason
the last one gives.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ragjudge.cases.case import Case
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.attempt import AttemptFailed, Received
from ragjudge.endpoint.dialogue import TurnOutgrown
from ragjudge.endpoint.excerpt import header_secrets, mask
from ragjudge.endpoint.reader import ReplyReader
from ragjudge.endpoint.rendering import RequestRenderer
from ragjudge.endpoint.reply import ReplyShapeError
from ragjudge.endpoint.result import EndpointResult
from ragjudge.endpoint.sending import Sender
from ragjudge.endpoint.trace import Trace
from ragjudge.endpoint.tracing_hook import TraceHook
from ragjudge.transport import deadline


def _plural(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


class EndpointClient:
    """Calls the endpoint; safe to share between threads."""

    def __init__(
        self,
        config: EndpointConfig,
        url: str,
        *,
        sleep: Callable[[float], None] = deadline.sleep,
        backoff_base_s: float = 0.5,
        log_bodies: bool = False,
        literal_url: bool = False,
        tracing: TraceHook | None = None,
    ) -> None:
        """`literal_url`: `url` is sent exactly as given, never compiled or rendered as a template: a URL from
        someone other than the config's author (`ragjudge serve`'s callers) is data, whatever braces it holds.
        `tracing`: with `traces:` set, what adds each request's trace context and joins its reply with its spans."""
        self.config = config
        self.url = url
        self.log_bodies = log_bodies
        self._tracing = tracing
        self._sending = threading.BoundedSemaphore(config.concurrency)
        self._secrets = header_secrets(config.headers)
        self._sleep = sleep
        self._backoff = backoff_base_s
        self._rendered: dict[int, tuple[Case, str, str | None]] = {}
        """Requests rendered ahead (the check before any call), kept for the call: each is rendered once."""
        self._reader = ReplyReader(config)
        self._sender = Sender(config, self._reader.assembly)
        self._requests = RequestRenderer(config, url, literal_url=literal_url)

    def render(self, case: Case) -> tuple[str, str | None]:
        """The URL and body for one case; a template error is a config error naming the case, and a turn that
        renders too large only with the service's earlier answers is `TurnOutgrown`.

        Kept for `call`, which then does not render it again."""
        url, body = self._requests.render(case)
        if not case.turn:  # a conversation's turn is rendered again when asked, with the answers it follows
            self._rendered[id(case)] = (case, url, body)
        return url, body

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult:
        if self._tracing is None:
            return self._call(case, on_attempt)
        # At most endpoint.concurrency requests in flight; a reply's spans are waited for outside that bound, so
        # the threads waiting for them (the run gives tracing more) leave the service as busy as without traces.
        with self._sending:
            result = self._call(case, on_attempt)
        if result.trace is None:
            self._tracing.abandoned(case)
            return result
        return replace(result, trace=self._tracing.joined(case, result.trace))

    def _call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None) -> EndpointResult:
        ahead = self._rendered.pop(id(case), None)
        try:
            url, body = ahead[1:] if ahead is not None and ahead[0] is case else self._requests.render(case)
        except TurnOutgrown as outgrown:  # the service's answers grew the request: this turn's error, not the run's
            return self._result(None, outgrown.reason, 0, 0.0, time.monotonic(), None)
        headers = self._requests.headers(body)
        if self._tracing is not None:
            headers = {**headers, **self._tracing.headers(case, body)}
        attempts_allowed = self.config.retries + 1
        started = time.monotonic()
        waited = 0.0
        last: AttemptFailed | None = None
        status: int | None = None
        raw: bytes | None = None
        for attempt in range(1, attempts_allowed + 1):
            t0 = time.monotonic()
            try:
                received = self._sender.attempt(url, body, headers, t0)
                status, raw = received.status, received.raw
                # To the reply's last bytes: reading a stream's events as they come is ragjudge's time, not the
                # service's.
                elapsed_ms = (received.done_at - t0) * 1000
                trace = self._read(received, elapsed_ms, case.question)
            except AttemptFailed as failure:
                last = failure
                status = failure.status
                if on_attempt:
                    fields: dict[str, Any] = {
                        "attempt": attempt,
                        "ok": False,
                        "error": failure.detail,
                        "elapsed_ms": round((time.monotonic() - t0) * 1000, 1),
                    }
                    if failure.excerpt:
                        fields["reply_excerpt"] = failure.excerpt
                    fields.update(self._body_fields(failure.body))
                    on_attempt(fields)
                if not failure.retry or attempt == attempts_allowed:
                    break
                delay = self._backoff * 2 ** (attempt - 1)
                if failure.retry_after is not None:
                    if failure.retry_after > self.config.max_wait_s:
                        # Waiting it out would stall the run for nothing: end this call now.
                        return self._result(None, self._too_long(failure), attempt, waited, started, status)
                    delay = failure.retry_after
                waited += delay
                self._sleep(delay)
                if deadline.stopped():
                    last = AttemptFailed("interrupted", "interrupted", retry=False)
                    break
                continue
            except ReplyShapeError as exc:
                if on_attempt:
                    on_attempt({"attempt": attempt, "ok": False, "error": str(exc), **self._body_fields(raw)})
                return self._result(None, f"endpoint error: {exc}", attempt, waited, started, status)
            if on_attempt:
                on_attempt(
                    {
                        "attempt": attempt,
                        "ok": True,
                        "status": status,
                        "elapsed_ms": round(elapsed_ms, 1),
                        **self._body_fields(raw),
                    }
                )
            return self._result(trace, None, attempt, waited, started, status)
        assert last is not None
        return self._result(None, self._reason(last, attempt), attempt, waited, started, status)

    def _read(self, received: Received, elapsed_ms: float, question: str | None) -> Trace:
        """The attempt's reply as a trace; raises ReplyShapeError."""
        if received.stream is None:
            return self._reader.body(received.decoded, elapsed_ms, question)
        ttft = received.ttft_ms
        if ttft is not None:
            ttft = min(ttft, elapsed_ms)  # text and end in one chunk: one instant, rounded apart
        return self._reader.streamed(received.decoded.data, elapsed_ms, ttft, received.stream, question)

    def _too_long(self, failure: AttemptFailed) -> str:
        asked = (
            f"the server asked to wait {failure.retry_after:.0f} s, over endpoint.max_wait_s {self.config.max_wait_s:g}"
        )
        if failure.status == 429:
            return f"endpoint rate-limited: {asked}"
        return f"endpoint error: {failure.detail}: {asked}"

    def _reason(self, failure: AttemptFailed, attempts: int) -> str:
        if failure.kind == "timeout":
            return f"endpoint error: timeout after {self.config.timeout_s:g} s ({_plural(attempts)})"
        if failure.kind == "idle":
            return (
                f"endpoint error: idle timeout: no bytes for {self.config.idle_timeout_s:g} s "
                f"(endpoint.idle_timeout_s, {_plural(attempts)})"
            )
        if failure.kind in ("http", "connection"):
            said = f": {failure.excerpt}" if failure.excerpt else ""
            return f"endpoint error: {failure.detail} after {_plural(attempts)}{said}"
        return f"endpoint error: {failure.detail}"

    def _body_fields(self, raw: bytes | None) -> dict[str, Any]:
        """With --log-bodies: the reply body for the log, truncated to max_log_body_bytes, secrets masked."""
        if not self.log_bodies or raw is None:
            return {}
        cap = self.config.max_log_body_bytes
        text = mask(raw[:cap].decode("utf-8", errors="replace"), self._secrets)
        return {"body": text, "body_bytes": len(raw), "body_truncated": len(raw) > cap}

    @staticmethod
    def _result(
        trace: Trace | None, error: str | None, attempts: int, waited: float, started: float, status: int | None
    ) -> EndpointResult:
        return EndpointResult(
            trace=trace,
            error=error,
            attempts=attempts,
            retry_wait_ms=round(waited * 1000, 1),
            total_ms=round((time.monotonic() - started) * 1000, 1),
            status=status,
        )
