"""A reply's body read within its bounds: `endpoint.max_response_bytes`, the attempt's deadline and, for a
stream, `endpoint.idle_timeout_s`.

Bodies are read as their bytes arrive (`read1`), so an endpoint that dribbles its reply a byte at a time
still meets the deadline; past a bound nothing more is read. Every way a read fails is an `AttemptFailed`.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import urllib3
from urllib3.exceptions import ReadTimeoutError

from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint import events, protocols, stream
from ragjudge.endpoint.attempt import AttemptFailed, Received, cut_off
from ragjudge.endpoint.decoding import Decoded, decode, non_finite_reason
from ragjudge.transport import deadline

ERROR_BODY_CAP = 65_536
"""An error reply is read this far, for its excerpt: its explanation is at the start."""
_DRAIN_BYTES = 65_536
_DRAIN_S = 0.5


def error_cap(config: EndpointConfig) -> int:
    """How much of an error reply is read: enough to quote, and to log with --log-bodies."""
    return min(config.max_response_bytes, max(ERROR_BODY_CAP, config.max_log_body_bytes))


def read_start(response: urllib3.BaseHTTPResponse, expires: float, cap: int) -> bytes:
    """The start of a reply's body (an error's, up to `cap`); whatever arrives before a problem reading it."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in body_chunks(response):
            chunks.append(chunk)
            size += len(chunk)
            if size >= cap or time.monotonic() > expires:
                break
    except (urllib3.exceptions.HTTPError, OSError):
        pass
    return b"".join(chunks)[:cap]


def read_whole(response: urllib3.BaseHTTPResponse, cap: int, expires: float) -> bytes:
    """One body, whole, of at most `cap` bytes (a larger declared Content-Length is refused unread)."""
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise AttemptFailed("size", f"reply over {cap} bytes", retry=False)
    chunks: list[bytes] = []
    try:
        for chunk in capped_chunks(response, cap):
            chunks.append(chunk)
            if time.monotonic() > expires:
                raise AttemptFailed("timeout", "timeout", retry=True)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        if isinstance(exc, ReadTimeoutError | TimeoutError) or "timed out" in str(exc).lower():
            raise AttemptFailed("timeout", "timeout", retry=True) from None
        raise AttemptFailed("connection", "connection dropped while reading the reply", retry=True) from None
    return b"".join(chunks)


def read_stream(
    response: urllib3.BaseHTTPResponse,
    assembly: stream.Assembly,
    limit: deadline.Deadline,
    sent_at: float,
    config: EndpointConfig,
) -> Received:
    """A streamed reply, event by event as its bytes arrive, gathered into one reply object by `assembly`.

    No bytes for `idle_timeout_s` is an idle timeout; the attempt's deadline bounds the whole stream
    and `max_response_bytes` its size; an error event or a stream cut before its end is a case error."""
    _idle(response, min(config.idle_timeout_s, max(0.001, limit.remaining())))
    parser = events.parser(assembly.kind)
    chunks: list[bytes] = []
    ended = False
    arrived = time.monotonic()
    after_end: tuple[float, int] | None = None
    """Once the stream reached an end that lets it send more (an OpenAI chunk's `finish_reason`): when reading on
    stops, and the bytes read until then. A service that then holds the connection open has still answered."""
    try:
        for chunk in capped_chunks(response, config.max_response_bytes):
            arrived = time.monotonic()
            chunks.append(chunk)
            # Timed at the bytes that carried the first text: ragjudge's own parsing is not the service's time.
            ended = assembly.take(parser.feed(chunk), arrived)
            if ended:
                _drain(response, limit.expires)
                break
            if assembly.ended and after_end is None:
                after_end = (min(limit.expires, time.monotonic() + _DRAIN_S), sum(len(c) for c in chunks))
                _idle(response, max(0.001, after_end[0] - time.monotonic()))
            if after_end is not None and (
                time.monotonic() > after_end[0] or sum(len(c) for c in chunks) - after_end[1] > _DRAIN_BYTES
            ):
                ended = True
                break
            if time.monotonic() > limit.expires:
                raise AttemptFailed("timeout", "timeout", retry=True)
        if limit.fired is not None:
            raise cut_off(limit)
        if not ended and not assembly.take(parser.close(), time.monotonic()):
            assembly.check_end()
    except stream.StreamFault as fault:
        raise AttemptFailed("stream", str(fault), retry=False, body=b"".join(chunks)) from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        if limit.fired is not None:
            raise cut_off(limit) from None
        if not assembly.ended:
            if isinstance(exc, ReadTimeoutError | TimeoutError) or "timed out" in str(exc).lower():
                raise AttemptFailed("idle", "idle timeout", retry=True) from None
            raise AttemptFailed("stream", assembly.cut(), retry=False, body=b"".join(chunks)) from None
        # The stream was complete: what it did after its end (held the connection, dropped it) is not the reply.
    reply = assembly.reply()
    reason = non_finite_reason(reply)
    if reason is not None:
        raise AttemptFailed("json", reason, retry=False)
    ttft_ms = None if assembly.first_at is None else round((assembly.first_at - sent_at) * 1000, 1)
    how = stream.notes(assembly, response.headers.get(protocols.AI_SDK_HEADER))
    return Received(response.status, Decoded(reply, ()), b"".join(chunks), arrived, stream=how, ttft_ms=ttft_ms)


def decode_json(raw: bytes, content_type: str | None) -> Decoded:
    """One JSON body decoded; a body that is not JSON, nests absurdly or holds a non-finite number fails."""
    kind = (content_type or "no content type").split(";")[0].strip() or "no content type"
    try:
        decoded = decode(raw.decode("utf-8"))
    except RecursionError:
        raise AttemptFailed("json", f"reply is nested too deeply to read ({len(raw)} bytes)", retry=False) from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise AttemptFailed("json", f"reply is not valid JSON ({kind}, {len(raw)} bytes)", retry=False) from None
    reason = non_finite_reason(decoded.data)
    if reason is not None:
        raise AttemptFailed("json", reason, retry=False)
    return decoded


def _drain(response: urllib3.BaseHTTPResponse, expires: float) -> None:
    """What a stream sends after its declared end (`[DONE]`, the chunked body's last chunk), read and dropped within
    a small bound, so that its connection goes back to the pool: left unread, every streamed call opened a new one.
    Nothing read here is part of the reply; past the bound the connection is simply closed."""
    stop = min(expires, time.monotonic() + _DRAIN_S)
    # Each read waits at most what is left of the bound: a service that holds the connection open after its end
    # made this wait the whole timeout_s, and past the attempt's deadline the whole answer became a timeout.
    _idle(response, max(0.001, stop - time.monotonic()))
    size = 0
    try:
        for chunk in body_chunks(response):
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


def capped_chunks(response: urllib3.BaseHTTPResponse, cap: int) -> Iterator[bytes]:
    """`body_chunks` up to `cap` bytes in all; past it, a size error (nothing more is read)."""
    size = 0
    for chunk in body_chunks(response):
        size += len(chunk)
        if size > cap:
            raise AttemptFailed("size", f"reply over {cap} bytes", retry=False)
        yield chunk


def body_chunks(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
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
