"""The failure shapes every stream reader recognises, whatever protocol was declared: the gate's, not the
declaration's.

A protocol's own `error` markers name its failures in its own words (`the stream sent an error part: ...`);
these come after them and catch how every other family fails. Teams ship streams that are not exactly one
protocol, and gateways and proxies fail in their own shape in front of any of them: under a preset, another
family's failure sent before the preset's end read as an empty answer, a decline, and out-of-scope cases passed
during an outage. A stream that uses one of these shapes for something that is not a failure turns it off by
name (`endpoint.ignore_failure_shapes`), which also turns off a built-in protocol's marker of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from ragjudge.config.protocol import FailureShapeName, Scalar
from ragjudge.endpoint.protocols import Selector


@dataclass(frozen=True)
class FailureShape:
    """One common failure shape."""

    name: str
    """Its name in `endpoint.ignore_failure_shapes`."""
    what: str
    """What it is, for the docs' table."""
    markers: tuple[Selector, ...]
    """The events it picks, and where their message is."""


def _m(
    name: str,
    reason: str,
    *,
    event: str | None = None,
    where: dict[str, Scalar] | None = None,
    has: str | None = None,
    path: str | None = None,
) -> Selector:
    return Selector(event=event, where=tuple((where or {}).items()), has=has, path=path, reason=reason, shape=name)


_FINISHED = 'the stream finished with finish reason "error"'

SHAPES: tuple[FailureShape, ...] = (
    FailureShape(
        "error-event",
        "an SSE event named `error` (`event: error`), its data the message",
        (_m("error-event", "the stream sent an error event", event="error"),),
    ),
    FailureShape(
        "error-object",
        'a JSON event whose top level has a non-empty `error`, an object or a string (`{"error": {"message": '
        '...}}`, `{"error": "model overloaded"}`): how gateways, proxies and Ollama-style services fail mid-stream',
        (_m("error-object", "the stream sent an error event", has="error", path="error"),),
    ),
    FailureShape(
        "type-error",
        '`{"type": "error"}` (the AI SDK\'s error part, the Responses API\'s and Anthropic\'s error event)',
        (_m("type-error", "the stream sent an error event", where={"type": "error"}),),
    ),
    FailureShape(
        "run-error",
        "AG-UI's `RUN_ERROR`, its `message`",
        (_m("run-error", "the run failed", where={"type": "RUN_ERROR"}, path="message"),),
    ),
    FailureShape(
        "response-failed",
        "the Responses API's `response.failed`, its `response.error.message`",
        (
            _m(
                "response-failed",
                "the response failed",
                where={"type": "response.failed"},
                path="response.error.message",
            ),
        ),
    ),
    FailureShape(
        "finish-reason-error",
        'a `finish_reason` or `finishReason` of `"error"` (a chat chunk\'s `choices.0.finish_reason`, or at the top)',
        (
            _m("finish-reason-error", _FINISHED, where={"choices.0.finish_reason": "error"}),
            _m("finish-reason-error", _FINISHED, where={"finishReason": "error"}),
            _m("finish-reason-error", _FINISHED, where={"finish_reason": "error"}),
        ),
    ),
)
"""The common failure shapes, in the order they are tried (after the protocol's own markers)."""

assert tuple(shape.name for shape in SHAPES) == get_args(FailureShapeName)
assert all(m.shape == shape.name for shape in SHAPES for m in shape.markers)


def markers(protocol_errors: tuple[Selector, ...], ignored: frozenset[str] = frozenset()) -> tuple[Selector, ...]:
    """A protocol's failure markers, then the common ones, less every marker of a shape turned off by name."""
    common = tuple(marker for shape in SHAPES for marker in shape.markers)
    return tuple(m for m in (*protocol_errors, *common) if m.shape is None or m.shape not in ignored)
