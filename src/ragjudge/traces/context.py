"""The W3C trace context ragjudge sends with each request: one trace id per case and turn."""

from __future__ import annotations

import secrets
from dataclasses import dataclass


@dataclass(frozen=True)
class TraceContext:
    trace_id: str
    """32 lower-case hex digits, never all zero."""
    span_id: str
    """16 lower-case hex digits: ragjudge's own client span, never exported, the service's first span's parent."""

    @property
    def traceparent(self) -> str:
        # Version 00, sampled (01): a parent-based sampler in the service then records the trace.
        return f"00-{self.trace_id}-{self.span_id}-01"


def new_context() -> TraceContext:
    # 128 random bits: ids from two runs, or two cases, never meet.
    return TraceContext(trace_id=secrets.token_hex(16), span_id=secrets.token_hex(8))
