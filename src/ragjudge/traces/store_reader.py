"""One case's trace read from the team's trace store (`traces.store`), by the trace id ragjudge sent, within bounds.

A store ingests what the service exports on its own time (Phoenix: about 0.1 s after the exporter's batch), so
the trace is asked for again until its spans have come and stopped changing, or `traces.settle_s` has passed.
Each request is bounded in time (the whole reply: what is left of `settle_s`, 2 to 10 s) and size
(`traces.max_body_bytes`); a store that is down or answers badly ends the wait with a reason (the case's trace
metrics stay unknown), never the run.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import requests

from ragjudge.traces.context import TraceContext
from ragjudge.traces.otlp import Span
from ragjudge.traces.stores import BadReply, StoreKind, read_reply, spans_url
from ragjudge.transport import deadline, urls
from ragjudge.transport.sessions import watched_session

REQUEST_TIMEOUT_S = 10.0
"""One request to the store, its whole reply read, at most; and no longer than what is left of `settle_s`, but
never under `MIN_REQUEST_S`: a store that hangs costs a case about what a missing trace does."""
MIN_REQUEST_S = 2.0
POLL_S = (0.05, 0.1, 0.2, 0.4)
"""The pauses between asks, growing to the last."""
QUIET_S = 1.0
"""Spans unchanged this long end the wait though the service's own span is not among them (it may not continue
ragjudge's, or its parent may be a proxy's span that was not exported)."""
MAX_PAGES = 100
CHUNK = 65536


class StoreFailure(Exception):
    """The store could not be read; the message names the store and what went wrong (for the run's warning)."""


@dataclass(frozen=True)
class Fetched:
    spans: tuple[Span, ...]
    over: int
    """Spans past `traces.max_spans`, left unread."""


class StoreReader:
    """Thread-safe: each `fetch` opens its own session."""

    def __init__(
        self,
        kind: StoreKind,
        base_url: str,
        project: str,
        *,
        api_key: str | None,
        max_body_bytes: int,
        max_spans: int,
        max_attribute_chars: int,
    ) -> None:
        self.kind = kind
        self.url = spans_url(kind, base_url, project)
        self.shown = urls.public_url(base_url.rstrip("/"))
        """The store as messages name it: no credentials, no query."""
        self._headers = {"Accept": "application/json"}
        if api_key:
            self._headers[kind.auth_header] = kind.auth_prefix + api_key
        self._max_body = max_body_bytes
        self._max_spans = max_spans
        self._max_chars = max_attribute_chars

    def settled(self, context: TraceContext, settle_s: float) -> Fetched:
        """The trace's spans once they have come and stopped changing, or as they are after `settle_s` (none,
        if none came). StoreFailure when the store cannot be read."""
        until = time.monotonic() + settle_s
        last: Fetched | None = None
        unchanged_since = time.monotonic()
        pause = iter(POLL_S)
        wait = 0.0
        while True:
            seconds = min(REQUEST_TIMEOUT_S, max(MIN_REQUEST_S, until - time.monotonic()))
            fetched = self.fetch(context.trace_id, seconds)
            now = time.monotonic()
            if last is None or _ids(fetched) != _ids(last):
                unchanged_since = now
            elif fetched.spans and (_has_top(fetched, context) or now - unchanged_since >= QUIET_S):
                return fetched
            last = fetched
            wait = next(pause, wait)
            if now + wait >= until or deadline.stopped():
                return fetched
            deadline.sleep(wait)

    def fetch(self, trace_id: str, seconds: float = REQUEST_TIMEOUT_S) -> Fetched:
        """The trace's spans as the store has them now (every page, up to `traces.max_spans`), each page within
        `seconds`."""
        spans: list[Span] = []
        over = 0
        cursor: str | None = None
        session = watched_session()
        try:
            for _ in range(MAX_PAGES):
                params = {self.kind.trace_id_param: trace_id, self.kind.limit_param: str(self.kind.max_limit)}
                if cursor is not None:
                    params[self.kind.cursor_param] = cursor
                try:
                    page, cursor = read_reply(self.kind, self._get(session, params, seconds), self._max_chars)
                except BadReply as exc:
                    raise StoreFailure(
                        f"the trace store {self.shown} answered with spans ragjudge cannot read: {exc}"
                    ) from None
                room = self._max_spans - len(spans)
                spans += page[: max(0, room)]
                over += max(0, len(page) - max(0, room))
                if cursor is None:
                    break
        finally:
            session.close()
        mine = tuple(s for s in spans if s.trace_id == trace_id)
        return Fetched(mine, over)

    def _get(self, session: requests.Session, params: dict[str, str], seconds: float) -> object:
        where = f"the trace store {self.shown}"
        with deadline.limit(seconds) as limit:
            try:
                with session.get(
                    self.url,
                    params=params,
                    headers=self._headers,
                    timeout=seconds,
                    stream=True,
                    allow_redirects=False,
                ) as reply:
                    if reply.status_code != 200:
                        raise StoreFailure(f"{where} answered HTTP {reply.status_code}{_hint(reply.status_code)}")
                    body = self._read_capped(reply, where)
            except requests.RequestException as exc:
                if limit.fired is not None or isinstance(exc, requests.Timeout):
                    raise StoreFailure(f"{where} did not answer in time") from None
                raise StoreFailure(f"{where} could not be reached: {_why(exc)}") from None
            if limit.fired is not None:  # a body cut short can look whole
                raise StoreFailure(f"{where} did not answer in time")
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise StoreFailure(f"{where} answered with a body that is not JSON") from None

    def _read_capped(self, reply: requests.Response, where: str) -> bytes:
        chunks, size = [], 0
        for chunk in reply.iter_content(CHUNK):
            size += len(chunk)
            if size > self._max_body:
                raise StoreFailure(f"{where} answered more than {self._max_body} bytes (traces.max_body_bytes)")
            chunks.append(chunk)
        return b"".join(chunks)


def _ids(fetched: Fetched) -> frozenset[str]:
    return frozenset(s.span_id for s in fetched.spans)


def _has_top(fetched: Fetched, context: TraceContext) -> bool:
    # The service's own span for the request continues ragjudge's (which is never exported: there is no root to
    # look for); its children ended, and were exported, before it.
    return any(s.parent_span_id == context.span_id for s in fetched.spans)


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (set traces.store.api_key_env to the variable that holds its API key?)"
    if status == 404:
        return " (is traces.store.project the project the service exports to?)"
    return ""


def _why(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.ConnectionError) and "refused" in str(exc).lower():
        return "connection refused"
    return type(exc).__name__
