"""A reply read with what its spans said: the trace's passages stand for the reply's when the reply has none,
and a disagreement, when it has some, is the reply's win and a warning."""

from __future__ import annotations

import json
from dataclasses import replace

from ragjudge.config.traces_config import TracePriceConfig
from ragjudge.endpoint.spans import SpansSeen, ToolCallSeen
from ragjudge.endpoint.trace import ToolCall, Trace
from ragjudge.traces.findings import Reading

SHOWN_IDS = 5


def join(trace: Trace, seen: SpansSeen, reading: Reading, price: TracePriceConfig | None = None) -> Trace:
    """`trace` with `spans` set to `seen` filled from `reading`, and the trace's passages where the reply had none;
    with a `price`, the service's cost from its tokens."""
    seen = replace(
        seen,
        conventions=reading.conventions,
        passages_from=reading.passages_from,
        passage_ids=tuple(p.id for p in reading.passages),
        tool_calls=reading.tool_calls,
        input_tokens=reading.input_tokens,
        output_tokens=reading.output_tokens,
        retrieval_ms=reading.retrieval_ms,
        generation_ms=reading.generation_ms,
        ttfc_ms=reading.ttfc_ms,
        cost_usd=_cost(reading, price),
    )
    if trace.tool_calls is None and reading.tool_calls:
        # The reply exposed no tool calls; the spans did: they stand for the reply's, so a case's `tools:`
        # conditions read them as they would a stream's.
        trace = replace(trace, tool_calls=tuple(_as_call(c, k) for k, c in enumerate(reading.tool_calls, start=1)))
    if reading.passages_from is None:
        return replace(trace, spans=seen)
    if trace.passages:
        warnings = trace.warnings
        if set(trace.retrieved_ids) != set(seen.passage_ids):
            warnings = (
                *warnings,
                f"the trace's passages ({_ids(seen.passage_ids)}) differ from the reply's "
                f"({_ids(trace.retrieved_ids)}): the reply's were used",
            )
        return replace(trace, spans=seen, warnings=warnings)
    return replace(
        trace,
        passages=reading.passages,
        passages_unknown=False,
        spans=replace(seen, passages_used=True),
    )


def _as_call(seen: ToolCallSeen, position: int) -> ToolCall:
    """A span's tool call as a reply's: its arguments decoded when they are JSON, else the text recorded."""
    arguments: object = seen.arguments
    if seen.arguments is not None:
        try:
            arguments = json.loads(seen.arguments)
        except ValueError:
            arguments = seen.arguments
    return ToolCall(seen.name, arguments, position, seen.result)


def _cost(reading: Reading, price: TracePriceConfig | None) -> float | None:
    if price is None or (reading.input_tokens is None and reading.output_tokens is None):
        return None
    spent = (reading.input_tokens or 0) * price.input_usd_per_mtok + (
        reading.output_tokens or 0
    ) * price.output_usd_per_mtok
    return round(spent / 1e6, 8)


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS]) or "none"
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")
