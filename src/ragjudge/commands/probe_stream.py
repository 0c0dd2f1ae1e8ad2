"""`ragjudge probe` on streams: what protocol the events are read by, what they look like, and the wiring that
reads them right (a preset, or a declared protocol), suggested before any mapping key.

The same recognition (`endpoint.protocols.recognise`) gives a run its warning; here it is the first thing said.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from ragjudge import masking
from ragjudge.config.endpoint_config import DEFAULT_BODY
from ragjudge.config.presets import PRESETS
from ragjudge.endpoint.protocols import BUILTIN
from ragjudge.endpoint.recognition import Recognised, recognise
from ragjudge.endpoint.wiring import end_marker, no_end_warning

if TYPE_CHECKING:
    from ragjudge.config.endpoint_config import EndpointConfig
    from ragjudge.endpoint.result import RawReply
    from ragjudge.endpoint.stream import Assembly


def wiring(name: str, endpoint: EndpointConfig) -> list[str]:
    """The config lines that read a built-in protocol: its preset (with the model it sends), or, where the team
    wrote its own body, the protocol alone, keeping that body."""
    if endpoint.body != DEFAULT_BODY:
        return [f"protocol: {name}"]
    return [f"preset: {name}", *_model_line(name, endpoint)]


def _model_line(name: str, endpoint: EndpointConfig) -> list[str]:
    """The `model:` line a preset that sends `endpoint.model` needs, when none is set."""
    if PRESETS[name].needs_model and not endpoint.model:
        return ["model: <the model; for hayhooks, the pipeline's name>"]
    return []


def declared_skeleton(seen: list[tuple[str, Any]], looks: Recognised) -> list[str]:
    """A `protocol:` block for named events no built-in protocol uses: the event whose JSON first carries text is
    the text, the last event seen is the end."""
    text_event, text_path = None, None
    for name, data in seen:
        if name and isinstance(data, dict):
            path = next((k for k, v in data.items() if isinstance(v, str) and v), None)
            if path is not None:
                text_event, text_path = name, path
                break
    lines = ["protocol:"]
    if text_event:
        lines.append(f"  text: {{event: {text_event}, path: {text_path}}}")
    else:
        lines.append("  text: {event: <the event carrying answer text>, path: <where the text is in it>}")
    lines.append(f"  end: {{event: {looks.events[-1]}}}")
    lines.append("  error: {event: error}")
    return lines


def show_stream(
    out: TextIO, raw: RawReply, assembly: Assembly, ttft_ms: float | None, endpoint: EndpointConfig
) -> str | None:
    """How the stream was read, its TTFT, and for an undeclared protocol what it looks like with the wiring that
    reads it. Returns the warning the result carries (None when the stream was read by its declared protocol)."""
    protocol = assembly.protocol
    if protocol.generic:
        read = (
            f"the mapped answer_delta ({endpoint.response.answer_delta})"
            if endpoint.response.answer_delta
            else "no answer_delta mapped: each event's answer, or a text stream's data"
        )
        shown = f"none declared: {read}, ending at the close"
    else:
        shown = protocol.name
    print(f"\nstream: {assembly.events} events, read by protocol {shown}", file=out)
    if ttft_ms is not None:
        print(f"  time to the first token: {ttft_ms:.0f} ms", file=out)
    else:
        print("  time to the first token: none (no event carried answer text)", file=out)
    if assembly.finish_reason:
        print(f"  finish reason: {assembly.finish_reason}", file=out)
    if assembly.reasoning:
        print(
            f"  reasoning: {sum(len(r) for r in assembly.reasoning)} characters, kept apart from the answer", file=out
        )
    calls = assembly.tools.calls()
    if calls:
        print(f"  tool calls: {len(calls)} (never part of the answer)", file=out)
        for i, call in enumerate(calls[:20], 1):
            args = json.dumps(call["arguments"], ensure_ascii=False)[:200]
            said = ""
            if "result" in call:
                said = " -> " + json.dumps(call["result"], ensure_ascii=False)[:120]
            print(masking.mask(f"    {i}. {call['name'] or '(unnamed)'} {args}{said}"), file=out)
    if not protocol.generic:
        endless = no_end_warning(endpoint)
        if endless is None:
            return None
        print(f"\nwarning: {endless}", file=out)
        print("suggested: add under `endpoint.protocol:` (the last event this stream sent), then probe again", file=out)
        print(f"  {end_marker(assembly.last)}", file=out)
        return "the declared protocol has no end"
    looks = recognise(assembly.seen, raw.stream_header)
    if looks is None:
        return None
    print(
        f"\nthe events look like {looks.label}, but endpoint.protocol is not declared: read without it, a failure "
        "the stream reports its own way, or a cut before its end, would read as an answer",
        file=out,
    )
    known = looks.name in BUILTIN
    lines = wiring(looks.name, endpoint) if known else declared_skeleton(assembly.seen, looks)
    print("suggested first: paste under `endpoint:` in your config, then probe again", file=out)
    for line in lines:
        print(f"  {line}", file=out)
    return f"the stream's protocol is not declared ({lines[0]} reads it)"


_ROUTES = {
    "openai-chat": "an OpenAI-compatible chat completions",
    "openai-responses": "an OpenAI Responses API",
    "ai-sdk": "an AI SDK chat",
    "ag-ui": "an AG-UI agent",
}


def http_error_hints(url: str, raw: RawReply, endpoint: EndpointConfig) -> list[str]:
    """For a 4xx/5xx from a route whose path names a well-known API: the preset that speaks it, before any
    field-by-field hint (which would lead to a second error)."""
    path = urlsplit(url).path.rstrip("/")
    said = raw.body[:4000].decode("utf-8", errors="replace").lower()
    name = None
    if path.endswith("/chat/completions"):
        name = "openai-chat"
    elif path.endswith("/responses"):
        name = "openai-responses"
    elif path.endswith("/api/chat") or ("messages" in said and "parts" in said):
        name = "ai-sdk"
    elif "threadid" in said and "runid" in said:  # AG-UI's run input refused: its required fields named
        name = "ag-ui"
    if name is None or endpoint.preset == name or endpoint.protocol == name:
        return []
    # The request itself failed: the preset's body is the fix, whoever wrote the body that failed.
    lines = [f"preset: {name}", *_model_line(name, endpoint)]
    return [
        f"{path or '/'} looks like {_ROUTES[name]} route: set "
        + ", ".join(f"`{line}`" for line in lines)
        + " under endpoint: (it sends the body that API takes and reads its stream)"
    ]
