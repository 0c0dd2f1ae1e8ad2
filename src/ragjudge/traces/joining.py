"""A reply read with what its spans said: the trace's passages stand for the reply's when the reply has none,
and a disagreement, when it has some, is the reply's win and a warning."""

from __future__ import annotations

from dataclasses import replace

from ragjudge.endpoint.spans import SpansSeen
from ragjudge.endpoint.trace import Trace
from ragjudge.traces.findings import Reading

SHOWN_IDS = 5


def join(trace: Trace, seen: SpansSeen, reading: Reading) -> Trace:
    """`trace` with `spans` set to `seen` filled from `reading`, and the trace's passages where the reply had none."""
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
    )
    if not reading.passages:
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


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS]) or "none"
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")
