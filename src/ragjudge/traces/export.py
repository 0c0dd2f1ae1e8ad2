"""Each case's verdicts sent back into the team's traces (`traces.export`): `gen_ai.evaluation.result` events
over OTLP/HTTP, tied to the case's trace, so they sit beside the service's spans in Jaeger, Tempo or Phoenix.

One span a case (or a turn), in the trace id ragjudge sent and parented to the span id it sent (where the
service's own first span hangs), carrying one event per verdict: the case's status (`ragjudge.case`, labelled
`pass`/`fail`/`error`, its failed conditions as the explanation) and each metric with a value. Built with the
`opentelemetry-proto` classes and posted as protobuf; a failed export is a warning, never the run's failure.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Iterator
from typing import Any

import urllib3

from ragjudge.report.case_block import CaseBlock
from ragjudge.report.spans_block import SpansBlock
from ragjudge.transport import urls

EVENT = "gen_ai.evaluation.result"
CASE_VERDICT = "ragjudge.case"
TIMEOUT_S = 10.0
MAX_EXPLANATION_CHARS = 2000
MAX_SPANS_A_REQUEST = 500


def traces_url(base: str) -> str:
    """`url` with `/v1/traces` added unless it ends with it already."""
    base = base.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


def verdicts(cases: Iterable[CaseBlock]) -> Iterator[tuple[str, SpansBlock, str, list[str], dict[str, Any]]]:
    """(name, spans, status, failed conditions, metrics) for each case, or each turn of a conversation, that
    was traced."""
    for case in cases:
        if case.trace.spans is not None:
            yield case.id, case.trace.spans, case.status, list(case.failed_conditions), dict(case.metrics)
        for turn in case.turns:
            if turn.trace.spans is not None:
                name = f"{case.id} turn {turn.turn}"
                yield name, turn.trace.spans, turn.status, list(turn.failed_conditions), dict(turn.metrics)


def request_body(cases: Iterable[CaseBlock], run_id: str) -> list[bytes]:
    """The export requests (protobuf), at most `MAX_SPANS_A_REQUEST` spans each."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    def kv(key: str, value: str | float) -> Any:
        return KeyValue(
            key=key, value=AnyValue(double_value=value) if isinstance(value, float) else AnyValue(string_value=value)
        )

    bodies = []
    request = ExportTraceServiceRequest()
    scope = _scope(request, kv, run_id)
    now = time.time_ns()
    for name, spans, status, failed, metrics in verdicts(cases):
        span = scope.spans.add()
        span.trace_id = bytes.fromhex(spans.trace_id)
        span.span_id = secrets.token_bytes(8)
        span.parent_span_id = bytes.fromhex(spans.parent_span_id)
        span.name = f"ragjudge evaluate {name}"
        span.start_time_unix_nano = span.end_time_unix_nano = now
        span.attributes.extend([kv("ragjudge.case.id", name), kv("ragjudge.run.id", run_id)])
        event = span.events.add(name=EVENT, time_unix_nano=now)
        event.attributes.extend(
            [
                kv("gen_ai.evaluation.name", CASE_VERDICT),
                kv("gen_ai.evaluation.score.label", status),
                kv("gen_ai.evaluation.score.value", 1.0 if status == "pass" else 0.0),
                kv("gen_ai.evaluation.explanation", "; ".join(failed)[:MAX_EXPLANATION_CHARS] or status),
            ]
        )
        for metric, value in metrics.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                event = span.events.add(name=EVENT, time_unix_nano=now)
                event.attributes.extend(
                    [kv("gen_ai.evaluation.name", metric), kv("gen_ai.evaluation.score.value", float(value))]
                )
        if len(scope.spans) >= MAX_SPANS_A_REQUEST:
            bodies.append(request.SerializeToString())
            request = ExportTraceServiceRequest()
            scope = _scope(request, kv, run_id)
    if len(scope.spans):
        bodies.append(request.SerializeToString())
    return bodies


def _scope(request: Any, kv: Any, run_id: str) -> Any:
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend([kv("service.name", "ragjudge")])
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "ragjudge"
    return scope_spans


def export_verdicts(cases: Iterable[CaseBlock], url: str) -> list[str]:
    """Post every traced case's verdicts; the run's warnings (none when every request was taken)."""
    target = traces_url(url)
    bodies = request_body(cases, secrets.token_hex(8))
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(total=TIMEOUT_S))
    for body in bodies:
        try:
            reply = http.request(
                "POST", target, body=body, headers={"Content-Type": "application/x-protobuf"}, redirect=False
            )
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            return [f"traces.export: the verdicts were not sent to {urls.public_url(target)}: {type(exc).__name__}"]
        if reply.status >= 300:
            return [
                f"traces.export: {urls.public_url(target)} answered HTTP {reply.status}: the verdicts were not taken"
            ]
    return []
