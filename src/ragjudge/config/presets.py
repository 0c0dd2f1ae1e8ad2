"""`endpoint.preset`: the body and response mapping of a well-known API, filled in before validation.

A preset only supplies what the team did not write: a given `body` wins, and so does every `response:`
key given (where the service puts its references, say). So what a preset wires is the ordinary config,
read, checked and reported as if the team had written it out.
"""

from __future__ import annotations

from typing import Any

OPENAI_CHAT_BODY = '{"model": {{ model | tojson }}, "messages": {{ messages | tojson }}, "stream": true}'

PRESETS: dict[str, tuple[str, dict[str, str]]] = {
    # OpenAI-compatible chat completions (gateways, hayhooks' chat route, vLLM, ...). Streamed: the deltas;
    # a service that answers with one JSON body anyway: its message.
    "openai-chat": (
        OPENAI_CHAT_BODY,
        {"answer": "choices.0.message.content", "answer_delta": "choices.0.delta.content"},
    ),
    # LangServe's `/stream` route of a chain returning {"context": [Document, ...], "answer": "..."}.
    "langserve": (
        '{"input": {"question": {{ question | tojson }}}}',
        {
            "answer_delta": "answer",
            "retrieved": "context",
            "retrieved_id": "metadata.source",
            "retrieved_text": "page_content",
        },
    ),
}
"""Per preset: the body template and the `response:` paths it supplies."""

NEEDS_MODEL = frozenset({"openai-chat"})


def apply(data: Any) -> Any:
    """The raw `endpoint:` mapping with its preset's body and response keys added where the team gave none.

    Anything unexpected (no preset, an unknown one, a `response` that is not a mapping) is left as it is, for
    the model's validation to name."""
    if not isinstance(data, dict) or data.get("preset") not in PRESETS:
        return data
    name = data["preset"]
    body, response = PRESETS[name]
    given = data.get("response")
    if given is not None and not isinstance(given, dict):
        return data
    out = dict(data)
    if out.get("body") is None:
        if name in NEEDS_MODEL and not out.get("model"):
            raise ValueError(
                f"preset {name} sends endpoint.model as the request's model: set endpoint.model (the model, or "
                "the pipeline's name for hayhooks), or give your own endpoint.body"
            )
        out["body"] = body
    out["response"] = {**response, **(given or {})}
    return out
