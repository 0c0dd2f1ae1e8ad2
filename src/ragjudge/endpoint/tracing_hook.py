"""Where tracing meets the endpoint client: the two moments it needs, and nothing of how it is done.

`ragjudge.traces.session.TraceSession` is the one implementation; the client knows only this protocol, so the
endpoint package never imports the traces package (which reads OTLP).
"""

from __future__ import annotations

from typing import Protocol

from ragjudge.cases.case import Case
from ragjudge.endpoint.trace import Trace


class TraceHook(Protocol):
    """Adds a trace context to each request, and joins a reply with the spans that came for it."""

    def headers(self, case: Case, body: str | None) -> dict[str, str]:
        """The headers that carry this case's (or turn's) trace context (`traceparent`)."""
        ...

    def joined(self, case: Case, trace: Trace) -> Trace:
        """The reply read with what its spans said (waiting up to `traces.settle_s` for them)."""
        ...

    def abandoned(self, case: Case) -> None:
        """The call gave no reply: its spans, if any come, are not waited for and are let go."""
        ...
