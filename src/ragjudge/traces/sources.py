"""Where a run's spans come from: the built-in receiver the service exports to (`traces.receive`), or the team's
trace store, asked after each reply (`traces.store`). Both answer the session alike, so the session never asks
which one it has."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter

from ragjudge import masking
from ragjudge.config.traces_config import TracesConfig
from ragjudge.errors import ConfigError
from ragjudge.traces.context import TraceContext
from ragjudge.traces.otlp import Limits
from ragjudge.traces.receiver import Receiver
from ragjudge.traces.store import Collected, Counts, SpanStore
from ragjudge.traces.store_reader import StoreFailure, StoreReader
from ragjudge.traces.stores import BY_NAME as STORES
from ragjudge.transport import urls


class Received:
    """Spans the service exports to ragjudge's receiver, filed by the trace (or conversation) they belong to."""

    def __init__(self, config: TracesConfig, key: str, conversation_keys: tuple[str, ...]) -> None:
        if not config.is_loopback() and not config.allow_remote:
            raise ConfigError(
                f"{key}.receive: {config.receive} is not a loopback address: spans would come from the network",
                tip="bind 127.0.0.1, or set traces.allow_remote: true",
            )
        self._config = config
        self._key = key
        self._store = SpanStore(config.max_spans, conversation_keys)
        host, port = config.bind()
        self._receiver = Receiver(host, port, self._store, Limits(config.max_body_bytes, config.max_attribute_chars))

    @property
    def address(self) -> str:
        """Where the receiver listens (HOST:PORT), the port picked when `receive` asked for 0."""
        return self._receiver.address

    def start(self) -> None:
        """The receiver bound and serving: exit 2 when the port is taken."""
        try:
            self._receiver.start()
        except OSError as exc:
            raise ConfigError(
                f"{self._key}.receive: cannot listen on {self._config.receive}: {exc.strerror or exc}",
                tip="choose a free port (0 picks one), or stop what listens there",
            ) from None

    def stop(self) -> None:
        self._receiver.stop()

    def expect(self, context: TraceContext, conversations: tuple[str, ...]) -> None:
        self._store.expect(context, conversations)

    def collect(self, context: TraceContext, settle_s: float) -> Collected:
        return self._store.take(context, time.monotonic() + settle_s)

    def abandon(self, context: TraceContext) -> None:
        self._store.take(context, until=0.0)  # what came is let go; what comes later is counted late

    def unread(self, trace_id: str) -> str | None:
        return None

    def counts(self) -> Counts:
        return self._store.counts()


class Stored:
    """Spans read from the team's trace store by the trace id sent, once the reply is in."""

    def __init__(self, config: TracesConfig, key: str) -> None:
        self._reader = reader_of(config, key)
        self._lock = threading.Lock()
        self._unread: dict[str, str] = {}
        """The trace ids the store could not give, with why."""
        self._read = self._over = 0

    @property
    def address(self) -> str:
        """The store's URL as messages show it."""
        return self._reader.shown

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def expect(self, context: TraceContext, conversations: tuple[str, ...]) -> None:
        return None  # a store is asked for the trace id itself, afterwards

    def collect(self, context: TraceContext, settle_s: float) -> Collected:
        try:
            fetched = self._reader.settled(context, settle_s)
        except StoreFailure as exc:
            with self._lock:
                self._unread[context.trace_id] = str(exc)
            return Collected((), ())
        with self._lock:
            self._read += len(fetched.spans)
            self._over += fetched.over
        # Asked for by the trace id sent: a trace of the service's own (joined by a conversation id) is not found.
        return Collected(fetched.spans, ("traceparent",) if fetched.spans else ())

    def abandon(self, context: TraceContext) -> None:
        return None  # nothing was held

    def unread(self, trace_id: str) -> str | None:
        """Why the store could not give this trace; None when it could."""
        with self._lock:
            return self._unread.get(trace_id)

    def counts(self) -> Counts:
        with self._lock:
            reasons = Counter(self._unread.values())
            return Counts(self._read, 0, self._over, 0, tuple(sorted(reasons.items())))


def reader_of(config: TracesConfig, key: str) -> StoreReader:
    """The store's reader; exit 2 naming the key for a kind ragjudge cannot read, a URL it cannot call, an API key
    variable that is not set, or `receive` set beside the store."""
    store = config.store
    assert store is not None
    kind = STORES.get(store.kind)
    if kind is None:
        raise ConfigError(
            f"{key}.store.kind: unknown trace store {store.kind!r}", tip=f"use one of: {', '.join(STORES)}"
        )
    if "receive" in config.model_fields_set:
        raise ConfigError(
            f"{key}.store: `receive` is set too: spans are received, or read from the store, not both",
            tip="leave traces.receive out to read each trace from the store",
        )
    try:
        urls.check_http_url(store.url)
    except ValueError as exc:
        raise ConfigError(f"{key}.store.url: {exc}") from None
    api_key = None
    if store.api_key_env is not None:
        api_key = os.environ.get(store.api_key_env, "")
        if not api_key:
            raise ConfigError(
                f"{key}.store.api_key_env: the variable {store.api_key_env} is not set or empty",
                tip="export it before the run, or leave api_key_env out for a store without authentication",
            )
        masking.register(api_key)
    return StoreReader(
        kind,
        store.url,
        store.project,
        api_key=api_key,
        max_body_bytes=config.max_body_bytes,
        max_spans=config.max_spans,
        max_attribute_chars=config.max_attribute_chars,
    )
