"""What calling the endpoint gives: values only, so that reading a saved report needs no HTTP client.

Nothing here imports an HTTP or template library (tests/test_cli.py holds it so).
"""

from __future__ import annotations

from dataclasses import dataclass

from ragjudge.endpoint.trace import Trace


@dataclass(frozen=True)
class RawReply:
    """One request as `ragjudge probe` shows it: what came back, before any reading."""

    status: int
    reason: str
    content_type: str
    body: bytes
    size: int
    """Bytes received (the body is cut at max_response_bytes)."""
    elapsed_ms: float
    arrivals: tuple[tuple[int, float], ...] = ()
    """A streamed reply: each chunk's end in the body, and when it arrived (ms after the request was sent)."""
    stream_header: str | None = None
    """The reply's `x-vercel-ai-ui-message-stream` header, which names the AI SDK's stream."""


@dataclass(frozen=True)
class EndpointResult:
    """The outcome of calling the endpoint for one case."""

    trace: Trace | None
    error: str | None
    attempts: int
    retry_wait_ms: float
    """Time spent waiting between attempts (not part of latency_ms)."""
    total_ms: float
    """Wall time of all attempts and waits."""
    status: int | None
    """HTTP status of the last attempt; None when no status line arrived."""
