"""One HTTP call per case, with retries, a total deadline and a size cap.

Every failure ends as an `EndpointResult` with an error a person can act on;
nothing here raises for a misbehaving endpoint.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urljoin

import urllib3
from jinja2 import StrictUndefined, Template, TemplateError, Undefined
from urllib3.exceptions import (
    ConnectTimeoutError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from ragjudge import masking
from ragjudge.cases.case import Case
from ragjudge.cases.conversations import template_variables
from ragjudge.config.model import EndpointConfig
from ragjudge.endpoint import protocols, stream
from ragjudge.endpoint.answer_check import check_answer
from ragjudge.endpoint.decoding import Decoded, decode, non_finite
from ragjudge.endpoint.dialogue import TurnOutgrown, carries_replies
from ragjudge.endpoint.refusal import RefusalRules
from ragjudge.endpoint.reply import ReplyShapeError, parse_reply
from ragjudge.endpoint.result import EndpointResult, RawReply
from ragjudge.endpoint.templating import BoundedSandbox, RenderTooLarge
from ragjudge.endpoint.trace import StreamNotes, Trace
from ragjudge.errors import ConfigError, EvaluationError
from ragjudge.safetext import clean_text
from ragjudge.transport import deadline, urls
from ragjudge.transport.pools import watched_pool
from ragjudge.transport.retry_after import parse_retry_after

EXCERPT_CHARS = 300
"""How much of an error reply's body a reason quotes."""
_ERROR_BODY_CAP = 65_536
_SIDE_ROUTE_CAP = 1 << 20
"""An error reply is read this far, for its excerpt: its explanation is at the start."""
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504}) | frozenset(range(505, 600))
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ACCEPT_ENCODING = urllib3.util.make_headers(accept_encoding=True)["accept-encoding"]
"""What `requests` would offer: replies may come compressed, and are read decoded."""
MAX_REDIRECTS = 5


_Reply = tuple[int, Decoded, bytes, "tuple[float | None, StreamNotes] | None", float]
"""One attempt's reply: status, the decoded reply, its bytes, (TTFT, how it streamed) for a stream, when its last
bytes arrived."""


