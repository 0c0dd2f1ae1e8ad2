"""One attempt at the endpoint: what it received, or why it failed and whether to try again.

Every way an attempt fails (a refused connection, a timeout, an HTTP error, a reply too large, a redirect
refused, a stream cut) is an `AttemptFailed`; the client turns the last one into the case's reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragjudge.endpoint.decoding import Decoded
from ragjudge.endpoint.trace import StreamNotes
from ragjudge.transport import deadline


class AttemptFailed(Exception):
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


def cut_off(limit: deadline.Deadline) -> AttemptFailed:
    """The failure of an attempt its deadline ended: a timeout, or the run being stopped."""
    if limit.fired == deadline.STOPPED:
        return AttemptFailed("interrupted", "interrupted", retry=False)
    return AttemptFailed("timeout", "timeout", retry=True)


@dataclass(frozen=True)
class Received:
    """One attempt's reply, read whole."""

    status: int
    decoded: Decoded
    raw: bytes
    """The body's bytes, as read (decoded from any Content-Encoding)."""
    done_at: float
    """When the reply's last bytes arrived (`time.monotonic()`)."""
    stream: StreamNotes | None = None
    """How a streamed reply was read; None for one JSON body."""
    ttft_ms: float | None = None
    """A stream's time to its first answer text, from the request's sending."""
