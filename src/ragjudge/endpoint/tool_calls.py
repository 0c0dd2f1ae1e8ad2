"""Tool calls, read from a stream as they come (`Collector`, fed by the protocol's `tools` selectors) or from one
reply object (`read`): each a name, its arguments (their JSON assembled from pieces), its result where the reply
carried it, and its position. Never answer text.

Bounded: at most `MAX_CALLS` calls, each's argument text up to `MAX_ARGS_CHARS`, a result up to
`MAX_RESULT_CHARS` of JSON (past it, the start of its text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ragjudge.config.endpoint_config import ResponseMapping
from ragjudge.endpoint.paths import MISSING, dig, is_missing
from ragjudge.endpoint.trace import ToolCall

MAX_CALLS = 100
MAX_ARGS_CHARS = 20_000
MAX_RESULT_CHARS = 20_000
DEFAULT_KEYS = ("tool_calls", "toolCalls")
"""Where a reply's tool calls are when `endpoint.response.tool_calls` is not mapped."""
_NAME_KEYS = ("name", "function.name", "toolName", "tool_name", "tool")
_ARGS_KEYS = ("arguments", "args", "input", "function.arguments", "parameters")
_RESULT_KEYS = ("result", "output")


@dataclass
class _Call:
    id: str | None
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    size: int = 0
    value: Any = MISSING
    result: Any = MISSING


def _bounded_result(value: Any) -> Any:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)[:MAX_RESULT_CHARS]
    return value if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS]


def _arguments(call: _Call) -> Any:
    if not is_missing(call.value):
        return call.value
    if not call.pieces:
        return None
    text = "".join(call.pieces)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text  # as sent: a call cut mid-arguments still shows what it carried


def _decoded_result(value: Any) -> Any:
    """A result sent as JSON text (AG-UI's `content`) is read as the JSON it holds."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


class Collector:
    """The tool calls of one stream, gathered across its events."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}
        self.seen = False
        """An event carried a tool call."""

    def take(
        self, value: Any, id_path: str | None, name: str | None, args: str | None, result: str | None, whole: bool
    ) -> None:
        """One event's call or list of calls (`value`), read at the given paths inside each."""
        items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        for item in items:
            if not isinstance(item, dict):
                continue
            self.seen = True
            call = self._call(dig(item, id_path) if id_path else MISSING)
            if call is None:
                return
            found = dig(item, name) if name else MISSING
            if isinstance(found, str) and found:
                call.name = found[:200]
            found = dig(item, args) if args else MISSING
            if isinstance(found, str):
                if whole:
                    call.pieces, call.size = [found[:MAX_ARGS_CHARS]], min(len(found), MAX_ARGS_CHARS)
                elif call.size < MAX_ARGS_CHARS:
                    call.pieces.append(found[: MAX_ARGS_CHARS - call.size])
                    call.size += len(call.pieces[-1])
            elif isinstance(found, dict | list):
                call.value = found
            found = dig(item, result) if result else MISSING
            if not is_missing(found) and found is not None:
                call.result = _bounded_result(_decoded_result(found))

    def _call(self, key: Any) -> _Call | None:
        if isinstance(key, str | int) and not isinstance(key, bool):
            text = str(key)
            if text not in self._calls:
                if len(self._calls) >= MAX_CALLS:
                    return None
                self._calls[text] = _Call(text)
            return self._calls[text]
        if not self._calls:  # a call with no id: the one before it, or the first
            self._calls[""] = _Call(None)
        return list(self._calls.values())[-1]

    def calls(self) -> list[dict[str, Any]]:
        """The calls, in the order they began, as a reply object's `tool_calls` (read back by `read`)."""
        out = []
        for call in self._calls.values():
            entry: dict[str, Any] = {"name": call.name, "arguments": _arguments(call)}
            if call.id is not None:
                entry["id"] = call.id
            if not is_missing(call.result):
                entry["result"] = call.result
            out.append(entry)
        return out


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = dig(item, key)
        if not is_missing(value) and value is not None:
            return value
    return MISSING


def read(data: Any, mapping: ResponseMapping) -> tuple[ToolCall, ...] | None:
    """A reply object's tool calls (`response.tool_calls`, else `tool_calls` / `toolCalls`); None when the reply
    exposes none: unmapped and absent. Mapped and absent: the service called no tool."""
    if not isinstance(data, dict):
        return None
    if mapping.tool_calls:
        value = dig(data, mapping.tool_calls)
        if is_missing(value) or value is None:
            return ()
    else:
        value = next((data[k] for k in DEFAULT_KEYS if isinstance(data.get(k), list)), MISSING)
        if is_missing(value):
            return None
    if not isinstance(value, list):
        return ()
    calls: list[ToolCall] = []
    for item in value[:MAX_CALLS]:
        if not isinstance(item, dict):
            continue
        name = _first(item, _NAME_KEYS)
        args = _first(item, _ARGS_KEYS)
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else None
            except (json.JSONDecodeError, RecursionError):
                args = args[:MAX_ARGS_CHARS]
        result = _first(item, _RESULT_KEYS)
        call_id = item.get("id")
        calls.append(
            ToolCall(
                name=name[:200] if isinstance(name, str) else "",
                arguments=None if is_missing(args) else args,
                position=len(calls) + 1,
                result=None if is_missing(result) else _bounded_result(_decoded_result(result)),
                id=str(call_id) if isinstance(call_id, str | int) and not isinstance(call_id, bool) else None,
            )
        )
    return tuple(calls)


_PASSAGE_KEYS = ("retrieved", "sources", "contexts", "documents", "passages", "results")


def retrieval_passages(calls: list[dict[str, Any]], mapping: ResponseMapping) -> list[Any]:
    """The passages the retrieval tool's calls returned (`response.retrieval_tool`), in order: each result a list
    of passages, or an object holding them at `response.retrieved` or a usual key."""
    out: list[Any] = []
    for call in calls:
        if call.get("name") != mapping.retrieval_tool or "result" not in call:
            continue
        result = call["result"]
        if isinstance(result, dict):
            keys = (mapping.retrieved,) if mapping.retrieved else _PASSAGE_KEYS
            result = next((v for k in keys if isinstance(v := dig(result, k), list)), [result])
        if isinstance(result, list):
            out.extend(result)
    return out
