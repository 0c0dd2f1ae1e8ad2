"""What `ragjudge probe` asks of the endpoint: one request shown as it went and as it came back, whatever the
status, and read as a run would read it; and a GET of a route beside the endpoint for its hints.

It renders, sends and reads with the parts a run's client uses (`RequestRenderer`, `Sender`, `ReplyReader`),
so what probe shows is what a run meets; but it makes one attempt, follows no redirect, and keeps the reply's
bytes (a stream's with when each chunk arrived) to show before reading them.
"""

from __future__ import annotations

import json
import time
from typing import Any

import urllib3

from ragjudge.cases.case import Case
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint import events, protocols, stream
from ragjudge.endpoint.attempt import AttemptFailed, cut_off
from ragjudge.endpoint.decoding import decode, non_finite_reason
from ragjudge.endpoint.reader import ReplyReader
from ragjudge.endpoint.receiving import capped_chunks, error_cap, read_start, read_whole
from ragjudge.endpoint.rendering import RequestRenderer
from ragjudge.endpoint.result import RawReply
from ragjudge.endpoint.sending import Sender
from ragjudge.endpoint.trace import Trace
from ragjudge.errors import EvaluationError
from ragjudge.transport import deadline, urls

_SIDE_ROUTE_CAP = 1 << 20
"""A route beside the endpoint (an input schema, `openapi.json`) is read this far at most."""
_SIDE_ROUTE_S = 10.0


class ProbeClient:
    """The endpoint as `ragjudge probe` calls it."""

    def __init__(self, config: EndpointConfig, url: str) -> None:
        self.config = config
        self._reader = ReplyReader(config)
        self._sender = Sender(config, self._reader.assembly)
        self._requests = RequestRenderer(config, url)

    def render(self, case: Case) -> tuple[str, str | None]:
        """The URL and body for one case, as a run renders them (`RequestRenderer.render`)."""
        return self._requests.render(case)

    def request_headers(self, body: str | None) -> dict[str, str]:
        """The headers a call sends (the team's headers last, so they win)."""
        return self._requests.headers(body)

    def fetch_once(self, url: str, body: str | None, extra_headers: dict[str, str] | None = None) -> RawReply:
        """One attempt, no retries or redirects, the body kept whatever the status.

        `extra_headers`: sent besides the request's own (the trace context, with `traces:` set).
        Raises EvaluationError when the endpoint cannot be reached.
        """
        cfg = self.config
        t0 = time.monotonic()
        headers = {**self.request_headers(body), **(extra_headers or {})}
        with deadline.limit(cfg.timeout_s) as limit:
            try:
                response = self._sender.send(cfg.method, url, body, headers, limit)
            except AttemptFailed as failure:
                raise EvaluationError(f"endpoint error: {self._what(failure)}") from None
            with response:
                raw, arrivals = self._body(response, limit, t0)
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

    def _what(self, failure: AttemptFailed) -> str:
        return f"timeout after {self.config.timeout_s:g} s" if failure.kind == "timeout" else failure.detail

    def _body(
        self, response: urllib3.BaseHTTPResponse, limit: deadline.Deadline, sent_at: float
    ) -> tuple[bytes, tuple[tuple[int, float], ...]]:
        """An error reply's start; a success read whole, with the size limit and deadline a run reads it with (a
        stream with when each chunk arrived)."""
        if response.status >= 400:
            return read_start(response, limit.expires, error_cap(self.config)), ()
        try:
            if events.stream_kind(self.config.stream, response.headers.get("Content-Type")) is not None:
                return self._stream_bytes(response, limit, sent_at)
            raw = read_whole(response, self.config.max_response_bytes, limit.expires)
            if limit.fired is not None:
                raise cut_off(limit)
            return raw, ()
        except AttemptFailed as failure:
            raise EvaluationError(f"endpoint error: {self._what(failure)}") from None

    def _stream_bytes(
        self, response: urllib3.BaseHTTPResponse, limit: deadline.Deadline, sent_at: float
    ) -> tuple[bytes, tuple[tuple[int, float], ...]]:
        """A streamed reply's bytes up to max_response_bytes, and when each chunk arrived (probe assembles its
        events afterwards, timing them as a run does)."""
        chunks: list[bytes] = []
        arrivals: list[tuple[int, float]] = []
        size = 0
        try:
            for chunk in capped_chunks(response, self.config.max_response_bytes):
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
        with deadline.limit(min(self.config.timeout_s, _SIDE_ROUTE_S)) as limit:
            try:
                response = self._sender.send("GET", url, None, headers, limit)
            except AttemptFailed:
                return None
            with response:
                raw = read_start(response, limit.expires, min(self.config.max_response_bytes, _SIDE_ROUTE_CAP))
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
        return events.stream_kind(self.config.stream, raw.content_type) is not None

    def assemble(self, raw: RawReply) -> tuple[dict[str, Any], stream.Assembly, float | None]:
        """A streamed reply (`raw` is one) read as a run reads it: the reply object, the assembly (how it was read)
        and the TTFT, from when its chunks arrived. Raises ValueError for a stream that gives no reply."""
        kind = events.stream_kind(self.config.stream, raw.content_type) or "sse"
        parser = events.parser(kind)
        assembly = self._reader.assembly(kind)
        start = 0
        try:
            for end, at_ms in raw.arrivals or ((len(raw.body), raw.elapsed_ms),):
                if assembly.take(parser.feed(raw.body[start:end]), at_ms):
                    break
                start = end
            else:
                if not assembly.take(parser.close(), raw.elapsed_ms):
                    assembly.check_end()
        except stream.StreamFault as fault:
            raise ValueError(str(fault)) from None
        return assembly.reply(), assembly, assembly.first_at

    def read(self, raw: RawReply, question: str | None = None) -> Trace:
        """The reply read as a run reads it; raises ReplyShapeError (or ValueError for a body that is not JSON)."""
        if self.streams(raw):
            streamed, assembly, ttft_ms = self.assemble(raw)
            how = stream.notes(assembly, raw.stream_header)
            return self._reader.streamed(streamed, raw.elapsed_ms, ttft_ms, how, question)
        try:
            decoded = decode(raw.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"reply is not valid JSON ({exc})") from None
        reason = non_finite_reason(decoded.data)
        if reason is not None:
            raise ValueError(reason)
        return self._reader.body(decoded, raw.elapsed_ms, question)
