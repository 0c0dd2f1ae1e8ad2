"""A loopback RAG service that answers with the answer alone and says what it did only in its OpenTelemetry
trace, exported by the real SDK's OTLP/HTTP exporter (protobuf, optionally gzipped) to ragjudge's receiver.

It continues the `traceparent` it is sent (the W3C propagator), as an instrumented framework does, under a server
span; inside it, a retrieval span in the GenAI conventions (`gen_ai.retrieval.documents`), a tool call
(`execute_tool`) and a model span with its token usage and time to first chunk. Spans go out through a
`BatchSpanProcessor` a little after the reply, as a real service's do.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from tests.fakes.responder_server import Exchange, ResponderServer


@dataclass(frozen=True)
class Doc:
    id: str
    text: str


@dataclass(frozen=True)
class Answer:
    answer: str
    docs: Sequence[Doc]
    reply_docs: Sequence[Doc] = ()
    """Passages the reply itself shows (most services show none)."""


class TracedRag:
    """The responder: `ResponderServer(TracedRag(answers, otlp_url))`; `shutdown()` flushes and stops the SDK."""

    def __init__(
        self,
        answers: Mapping[str, Answer],
        otlp_url: str | None,
        *,
        gzip: bool = False,
        continues: bool = True,
        delay_s: float = 0.0,
        batch_delay_ms: int = 100,
    ) -> None:
        """`continues`: False for a framework that starts a new trace per request, ignoring `traceparent` (it
        still records the request's `thread_id`, when sent, as `gen_ai.conversation.id`, as Pydantic AI does
        with an AG-UI `threadId`)."""
        self.answers = dict(answers)
        self.continues = continues
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        """The most requests it was answering at once."""
        self.provider = TracerProvider(resource=Resource.create({"service.name": "traced-rag"}))
        if otlp_url is not None:
            exporter = OTLPSpanExporter(
                endpoint=f"{otlp_url}/v1/traces", compression=Compression.Gzip if gzip else Compression.NoCompression
            )
            self.provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=batch_delay_ms))
        self.tracer = self.provider.get_tracer("tests.traced_rag")

    def __call__(self, ex: Exchange) -> None:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(self.delay_s)
            self._answer(ex)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, ex: Exchange) -> None:
        sent = ex.request.json()
        question = sent["question"]
        found = self.answers[question]
        context = TraceContextTextMapPropagator().extract(ex.request.headers) if self.continues else None
        conversation = {"gen_ai.conversation.id": sent["thread_id"]} if "thread_id" in sent else {}
        with self.tracer.start_as_current_span(
            "POST /ask", context=context, kind=SpanKind.SERVER, attributes=conversation
        ):
            documents = [{"id": d.id, "content": d.text, "score": 0.9} for d in found.docs]
            with self.tracer.start_as_current_span(
                "retrieval",
                attributes={"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": json.dumps(documents)},
            ):
                pass
            with self.tracer.start_as_current_span(
                "execute_tool policy_lookup",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "policy_lookup",
                    "gen_ai.tool.call.arguments": json.dumps(
                        {"topic": question, "api_key": "sk-test-abcdefghijklmnop"}
                    ),
                    "gen_ai.tool.call.result": json.dumps({"found": len(found.docs)}),
                },
            ):
                pass
            with self.tracer.start_as_current_span(
                "chat model-x",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.usage.input_tokens": 120,
                    "gen_ai.usage.output_tokens": 30,
                    "gen_ai.response.time_to_first_chunk": 0.05,
                },
            ):
                pass
        reply: dict[str, object] = {"answer": found.answer}
        if found.reply_docs:
            reply["retrieved"] = [{"id": d.id, "text": d.text} for d in found.reply_docs]
        ex.json(reply)

    def shutdown(self) -> None:
        self.provider.shutdown()


def traced_server(
    answers: Mapping[str, Answer], otlp_url: str | None, **options: Any
) -> tuple[ResponderServer, TracedRag]:
    service = TracedRag(answers, otlp_url, **options)
    return ResponderServer(service), service
