"""A real Pydantic AI agent served over AG-UI (`AGUIAdapter.dispatch_request` in a Starlette route, under uvicorn),
its model a `FunctionModel` (no network): a customer-service assistant with a retrieval tool (`search_docs`, over a
small English and Chinese corpus), an order-lookup tool and a refund tool.

`RAGJUDGE_AGENT_MODE` picks the service: `healthy`; `failing` (the model raises: AG-UI's `RUN_ERROR`); `refunder`
(it also starts a refund when asked about refunds); `wrong-order` (it looks up the wrong order).

Traced, as a team turns it on: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, the real OpenTelemetry SDK exports its spans
there and `Agent.instrument_all()` turns Pydantic AI's instrumentation on (GenAI conventions: `execute_tool` spans
with their arguments and results, `gen_ai.conversation.id` = AG-UI's threadId); with `RAGJUDGE_AGENT_ASGI_TRACING=1`
too, the app is wrapped in `opentelemetry-instrumentation-asgi`'s middleware, the one line that makes it continue an
incoming `traceparent` (without it each request starts a trace of its own). `POST /ask` (`{"question": ...}` ->
`{"answer": ...}`) is the same agent on a plain route that shows no tool calls.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterable, AsyncIterator

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

MODE = os.environ.get("RAGJUDGE_AGENT_MODE", "healthy")

CORPUS = [
    {"id": "refund-policy", "text": "Refunds are issued within 14 days of the return reaching our warehouse."},
    {"id": "refund-policy-2019", "text": "Archived 2019 policy: refunds were issued within 30 days."},
    {"id": "shipping-times", "text": "Express shipping takes 2 business days; standard shipping takes 5."},
    {"id": "paypal", "text": "We accept PayPal, Visa and Mastercard."},
    {"id": "退款政策", "text": "退款在退货到达仓库后14天内办理。"},
    {"id": "运费", "text": "快递配送需要2个工作日，标准配送需要5个工作日。"},
]
ORDERS = {"A123": "shipped on 3 March, arriving 5 March", "A124": "cancelled"}
OUT_OF_SCOPE = ("penguin", "stock", "股市", "火星")
DECLINE = {
    "en": "I'm sorry, I can't help with that: it is outside the scope of our shop.",
    "zh": "抱歉，无法回答与本店无关的问题。",
}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2} | set(re.findall(r"[\u4e00-\u9fff]", text))


def search(query: str) -> list[dict[str, str]]:
    wanted = _words(query)
    scored = [(len(wanted & _words(d["text"] + " " + d["id"])), d) for d in CORPUS]
    return [d for score, d in sorted(scored, key=lambda x: -x[0]) if score > 0][:2]


def _question(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _plan(question: str, earlier: str) -> list[tuple[str, dict[str, str]]]:
    """The tool calls the model makes for a question (the conversation so far may name the order)."""
    order = re.search(r"\b([A-Z]\d{3})\b", question) or re.search(r"\b([A-Z]\d{3})\b", earlier)
    calls: list[tuple[str, dict[str, str]]] = []
    if order and ("order" in question.lower() or "it" in question.lower().split()):
        order_id = "A124" if MODE == "wrong-order" else order.group(1)
        calls.append(("lookup_order", {"order_id": order_id}))
    elif not any(word in question.lower() for word in OUT_OF_SCOPE):
        calls.append(("search_docs", {"query": question}))
        if MODE == "refunder" and "refund" in question.lower():
            calls.append(("issue_refund", {"order_id": "A123"}))
    return calls


async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    if MODE == "failing":
        raise RuntimeError("upstream LLM unavailable")
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    question = _question(messages)
    zh = bool(re.search(r"[\u4e00-\u9fff]", question))
    if not returns:
        earlier = " ".join(_question(messages[:i]) for i in range(1, len(messages)))
        calls = _plan(question, earlier)
        if not calls:
            yield DECLINE["zh" if zh else "en"]
            return
        for i, (name, args) in enumerate(calls):
            yield {i: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=f"call-{i}")}
        return
    pieces: list[str] = []
    for part in returns:
        content = part.content
        if part.tool_name == "search_docs" and isinstance(content, list) and content:
            pieces.append(str(content[0]["text"]))
        elif part.tool_name == "lookup_order":
            pieces.append(f"Order {content}.")
    answer = " ".join(pieces) or DECLINE["zh" if zh else "en"]
    for word in re.findall(r"\S+\s*", answer) or [answer]:
        yield word


agent = Agent(FunctionModel(stream_function=model), instructions="You are the shop's customer-service assistant.")


@agent.tool_plain
def search_docs(query: str) -> list[dict[str, str]]:
    """Search the shop's help articles."""
    return search(query)


@agent.tool_plain
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return f"{order_id}: {ORDERS.get(order_id, 'not found')}"


@agent.tool_plain
def issue_refund(order_id: str) -> str:
    """Start a refund for an order."""
    return f"refund started for {order_id}"


async def run_agent(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent)


async def _drain(_: object, events: AsyncIterable[object]) -> None:
    async for _event in events:
        pass


async def ask(request: Request) -> Response:
    body = await request.json()
    # The model streams only: a handler of the run's events makes `run` stream too.
    result = await agent.run(str(body.get("question", "")), event_stream_handler=_drain)
    return JSONResponse({"answer": result.output})


app: ASGIApp = Starlette(routes=[Route("/agent", run_agent, methods=["POST"]), Route("/ask", ask, methods=["POST"])])

if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # endpoint and delay from OTEL_* env
    trace.set_tracer_provider(provider)
    Agent.instrument_all()
    if os.environ.get("RAGJUDGE_AGENT_ASGI_TRACING") == "1":
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

        app = OpenTelemetryMiddleware(app)  # the one line: the agent's spans continue the caller's trace
