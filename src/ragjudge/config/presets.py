"""`endpoint.preset`: the body and response mapping of a well-known API, filled in before validation.

A preset only supplies what the team did not write: a given `body` wins, and so does every `response:`
key given (where the service puts its references, say). So what a preset wires is the ordinary config,
read, checked and reported as if the team had written it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OPENAI_CHAT_BODY = '{"model": {{ model | tojson }}, "messages": {{ messages | tojson }}, "stream": true}'
OPENAI_RESPONSES_BODY = '{"model": {{ model | tojson }}, "input": {{ messages | tojson }}, "stream": true}'
AI_SDK_BODY = (
    '{"id": {{ (conversation_id or case.id) | tojson }}, "messages": {{ ui_messages | tojson }}, '
    '"trigger": "submit-message"}'
)

AG_UI_BODY = (
    '{"threadId": {{ (conversation_id or case.id) | tojson }}, "runId": {{ (case.id ~ "-run-" ~ turn) | tojson }}, '
    '"state": {}, "messages": [{% for m in messages %}{"id": {{ (case.id ~ "-" ~ loop.index) | tojson }}, '
    '"role": {{ m.role | tojson }}, "content": {{ m.content | tojson }}}{{ "" if loop.last else ", " }}'
    '{% endfor %}], "tools": [], "context": [], "forwardedProps": {}}'
)
"""AG-UI's run input (`RunAgentInput`): the thread, the run, and the conversation as its messages."""


@dataclass(frozen=True)
class Preset:
    body: str
    """The request body template (a given `endpoint.body` wins)."""
    response: dict[str, str] = field(default_factory=dict)
    """The `response:` paths it supplies (each given key wins)."""
    needs_model: bool = False
    """The body sends `endpoint.model`."""


PRESETS: dict[str, Preset] = {
    # OpenAI-compatible chat completions (gateways, hayhooks' chat route, vLLM, ...). Streamed: the protocol reads
    # the deltas; a service that answers with one JSON body anyway: its message.
    "openai-chat": Preset(
        OPENAI_CHAT_BODY,
        {"answer": "choices.0.message.content", "tool_calls": "choices.0.message.tool_calls"},
        needs_model=True,
    ),
    # The Responses API (`POST /v1/responses`); one JSON body is read by the protocol too.
    "openai-responses": Preset(OPENAI_RESPONSES_BODY, needs_model=True),
    # An AI SDK route (`streamText(...).toUIMessageStreamResponse()`): the conversation as UIMessages.
    "ai-sdk": Preset(AI_SDK_BODY),
    # LangServe's `/stream` route of a chain returning {"context": [Document, ...], "answer": "..."}.
    "langserve": Preset(
        '{"input": {"question": {{ question | tojson }}}}',
        {"retrieved": "context", "retrieved_id": "metadata.source", "retrieved_text": "page_content"},
    ),
    # An AG-UI agent endpoint (Pydantic AI's `handle_ag_ui_request`, LangGraph, CrewAI, ADK, ...).
    "ag-ui": Preset(AG_UI_BODY),
}
"""Per preset: the body template and the `response:` paths it supplies; each also declares the stream protocol
of its name (`endpoint.protocol`), unless one is given."""


def apply(data: Any) -> Any:
    """The raw `endpoint:` mapping with its preset's body and response keys added where the team gave none.

    Anything unexpected (no preset, an unknown one, a `response` that is not a mapping) is left as it is, for
    the model's validation to name."""
    if not isinstance(data, dict) or data.get("preset") not in PRESETS:
        return data
    name = data["preset"]
    preset = PRESETS[name]
    given = data.get("response")
    if given is not None and not isinstance(given, dict):
        return data
    out = dict(data)
    if out.get("body") is None:
        if preset.needs_model and not out.get("model"):
            raise ValueError(
                f"preset {name} sends endpoint.model as the request's model: set endpoint.model (the model, or "
                "the pipeline's name for hayhooks), or give your own endpoint.body"
            )
        out["body"] = preset.body
    out["response"] = {**preset.response, **(given or {})}
    if out.get("protocol") is None:
        out["protocol"] = name
    return out