class _Attempt(Exception):
    """One failed attempt: whether to retry it, and how it reads in a reason."""

    def __init__(
        self,
        kind: str,
        detail: str,
        retry: bool,
        retry_after: float | None = None,
        status: int | None = None,
        excerpt: str | None = None,
        body: bytes | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.retry = retry
        self.retry_after = retry_after
        self.status = status
        self.excerpt = excerpt
        """The server's explanation (an error body's first characters), secrets masked."""
        self.body = body


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
    ) -> None:
        """`literal_url`: `url` is sent exactly as given, never compiled or rendered as a template: a URL from
        someone other than the config's author (`ragjudge serve`'s callers) is data, whatever braces it holds."""
        self.config = config
        self.url = url
        self.log_bodies = log_bodies
        self._secrets = header_secrets(config.headers)
        self._sleep = sleep
        self._backoff = backoff_base_s
        # Shared by the calling threads; it keeps up to this many idle connections per host for reuse.
        self._http = watched_pool(maxsize=2 * max(config.concurrency, 16))
        self._rendered: dict[int, tuple[Case, str, str | None]] = {}
        """Requests rendered ahead (the check before any call), kept for the call: each is rendered once."""
        self._refusal = RefusalRules.from_config(config.refusal)
        self.protocol = protocols.declared(config.protocol)
        """The declared stream protocol; None: streams are read by `protocols.generic`."""
        cap = config.max_request_bytes
        env = BoundedSandbox(cap, undefined=StrictUndefined, autoescape=False)
        # `tojson` must fail on an undefined name the way `{{ name }}` does.
        env.policies["json.dumps_function"] = _strict_dumps
        # What the URL template inserts is URL-encoded: a question with `&`, `#` or `/` in it
        # stays one query value and cannot add parameters or change the path.
        url_env = BoundedSandbox(cap, undefined=StrictUndefined, autoescape=False, finalize=_url_quote)
        urlencode = url_env.filters["urlencode"]
        url_env.filters["urlencode"] = lambda value: _Encoded(urlencode(value))  # encoded once, not twice
        self._env, self._url_env = env, url_env
        self._url: Template | None = None
        if not literal_url:
            try:
                self._url = url_env.from_string(url)
            except TemplateError as exc:
                raise ConfigError(f"endpoint.url: invalid template: {exc}") from None
        try:
            self._body = env.from_string(config.body)
        except TemplateError as exc:
            raise ConfigError(f"endpoint.body: invalid template: {exc}") from None

    def render(self, case: Case) -> tuple[str, str | None]:
        """The URL and body for one case; a template error is a config error naming the case, and a turn that
        renders too large only with the service's earlier answers is `TurnOutgrown`.

        Kept for `call`, which then does not render it again."""
        url, body = self._render(case)
        if not case.turn:  # a conversation's turn is rendered again when asked, with the answers it follows
            self._rendered[id(case)] = (case, url, body)
        return url, body

    def _render(self, case: Case) -> tuple[str, str | None]:
        context = {**template_variables(case), "model": self.config.model}
        key = "endpoint.url"
        try:
            url = self.url if self._url is None else self._url_env.render(self._url, context)
            key = "endpoint.body"
            body = None if self.config.method == "GET" else self._env.render(self._body, context)
        except RenderTooLarge as exc:
            if carries_replies(case):
                raise TurnOutgrown(key, exc.limit, len(case.history)) from None
            raise ConfigError(
                f"{key}: the template renders over {exc.limit:,} bytes for case {case.id!r} "
                f"(endpoint.max_request_bytes: {exc.limit:,}); rendering was stopped there",
                tip='look for a repetition in the template (such as `"a" * 1000000`), '
                "or raise endpoint.max_request_bytes",
            ) from None
        except Exception as exc:  # a filter in the team's template may raise anything
            detail = str(exc) if isinstance(exc, TemplateError) else f"{type(exc).__name__}: {exc}"
            raise ConfigError(
                f"{key}: template failed for case {case.id!r}: {detail}",
                tip="the template sees `question`, `case` (id, question, expected, category, tags, ...), `messages`, "
                "`history`, `turn`, `conversation_id` and `model`",
            ) from None
        if body is not None and self._sends_json():
            try:
                json.loads(body)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"endpoint.body: the rendered body for case {case.id!r} is not valid JSON: "
                    f"{exc.msg} (line {exc.lineno}, column {exc.colno})",
                    tip="insert text with `| tojson`, which quotes and escapes it: "
                    '{"question": {{ question | tojson }}}',
                ) from None
        return url, body

    def _sends_json(self) -> bool:
        """The body is JSON unless the team's headers declare another content type."""
        declared = next((v for k, v in self.config.headers.items() if k.lower() == "content-type"), None)
        return declared is None or "json" in declared.lower()

    def call(self, case: Case, on_attempt: Callable[[dict[str, Any]], None] | None = None) -> EndpointResult:
        ahead = self._rendered.pop(id(case), None)
        try:
            url, body = ahead[1:] if ahead is not None and ahead[0] is case else self._render(case)
        except TurnOutgrown as outgrown:  # the service's answers grew the request: this turn's error, not the run's
            return self._result(None, outgrown.reason, 0, 0.0, time.monotonic(), None)
        attempts_allowed = self.config.retries + 1
        started = time.monotonic()
        waited = 0.0
        last: _Attempt | None = None
        status: int | None = None
        for attempt in range(1, attempts_allowed + 1):
            t0 = time.monotonic()
            try:
                status, decoded, raw, streamed, done_at = self._once(url, body, t0)
                if streamed is None:
                    decoded = self._as_protocol(decoded)  # may raise ReplyShapeError: here `raw` is known
                # To the reply's last bytes: reading a stream's events as they come is ragjudge's time, not the
                # service's.
                elapsed_ms = (done_at - t0) * 1000
                try:
                    trace = parse_reply(decoded.data, self.config.response, elapsed_ms, self._refusal)
                except RecursionError:
                    raise ReplyShapeError("reply is nested too deeply to read") from None
                trace = self._checked(trace, decoded.data, case.question)
                if streamed is not None:
                    ttft, how = streamed
                    if ttft is not None:
                        ttft = min(ttft, trace.latency_ms)  # text and end in one chunk: one instant, rounded apart
                    trace = dataclasses.replace(trace, ttft_ms=ttft, stream=how)
                if decoded.duplicate_keys:
                    trace = dataclasses.replace(trace, warnings=_duplicate_warnings(decoded))
            except _Attempt as failure:
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
                    last = _Attempt("interrupted", "interrupted", retry=False)
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

    def _too_long(self, failure: _Attempt) -> str:
        asked = (
            f"the server asked to wait {failure.retry_after:.0f} s, over endpoint.max_wait_s {self.config.max_wait_s:g}"
        )
        if failure.status == 429:
            return f"endpoint rate-limited: {asked}"
        return f"endpoint error: {failure.detail}: {asked}"

    def _reason(self, failure: _Attempt, attempts: int) -> str:
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

    def _once(self, url: str, body: str | None, sent_at: float) -> _Reply:
        """One attempt, redirects included, under one deadline for the whole of it.

        Also returns, for a streamed reply, the time to the first token in ms and how it was read (None for one
        JSON body), and when the reply's last bytes arrived."""
        if deadline.stopped():
            raise _Attempt("interrupted", "interrupted", retry=False)
        cfg = self.config
        headers = self.request_headers(body)
        with deadline.limit(cfg.timeout_s) as limit:
            try:
                return self._follow(cfg.method, url, body, headers, limit, sent_at)
            except _Attempt:
                if limit.fired is not None:
                    raise _cut_off(limit) from None
                raise

    def _follow(
        self,
        method: str,
        url: str,
        body: str | None,
        headers: dict[str, str],
        limit: deadline.Deadline,
        sent_at: float,
    ) -> _Reply:
        start = url  # every hop is judged against where the call began, not the hop before
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send(method, url, body, headers, limit)
            with response:
                if response.status in _REDIRECT_STATUSES and "Location" in response.headers:
                    method, url, body, headers = self._next_hop(response, method, url, body, headers, start)
                    continue
                if response.status >= 400:
                    retry = response.status in _RETRY_STATUSES
                    error_body = self._error_body(response, limit.expires)
                    raise _Attempt(
                        "http",
                        f"HTTP {response.status} from {method} {urls.public_url(url)}",
                        retry=retry,
                        retry_after=parse_retry_after(response.headers.get("Retry-After")),
                        status=response.status,
                        excerpt=mask(error_excerpt(error_body), self._secrets) or None,
                        body=error_body,
                    )
                try:
                    kind = stream.stream_kind(self.config.stream, response.headers.get("Content-Type"))
                    if kind is not None:
                        decoded, raw, streamed, done_at = self._read_stream(response, kind, limit, sent_at)
                        return response.status, decoded, raw, streamed, done_at
                    raw = self._read_capped(response, limit.expires)
                    done_at = time.monotonic()
                    if limit.fired is not None:
                        raise _cut_off(limit)  # a cut-off body can look complete
                    decoded = _decode(raw, response.headers.get("Content-Type"))
                    return response.status, decoded, raw, None, done_at
                except _Attempt as failure:
                    failure.status = response.status
                    raise
        raise _Attempt("redirect", f"more than {MAX_REDIRECTS} redirects", retry=False)

    def _send(
        self, method: str, url: str, body: str | None, headers: dict[str, str], limit: deadline.Deadline
    ) -> urllib3.BaseHTTPResponse:
        if not any(k.lower() == "accept-encoding" for k in headers):
            headers = {**headers, "Accept-Encoding": _ACCEPT_ENCODING}
        try:
            return self._http.urlopen(
                method,
                url,
                body=body.encode("utf-8") if body is not None else None,
                headers=headers,
                timeout=max(0.001, limit.remaining()),
                retries=False,  # the attempts are this client's, with its backoff and reasons
                redirect=False,  # followed by `_follow`, which decides what a hop may carry
                preload_content=False,
            )
        # NewConnectionError is a ConnectTimeoutError to urllib3: a refusal, not a timeout, so it comes first.
        except (NewConnectionError, SSLError, ProtocolError, OSError) as exc:
            raise _Attempt("connection", _connection_detail(url, exc), retry=True) from None
        except (ConnectTimeoutError, ReadTimeoutError, TimeoutError):
            raise _Attempt("timeout", "timeout", retry=True) from None
        except (urllib3.exceptions.HTTPError, ValueError) as exc:
            raise _Attempt("request", f"request failed: {type(exc).__name__}", retry=False) from None

    def _next_hop(
        self,
        response: urllib3.BaseHTTPResponse,
        method: str,
        url: str,
        body: str | None,
        headers: dict[str, str],
        start: str,
    ) -> tuple[str, str, str | None, dict[str, str]]:
        """Where a 3xx leads, and what may be sent there; refuses what the config does not allow."""
        status = response.status
        location = response.headers.get("Location", "")
        if not self.config.follow_redirects:
            raise _Attempt(
                "redirect",
                f"HTTP {status} redirect to {urls.public_url(location)} "
                "(set endpoint.follow_redirects: true to follow it)",
                retry=False,
                status=status,
            )
        target = urljoin(url, location)
        if status == 303 or (status in (301, 302) and method == "POST"):
            method, body = "GET", None  # what browsers and requests do
        if not urls.same_origin(target, start):
            if not self.config.allow_cross_origin:
                raise _Attempt(
                    "redirect",
                    f"HTTP {status} redirect to another origin refused: {urls.public_url(location)} "
                    "(set endpoint.allow_cross_origin: true to follow it)",
                    retry=False,
                    status=status,
                )
            # Another origin never sees the team's headers (tokens) or the body.
            return method, target, None, {"Accept": "application/json", "User-Agent": "ragjudge"}
        if body is None:
            headers = {k: v for k, v in headers.items() if k != "Content-Type"}
        return method, target, body, headers

    def request_headers(self, body: str | None) -> dict[str, str]:
        """The headers a call sends (the team's headers last, so they win)."""
        headers = {"Accept": "application/json", "User-Agent": "ragjudge"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        headers.update(self.config.headers)
        return headers

    def fetch_once(self, url: str, body: str | None) -> RawReply:
        """One attempt, no retries or redirects, the body kept whatever the status (`ragjudge probe`).

        Raises EvaluationError when the endpoint cannot be reached.
        """
        cfg = self.config
        t0 = time.monotonic()
        with deadline.limit(cfg.timeout_s) as limit:
            try:
                response = self._send(cfg.method, url, body, self.request_headers(body), limit)
            except _Attempt as failure:
                what = f"timeout after {cfg.timeout_s:g} s" if failure.kind == "timeout" else failure.detail
                raise EvaluationError(f"endpoint error: {what}") from None
            with response:
                raw, arrivals = self._probe_body(response, limit, t0)
        return RawReply(
            status=response.status,
            reason=response.reason or "",
            content_type=response.headers.get("Content-Type", ""),
            body=raw,
            size=len(raw),
            elapsed_ms=round((time.monotonic() - t0) * 1000, 1),
            arrivals=arrivals,
            stream_header=response.headers.get(protocols.AI_SDK_HEADER),
        )

    def _probe_body(
        self, response: urllib3.BaseHTTPResponse, limit: deadline.Deadline, sent_at: float
    ) -> tuple[bytes, tuple[tuple[int, float], ...]]:
        """An error reply's start; a success read whole, with the size limit and deadline a run reads it with (a
        stream with when each chunk arrived)."""
        if response.status >= 400:
            return self._error_body(response, limit.expires), ()
        try:
            if stream.stream_kind(self.config.stream, response.headers.get("Content-Type")) is not None:
                return self._read_stream_raw(response, limit, sent_at)
            raw = self._read_capped(response, limit.expires)
            if limit.fired is not None:
                raise _cut_off(limit)
            return raw, ()
        except _Attempt as failure:
            what = f"timeout after {self.config.timeout_s:g} s" if failure.kind == "timeout" else failure.detail
            raise EvaluationError(f"endpoint error: {what}") from None

    def _read_stream_raw(
        self, response: urllib3.BaseHTTPResponse, limit: deadline.Deadline, sent_at: float
    ) -> tuple[bytes, tuple[tuple[int, float], ...]]:
        """A streamed reply's bytes up to max_response_bytes, and when each chunk arrived (probe assembles its
        events afterwards, timing them as a run does)."""
        chunks: list[bytes] = []
        arrivals: list[tuple[int, float]] = []
        size = 0
        try:
            for chunk in _capped_chunks(response, self.config.max_response_bytes):
                chunks.append(chunk)
                size += len(chunk)
                arrivals.append((size, round((time.monotonic() - sent_at) * 1000, 1)))
                if time.monotonic() > limit.expires:
                    break
        except (urllib3.exceptions.HTTPError, OSError):
            pass  # what arrived is assembled, and a cut stream is named there
        return b"".join(chunks), tuple(arrivals)

    def fetch_get(self, url: str, beside: str) -> RawReply | None:
        """One GET of a route beside the endpoint `beside` (LangServe's `input_schema`, FastAPI's `openapi.json`),
        for `ragjudge probe`'s hints. Only on that URL's own origin, within 10 s, at most max_response_bytes (and
        1 MiB) read; None when anything fails."""
        if not urls.same_origin(url, beside):
            return None
        headers = {k: v for k, v in self.request_headers(None).items() if k.lower() != "content-type"}
        t0 = time.monotonic()
        with deadline.limit(min(self.config.timeout_s, 10.0)) as limit:
            try:
                response = self._send("GET", url, None, headers, limit)
            except _Attempt:
                return None
            with response:
                raw = self._error_body(response, limit.expires, min(self.config.max_response_bytes, _SIDE_ROUTE_CAP))
        return RawReply(
            status=response.status,
            reason=response.reason or "",
            content_type=response.headers.get("Content-Type", ""),
            body=raw,
            size=len(raw),
            elapsed_ms=round((time.monotonic() - t0) * 1000, 1),
        )

    def streams(self, raw: RawReply) -> bool:
        """Whether `raw` is read as a stream (by `endpoint.stream` and its Content-Type)."""
        return stream.stream_kind(self.config.stream, raw.content_type) is not None

    def assemble(self, raw: RawReply) -> tuple[dict[str, Any], stream.Assembly, float | None]:
        """A streamed reply (`raw` is one) read as a run reads it: the reply object, the assembly (how it was read)
        and the TTFT, from when its chunks arrived. Raises ValueError for a stream that gives no reply."""
        kind = stream.stream_kind(self.config.stream, raw.content_type) or "sse"
        events = stream.parser(kind)
        assembly = self.assembly(kind)
        start = 0
        try:
            for end, at_ms in raw.arrivals or ((len(raw.body), raw.elapsed_ms),):
                if assembly.take(events.feed(raw.body[start:end]), at_ms):
                    break
                start = end
            else:
                if not assembly.take(events.close(), raw.elapsed_ms):
                    assembly.check_end()
        except stream.StreamFault as fault:
            raise ValueError(str(fault)) from None
        return assembly.reply(), assembly, assembly.first_at

    def assembly(self, kind: str) -> stream.Assembly:
        """A stream's reader: the declared protocol, or the generic one for the mapping and the format."""
        protocol = self.protocol or protocols.generic(self.config.response.answer_delta, kind)
        return stream.Assembly(
            self.config.response, excerpt=lambda b: mask(error_excerpt(b), self._secrets), protocol=protocol, kind=kind
        )

    def _as_protocol(self, decoded: Decoded) -> Decoded:
        """One JSON body as the declared protocol reads it (the Responses API's `output` items)."""
        if self.protocol is None:
            return decoded
        return dataclasses.replace(decoded, data=protocols.read_body(self.protocol, decoded.data, self.config.response))

    def _checked(self, trace: Trace, data: Any, question: str | None) -> Trace:
        """The trace, noting an answer that is the question, a passage's text or an id (endpoint/answer_check.py)."""
        flag = check_answer(data, self.config.response, trace, question)
        if flag is None:
            return trace
        return dataclasses.replace(trace, read=dataclasses.replace(trace.read, answer_flag=flag))

    def read(self, raw: RawReply, question: str | None = None) -> Trace:
        """The reply read as a run reads it; raises ReplyShapeError (or ValueError for a body that is not JSON)."""
        if self.streams(raw):
            streamed, assembly, ttft_ms = self.assemble(raw)
            trace = parse_reply(streamed, self.config.response, raw.elapsed_ms, self._refusal)
            trace = dataclasses.replace(trace, ttft_ms=ttft_ms, stream=notes(assembly, raw.stream_header))
            return self._checked(trace, streamed, question)
        try:
            decoded = decode(raw.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"reply is not valid JSON ({exc})") from None
        bad = non_finite(decoded.data)
        if bad is not None:
            raise ValueError(f'reply field "{bad[0]}" is not a finite number ({_shown(bad[1])})')
        decoded = self._as_protocol(decoded)
        trace = parse_reply(decoded.data, self.config.response, raw.elapsed_ms, self._refusal)
        if decoded.duplicate_keys:
            trace = dataclasses.replace(trace, warnings=_duplicate_warnings(decoded))
        return self._checked(trace, decoded.data, question)

    def _error_body(self, response: urllib3.BaseHTTPResponse, expires: float, cap: int | None = None) -> bytes:
        """The start of an error reply's body (up to `cap`); whatever arrives before a problem reading it."""
        chunks: list[bytes] = []
        size = 0
        if cap is None:
            cap = min(self.config.max_response_bytes, max(_ERROR_BODY_CAP, self.config.max_log_body_bytes))
        try:
            for chunk in _body_chunks(response):
                chunks.append(chunk)
                size += len(chunk)
                if size >= cap or time.monotonic() > expires:
                    break
        except (urllib3.exceptions.HTTPError, OSError):
            pass
        return b"".join(chunks)[:cap]

    def _read_stream(
        self, response: urllib3.BaseHTTPResponse, kind: str, limit: deadline.Deadline, sent_at: float
    ) -> tuple[Decoded, bytes, tuple[float | None, StreamNotes], float]:
        """A streamed reply, event by event as its bytes arrive, gathered into one reply object.

        No bytes for `idle_timeout_s` is an idle timeout; the attempt's deadline bounds the whole stream
        and `max_response_bytes` its size; an error event or a stream cut before its end is a case error."""
        _idle(response, min(self.config.idle_timeout_s, max(0.001, limit.remaining())))
        events = stream.parser(kind)
        assembly = self.assembly(kind)
        chunks: list[bytes] = []
        ended = False
        arrived = time.monotonic()
        try:
            for chunk in _capped_chunks(response, self.config.max_response_bytes):
                arrived = time.monotonic()
                chunks.append(chunk)
                # Timed at the bytes that carried the first text: ragjudge's own parsing is not the service's time.
                ended = assembly.take(events.feed(chunk), arrived)
                if ended:
                    _drain(response, limit.expires)
                    break
                if time.monotonic() > limit.expires:
                    raise _Attempt("timeout", "timeout", retry=True)
            if limit.fired is not None:
                raise _cut_off(limit)
            if not ended and not assembly.take(events.close(), time.monotonic()):
                assembly.check_end()
        except stream.StreamFault as fault:
            raise _Attempt("stream", str(fault), retry=False, body=b"".join(chunks)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if limit.fired is not None:
                raise _cut_off(limit) from None
            if isinstance(exc, ReadTimeoutError | TimeoutError) or "timed out" in str(exc).lower():
                raise _Attempt("idle", "idle timeout", retry=True) from None
            raise _Attempt("stream", assembly.cut(), retry=False, body=b"".join(chunks)) from None
        reply = assembly.reply()
        bad = non_finite(reply)
        if bad is not None:
            raise _Attempt("json", f'reply field "{bad[0]}" is not a finite number ({_shown(bad[1])})', retry=False)
        ttft_ms = None if assembly.first_at is None else round((assembly.first_at - sent_at) * 1000, 1)
        header = response.headers.get(protocols.AI_SDK_HEADER)
        return Decoded(reply, ()), b"".join(chunks), (ttft_ms, notes(assembly, header)), arrived

    def _read_capped(self, response: urllib3.BaseHTTPResponse, expires: float) -> bytes:
        cap = self.config.max_response_bytes
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise _Attempt("size", f"reply over {cap} bytes", retry=False)
        chunks: list[bytes] = []
        try:
            for chunk in _capped_chunks(response, cap):
                chunks.append(chunk)
                if time.monotonic() > expires:
                    raise _Attempt("timeout", "timeout", retry=True)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if isinstance(exc, ReadTimeoutError | TimeoutError) or "timed out" in str(exc).lower():
                raise _Attempt("timeout", "timeout", retry=True) from None
            raise _Attempt("connection", "connection dropped while reading the reply", retry=True) from None
        return b"".join(chunks)


def notes(assembly: stream.Assembly, header: str | None = None) -> StreamNotes:
    """How a stream was read, and, when no protocol was declared, what it looks like."""
    looks = None
    if assembly.protocol.generic:
        looks = protocols.recognise(assembly.seen, header)
    finish = assembly.finish_reason
    return StreamNotes(
        protocol=assembly.protocol.name,
        looks_like=looks.label if looks else None,
        suggestion=looks.name if looks and looks.name in protocols.BUILTIN else None,
        finish_reason=clean_text(finish)[:100] if isinstance(finish, str) else None,
        reasoning=clean_text("".join(assembly.reasoning)) or None,
    )


def _cut_off(limit: deadline.Deadline) -> _Attempt:
    if limit.fired == deadline.STOPPED:
        return _Attempt("interrupted", "interrupted", retry=False)
    return _Attempt("timeout", "timeout", retry=True)


_DRAIN_BYTES = 65_536
_DRAIN_S = 0.5


def _drain(response: urllib3.BaseHTTPResponse, expires: float) -> None:
    """What a stream sends after its declared end (`[DONE]`, the chunked body's last chunk), read and dropped within
    a small bound, so that its connection goes back to the pool: left unread, every streamed call opened a new one.
    Nothing read here is part of the reply; past the bound the connection is simply closed."""
    stop = min(expires, time.monotonic() + _DRAIN_S)
    size = 0
    try:
        for chunk in _body_chunks(response):
            size += len(chunk)
            if size > _DRAIN_BYTES or time.monotonic() > stop:
                return
    except (urllib3.exceptions.HTTPError, OSError):
        return


def _idle(response: urllib3.BaseHTTPResponse, seconds: float) -> None:
    """Bound each read of a streamed reply: the socket's timeout becomes the idle timeout.

    A reply that closes its connection has handed the socket to the response (http.client's reader)."""
    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is None:
        reader = getattr(getattr(response, "_fp", None), "fp", None)
        sock = getattr(getattr(reader, "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        sock.settimeout(seconds)


def _capped_chunks(response: urllib3.BaseHTTPResponse, cap: int) -> Iterator[bytes]:
    """`_body_chunks` up to `cap` bytes in all; past it, a size error (nothing more is read)."""
    size = 0
    for chunk in _body_chunks(response):
        size += len(chunk)
        if size > cap:
            raise _Attempt("size", f"reply over {cap} bytes", retry=False)
        yield chunk


def _body_chunks(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """The (decoded) body as it arrives.

    `read(n)` blocks until n bytes are buffered, so an endpoint that dribbles its
    body a byte at a time would never hit the total deadline; `read1` returns what
    one socket read gave, so the deadline is checked often.
    """
    while True:
        chunk = response.read1(65536, decode_content=True)
        if not chunk:
            return
        yield chunk


def _strict_dumps(obj: Any, **kwargs: Any) -> str:
    def default(value: Any) -> Any:
        if isinstance(value, Undefined):
            str(value)  # StrictUndefined raises UndefinedError naming the variable
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    return json.dumps(obj, default=default, **kwargs)


def header_secrets(headers: dict[str, str]) -> tuple[str, ...]:
    """Header values long enough to be tokens, and the token alone of "Bearer <token>"."""
    found = [v for v in headers.values() if len(v) >= 6]
    for value in list(found):
        found.extend(part for part in value.split()[1:] if len(part) >= 6)
    return tuple(sorted(set(found), key=len, reverse=True))


def mask(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` through the one masking facility (`ragjudge.masking`), `secrets` registered beside the rest."""
    masking.register(*secrets)
    return masking.mask(text)


def error_excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """The server's explanation: a JSON body's `detail`/`message`/`error` when it has one, else its text."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # nested 100,000 deep: shown as the text it is (found by fuzzing)
        data = None
    picked_text = None
    if isinstance(data, dict):
        key = next((k for k in ("detail", "message", "error") if k in data), None)
        picked = {key: data[key]} if key is not None else data
        try:
            picked_text = json.dumps(picked, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, ValueError):
            picked_text = None
    text = clean_text(picked_text if picked_text is not None else " ".join(text.split()))
    if text in ("{}", "[]", '""', "null"):
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _connection_detail(url: str, exc: Exception) -> str:
    host = urls.host_port(url) or "the endpoint"
    text = str(exc).lower()
    if "refused" in text:
        return f"connection refused by {host}"
    if "name or service not known" in text or "nodename nor servname" in text or "resolve" in text:
        return f"cannot resolve host {urls.host(url) or 'the endpoint'}"
    if "reset" in text or "aborted" in text or "remote end closed" in text:
        return f"connection to {host} closed without a reply"
    return f"cannot connect to {host}"


def _decode(raw: bytes, content_type: str | None) -> Decoded:
    kind = (content_type or "no content type").split(";")[0].strip() or "no content type"
    try:
        decoded = decode(raw.decode("utf-8"))
    except RecursionError:
        raise _Attempt("json", f"reply is nested too deeply to read ({len(raw)} bytes)", retry=False) from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _Attempt("json", f"reply is not valid JSON ({kind}, {len(raw)} bytes)", retry=False) from None
    bad = non_finite(decoded.data)
    if bad is not None:
        path, value = bad
        raise _Attempt("json", f'reply field "{path}" is not a finite number ({_shown(value)})', retry=False)
    return decoded


def _shown(value: float) -> str:
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _duplicate_warnings(decoded: Decoded) -> tuple[str, ...]:
    return tuple(f'reply has duplicate key "{key}"; the last value was used' for key in decoded.duplicate_keys)


class _Encoded(str):
    """Text the template already URL-encoded (`| urlencode`)."""


def _url_quote(value: Any) -> Any:
    # `finalize` sees every `{{ ... }}` result; literal template text is left as written.
    if value is None or isinstance(value, _Encoded):
        return value
    return quote(str(value), safe="")
