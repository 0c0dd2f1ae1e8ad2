"""A case's tool conditions checked against the tool calls its reply exposed: deterministic, before any judge, each
failure a condition in words. A reply that exposes no tool calls (`Trace.tool_calls` None) leaves them unknown:
never a pass, never a fail, and the run warns once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from ragjudge.cases.case import Case
from ragjudge.cases.tools import ToolConditions
from ragjudge.endpoint.trace import ToolCall, Trace

Held = Literal["held", "failed", "unknown"]


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _args_failure(tool: str, expected: tuple[tuple[str, Any], ...], calls: Sequence[ToolCall]) -> str | None:
    """None when one call of `tool` had every expected argument; else how the first call differs."""
    made = [c for c in calls if c.name == tool]
    if not made:
        return f"did not call {tool}"

    def differences(call: ToolCall) -> list[str]:
        given = call.arguments if isinstance(call.arguments, dict) else {}
        out = []
        for key, want in expected:
            if key not in given:
                out.append(f"{tool} called without {key}, expected {_shown(want)}")
            elif given[key] != want or type(given[key]) is not type(want):
                out.append(f"{tool} called with {key} {_shown(given[key])}, expected {_shown(want)}")
        return out

    found: list[list[str]] = [differences(c) for c in made]
    if any(not d for d in found):
        return None
    fewest = min(found, key=len)
    return "; ".join(fewest)


def tool_failures(conditions: ToolConditions, calls: Sequence[ToolCall]) -> list[str]:
    """Every tool condition the calls fail, one reason each (in words)."""
    names = [c.name for c in calls]
    made = set(names)
    listed = set(conditions.called)
    failures: list[str] = []
    # `order` is how the calls made match `called`: without a `called` list it says nothing.
    order = conditions.order if conditions.called else None
    if order in ("strict", "unordered", "superset"):
        failures += [f"did not call {tool}" for tool in dict.fromkeys(conditions.called) if tool not in made]
    if order in ("strict", "unordered", "subset"):
        extra = [tool for tool in dict.fromkeys(names) if tool not in listed and tool not in conditions.not_called]
        failures += [f"called {tool}, which `called` does not list (order: {order})" for tool in extra]
    if order == "strict" and not failures and names != list(conditions.called):
        failures.append(
            f"called {', '.join(names) or 'no tool'} in that order, expected {', '.join(conditions.called)} "
            "(order: strict)"
        )
    failures += [f"called {tool}, which this case forbids" for tool in conditions.not_called if tool in made]
    for tool, expected in conditions.args:
        failure = _args_failure(tool, expected, calls)
        if failure is not None and failure not in failures:
            failures.append(failure)
    return failures


def tool_state(case: Case, trace: Trace | None) -> Held | None:
    """Whether a case's tool conditions held: None when it has none, `unknown` when the reply exposed no calls."""
    if case.tools is None:
        return None
    if trace is None or trace.tool_calls is None:
        return "unknown"
    return "failed" if tool_failures(case.tools, trace.tool_calls) else "held"


def unknown_tools_warning(replies: Sequence[tuple[Case, Trace | None]]) -> list[str]:
    """The run's one warning about tool conditions the service's replies could not show."""
    unknown = [case.id for case, trace in replies if trace is not None and tool_state(case, trace) == "unknown"]
    if not unknown:
        return []
    shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
    return [
        f"{len(unknown)} case(s) have tool conditions but the service exposes no tool calls (cases {shown}): "
        "their tool conditions are unknown, neither passed nor failed; use a protocol that streams them "
        "(preset: ag-ui, ai-sdk, openai-chat, openai-responses) or map endpoint.response.tool_calls"
    ]
