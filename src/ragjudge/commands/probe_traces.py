"""`ragjudge probe` with `traces:` set: the one traced question's spans, what they gave (passages, tool calls,
tokens, timings) and what to set when they gave nothing, or came in a trace of their own."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TextIO

from ragjudge.cases.case import Case
from ragjudge.endpoint.spans import ToolCallSeen
from ragjudge.endpoint.trace import Trace
from ragjudge.errors import ExitCode
from ragjudge.traces.session import TraceSession

_HASH = re.compile(r"[0-9a-f]{64}")
SHOWN = 10


def show_spans(out: TextIO, tracing: TraceSession, case: Case, trace: Trace) -> tuple[int, Trace]:
    """Waits up to `traces.settle_s` for the spans, shows them; exit 1 when none came or none joined."""
    config = tracing.config
    joined = tracing.joined(case, trace)
    seen = joined.spans
    where = f"the receiver on {tracing.address}"
    if config.store is not None:
        where = f"the trace store {tracing.address}, project {config.store.project}"
    print(f"\nspans ({where}, waited up to {config.settle_s:g} s)", file=out)
    if seen is None:
        print("  not traced: the request carried no trace context", file=out)
        return int(ExitCode.GATE_FAILED), joined
    print(f"  traceparent sent: 00-{seen.trace_id}-{seen.span_id}-01", file=out)
    foreign = tracing.counts().foreign
    if not seen.arrived:
        unread = tracing.unread(seen.trace_id)
        print(f"  {unread}" if unread else "  no span arrived for this question", file=out)
        if unread:
            pass
        elif config.store is not None:
            print(
                f"  hint: point the service's exporter at the store (Phoenix: OTEL_EXPORTER_OTLP_ENDPOINT="
                f"{tracing.address}, project {config.store.project}); is its sampler dropping the trace? raise "
                "traces.settle_s if it exports late",
                file=out,
            )
        elif foreign:
            print(
                f"  hint: {foreign} span(s) came in traces ragjudge never sent: the service starts a new trace per "
                "request instead of continuing `traceparent` (wrap its ASGI app in "
                "opentelemetry-instrumentation-asgi's OpenTelemetryMiddleware, or send a conversation id it records "
                "as gen_ai.conversation.id)",
                file=out,
            )
        else:
            print(
                f"  hint: point the service's exporter here: OTEL_EXPORTER_OTLP_ENDPOINT=http://{tracing.address} "
                "(OTLP/HTTP); is its sampler dropping the trace? raise traces.settle_s if it exports late",
                file=out,
            )
        return int(ExitCode.GATE_FAILED), joined
    print(f"  {seen.arrived} span(s) arrived, joined by {', '.join(seen.joined_by)}", file=out)
    if seen.joined_by == ("conversation",):
        print(
            "  note: the service started a trace of its own (joined by its conversation id): it does not continue "
            "`traceparent`",
            file=out,
        )
    print(f"  conventions found: {', '.join(seen.conventions) or '(none ragjudge reads)'}", file=out)
    if seen.passage_ids:
        ids = ", ".join(seen.passage_ids[:SHOWN]) + (" ..." if len(seen.passage_ids) > SHOWN else "")
        used = "used: the reply shows none" if seen.passages_used else "not used: the reply's own passages win"
        print(f"  passages ({seen.passages_from}): {ids} ({used})", file=out)
        if any(_HASH.fullmatch(i) for i in seen.passage_ids):
            print(
                "  hint: these ids are content hashes: set traces.id_key to the metadata key that holds your own id "
                "(e.g. doc_id), so golden_context_ids can match",
                file=out,
            )
    elif seen.passages_from is not None:
        print(f"  passages ({seen.passages_from}): none retrieved for this question", file=out)
    else:
        print(
            "  passages: none in the spans: turn content tracing on (Haystack: HAYSTACK_CONTENT_TRACING_ENABLED=true), "
            "or check which convention its retriever spans use (traces.conventions)" + _tool_hint(seen.tool_calls),
            file=out,
        )
    for call in seen.tool_calls[:SHOWN]:
        print(f"  tool call: {call.name}({call.arguments or ''}) -> {call.result or '(no result recorded)'}", file=out)
    tokens = "not recorded"
    if seen.input_tokens is not None or seen.output_tokens is not None:
        tokens = f"{seen.input_tokens or 0} in, {seen.output_tokens or 0} out"
    print(f"  tokens: {tokens}", file=out)
    timings = [
        f"{label} {value:g} ms"
        for label, value in (
            ("server", seen.server_ms),
            ("retrieval", seen.retrieval_ms),
            ("generation", seen.generation_ms),
            ("time to first chunk", seen.ttfc_ms),
        )
        if value is not None
    ]
    print(f"  timings: {', '.join(timings) or 'none recorded'}", file=out)
    return int(ExitCode.PASSED), joined


def _tool_hint(calls: Sequence[ToolCallSeen]) -> str:
    """An agent that retrieves with a tool lists its documents in that tool's result: name the tools whose result
    reads as a list of documents."""
    listing = [c.name for c in calls if c.result and c.result.lstrip()[:1] in ("[", "{")]
    if not listing:
        return ""
    names = ", ".join(dict.fromkeys(listing))
    return f"; if it retrieves with a tool, name it: traces.retrieval_tools: [{names}]"
