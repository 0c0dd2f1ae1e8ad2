"""Wiring that reads but does not tell the truth: a stream of a known protocol read without it, and a
conversation whose turns reach the service without the conversation before them. One warning each, shared by
`run` and `probe`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jinja2 import Environment, TemplateSyntaxError, meta

from ragjudge.cases.case import Case
from ragjudge.config.endpoint_config import EndpointConfig
from ragjudge.endpoint.protocols import declared
from ragjudge.endpoint.trace import Trace

HISTORY_VARIABLES = ("messages", "history", "ui_messages", "conversation_id")
"""What a request template uses to carry a conversation: its turns, or the id a stateful service issued."""


def _names(template: str) -> set[str]:
    try:
        return set(meta.find_undeclared_variables(Environment().parse(template)))
    except TemplateSyntaxError:
        return set()  # named as exit 2 by the client, which compiles it for real


def carries_history(endpoint: EndpointConfig) -> bool:
    """Whether a request can carry the conversation: its body or URL template uses one of HISTORY_VARIABLES."""
    used = _names(endpoint.body) | _names(endpoint.url or "")
    return any(name in used for name in HISTORY_VARIABLES)


def history_warning(cases: Sequence[Case], endpoint: EndpointConfig) -> str | None:
    """The warning for conversations sent without their history; None when there are none, or it is carried."""
    talks = [c.id for c in cases if c.turns]
    if not talks or carries_history(endpoint):
        return None
    shown = ", ".join(repr(c) for c in talks[:5]) + (f" and {len(talks) - 5} more" if len(talks) > 5 else "")
    return (
        f"{len(talks)} conversation case{'s' if len(talks) != 1 else ''} ({shown}) but endpoint.body and "
        "endpoint.url use none of `messages`, `history`, `ui_messages`, `conversation_id`: every turn reaches the "
        "service without the conversation before it, so a later turn fails as if the service forgot; send "
        "`messages` (or `history`) in endpoint.body, or the `conversation_id` your service issues "
        "(endpoint.response.conversation_id)"
    )


def no_end_warning(endpoint: EndpointConfig) -> str | None:
    """The warning for a declared protocol with no end: its streams end when the connection closes, so a stream
    cut mid-way reads as a whole, shorter answer (or an empty one, a decline). None when an end is declared."""
    protocol = declared(endpoint.protocol)
    if protocol is None or protocol.ends:
        return None
    return (
        "endpoint.protocol declares no end: without one a stream cut before it finished cannot be told from a "
        "whole one, and reads as a shorter answer (or an empty one, a decline); declare `end:`, the event your "
        "stream ends with (`ragjudge probe` proposes one from the events it sees)"
    )


def end_marker(last: tuple[str, Any, str] | None) -> str:
    """The `end:` marker probe proposes from the last event a stream sent (name, JSON or None, data text)."""
    if last is None:
        return "end: {event: <the event your stream ends with>}"
    name, data, raw = last
    if raw.strip() == "[DONE]":
        return 'end: {data: "[DONE]"}'
    if name:
        return f"end: {{event: {name}}}"
    if isinstance(data, dict) and isinstance(data.get("type"), str) and data["type"]:
        return f"end: {{where: {{type: {data['type']}}}}}"
    return "end: {event: <the event your stream ends with>}"


def undeclared_protocol_warning(replies: Sequence[tuple[str, Trace | None]]) -> list[str]:
    """The run's one warning about streams read without their protocol, naming the preset that reads them."""
    looks: dict[str, list[str]] = {}
    suggestion: dict[str, str | None] = {}
    streamed = 0
    for case_id, trace in replies:
        if trace is None or trace.stream is None:
            continue
        streamed += 1
        if trace.stream.looks_like:
            looks.setdefault(trace.stream.looks_like, []).append(case_id)
            suggestion[trace.stream.looks_like] = trace.stream.suggestion
    out = []
    for label, ids in looks.items():
        name = suggestion[label]
        fix = (
            f"set endpoint.preset: {name} (or endpoint.protocol: {name} to keep your body)"
            if name
            else "declare endpoint.protocol (its text, end and error events: docs/streams.md, Stream protocols)"
        )
        out.append(
            f"endpoint.protocol is not declared and {len(ids)} of {streamed} streamed replies look like {label}: "
            f"they were read without it, so a stream cut before its end or a failure it reports its own way can "
            f"read as an answer; {fix}"
        )
    return out
